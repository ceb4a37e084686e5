"""mcpkit's client answers a server's questions through its handlers on both eras.

On the 2025 wire a server asks with ``elicitation/create`` (and sampling, roots) while the call
waits; on 2026-07-28 the call returns an ``InputRequiredResult`` and the client answers its
input requests with the same :class:`ClientHandlers` and retries. The toolkit's asking server
(``tests/fixtures/servers/asking_server.py``, built with ``mcpkit.server.ask``) runs as a real
process over stdio and HTTP; sampling and roots input requests come from an SDK low-level
server in process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp.server.lowlevel import Server

from mcpkit.client import CallError, ClientHandlers, JsonRpcError, SessionOptions, connect
from tests.client.procs import free_port, start_command_on_port

pytestmark = pytest.mark.anyio

ASKING = [
    sys.executable,
    str(Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "asking_server.py"),
]
ERAS = ["2025-11-25", "2026-07-28"]


class User:
    """A user at the client: gives a name and an age, says yes to confirmations; remembers what was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        message = params["message"]
        self.asked.append(message)
        if "name" in message:
            return {"action": "accept", "content": {"name": "Ada"}}
        if "old" in message:
            return {"action": "accept", "content": {"age": 36}}
        return {"action": "accept", "content": {"confirm": True}}


@pytest.fixture(params=["stdio", "http", "stateless-http"])
def asking_server(request: pytest.FixtureRequest) -> Iterator[str | list[str]]:
    """The asking server's target: its command line (stdio) or the URL of a running one."""
    if request.param == "stdio":
        yield ASKING
        return
    port = free_port()
    extra = ["--stateless"] if request.param == "stateless-http" else []
    proc = start_command_on_port([*ASKING, "--http", str(port), *extra], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_tool_that_asks_is_answered_by_the_clients_handler(
    asking_server: str | list[str], protocol: str, request: pytest.FixtureRequest
) -> None:
    user = User()
    options = SessionOptions(
        protocol=protocol, handlers=ClientHandlers(elicitation=user.elicitation), timeout=30
    )
    stateless_2025 = protocol == "2025-11-25" and "stateless" in request.node.callspec.id
    async with connect(asking_server, options) as session:
        assert session.protocol_version == protocol and session.stateless == (protocol == "2026-07-28")
        survey = await session.call("survey")
        deleted = await session.call("delete_item", {"name": "a"})
    if stateless_2025:
        # A 2025 request on stateless HTTP has no way back to its client: the tool is told so.
        assert survey.text == "no name (unasked)" and deleted.text == "preview: would delete a"
        assert user.asked == []
        return
    assert survey.text == "Ada is 36"
    assert deleted.text == "deleted a; left: b"
    assert user.asked == [
        "Your name?",
        "How old are you, Ada?",
        "Allow delete_item? It cannot be undone.\n\npreview: would delete a",
    ]


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_client_without_an_elicitation_handler_is_not_asked_and_keeps_the_confirm_flag(
    protocol: str,
) -> None:
    async with connect(ASKING, SessionOptions(protocol=protocol, timeout=30)) as session:
        assert (await session.call("survey")).text == "no name (unasked)"
        assert (await session.call("delete_item", {"name": "a"})).text == "preview: would delete a"
        done = await session.call("delete_item", {"name": "a", "confirm": True})
        refused = await session.call("must_ask", raise_on_error=False)
    assert done.text == "deleted a; left: b"
    assert refused.is_error and "\n" not in refused.text
    assert refused.text.startswith("Tool must_ask needs to ask the user, and this client cannot ask")


def questioning_server(rounds: list[dict[str, Any]], *, endless: bool = False) -> Server[Any]:
    """An SDK server whose tool asks for a sampled message and the client's roots in one round,
    and reports what came back (``rounds`` records each retry's answers)."""

    async def call(ctx: Any, params: mcp_types.CallToolRequestParams) -> Any:
        answers = params.input_responses or {}
        rounds.append({k: v.model_dump(by_alias=True, exclude_none=True) for k, v in answers.items()})
        if endless or not answers:
            sample = mcp_types.CreateMessageRequest(
                params=mcp_types.CreateMessageRequestParams(
                    messages=[
                        mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(text="Say hi"))
                    ],
                    max_tokens=10,
                )
            )
            return mcp_types.InputRequiredResult(
                input_requests={"sample": sample, "roots": mcp_types.ListRootsRequest()}, request_state="s1"
            )
        said = answers["sample"]
        roots = answers["roots"]
        assert isinstance(said, mcp_types.CreateMessageResult) and isinstance(
            roots, mcp_types.ListRootsResult
        )
        text = getattr(said.content, "text", "?")
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=f"{text} from {[str(r.uri) for r in roots.roots]}")]
        )

    async def listing(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(
            tools=[mcp_types.Tool(name="question", input_schema={"type": "object"})]
        )

    return Server("questions", on_call_tool=call, on_list_tools=listing)


async def sampling(params: dict[str, Any]) -> dict[str, Any]:
    assert params["messages"][0]["content"]["text"] == "Say hi"
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test-model"}


async def test_sampling_and_roots_input_requests_go_through_the_same_handlers(tmp_path: Path) -> None:
    rounds: list[dict[str, Any]] = []
    handlers = ClientHandlers(sampling=sampling, roots=[tmp_path])
    async with connect(
        questioning_server(rounds), SessionOptions(protocol="2026-07-28", handlers=handlers)
    ) as session:
        outcome = await session.call("question")
    assert outcome.text == f"hi from {[tmp_path.as_uri()]}"
    assert rounds[0] == {} and set(rounds[1]) == {"sample", "roots"}


async def test_request_hands_an_input_required_result_back_as_it_came_for_a_relay() -> None:
    async with connect(questioning_server([]), SessionOptions(protocol="2026-07-28")) as session:
        raw = await session.request("tools/call", {"name": "question", "arguments": {}})
    assert raw["resultType"] == "input_required" and set(raw["inputRequests"]) == {"sample", "roots"}
    assert raw["requestState"] == "s1"


async def test_a_refused_input_request_ends_the_call_with_the_handlers_word() -> None:
    """Without a sampling handler the client declares no sampling on 2026; a server that asks
    anyway gets the handler's refusal, and the caller the same code and message."""
    async with connect(questioning_server([]), SessionOptions(protocol="2026-07-28")) as session:
        with pytest.raises(JsonRpcError) as refused:
            await session.call("question")
    assert refused.value.code == mcp_types.INVALID_REQUEST
    assert "no sampling handler installed" in refused.value.message


async def test_a_server_that_never_stops_asking_is_given_up_on_in_one_line(tmp_path: Path) -> None:
    rounds: list[dict[str, Any]] = []
    handlers = ClientHandlers(sampling=sampling, roots=[tmp_path])
    async with connect(
        questioning_server(rounds, endless=True), SessionOptions(protocol="2026-07-28", handlers=handlers)
    ) as session:
        with pytest.raises(CallError) as gave_up:
            await session.call("question")
    assert "still asked for input after 10 rounds" in str(gave_up.value)
    assert len(rounds) == 11  # the first call and ten answered retries


async def test_a_tampered_request_state_is_refused_over_http(asking_server: str | list[str]) -> None:
    """The retry of a 2026 call carries the server's sealed state back; one changed character and
    the server refuses the retry before the tool runs: -32602 "Invalid or expired requestState"."""
    options = SessionOptions(protocol="2026-07-28", handlers=ClientHandlers(elicitation=User().elicitation))
    async with connect(asking_server, options) as session:
        call = {"name": "survey", "arguments": {}}
        first = await session.request("tools/call", call)
        state = first["requestState"]
        middle = len(state) // 2
        forged = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]
        answer = {"ask-1": {"action": "accept", "content": {"name": "Eve"}}}
        with pytest.raises(JsonRpcError) as refused:
            await session.request("tools/call", {**call, "inputResponses": answer, "requestState": forged})
        honest = await session.answer_input("tools/call", call, first)
    assert refused.value.code == mcp_types.INVALID_PARAMS
    assert refused.value.message.startswith("Invalid or expired requestState")  # HTTP adds its status
    assert honest["content"][0]["text"] == "Ada is 36"
