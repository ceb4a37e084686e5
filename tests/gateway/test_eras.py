"""The gateway between eras: a server's questions (elicitation, roots) and list changes relayed
from the 2025 handshake to the 2026-07-28 wire and back, with real downstream processes and
real clients (the SDK's own client on both eras, mcpkit's client on the handshake).

The downstream tool asks its user through mcpkit's ``ask`` helper; through the gateway a 2026
client is asked by an ``InputRequiredResult`` while the downstream call waits, parked, for the
retry that carries the answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
import mcp_types
import pytest
from anyio.streams.text import TextReceiveStream
from mcp.server.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError

from mcpkit.client import ClientHandlers, SessionOptions, TasksExtension, connect
from mcpkit.gateway import Gateway, GatewayConfigError, load_gateway_config
from mcpkit.gateway import asking as asking_module
from mcpkit.server import build_server
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p
from tests.client.procs import free_port
from tests.gateway.support import (
    HERE,
    everything_server,
    flaky,
    gateway_argv,
    gateway_session,
    wait_port,
    write_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ASKING = HERE / "fixtures" / "asking_server.py"
TASKS = "io.modelcontextprotocol/tasks"


def asking() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(ASKING)]}


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def answering(action: str, name: str | None, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action=action, content={"name": name} if name else None)

    return callback


def _serve(argv: list[str], port: int) -> Iterator[str]:
    proc = subprocess.Popen(
        argv, env={**os.environ, "MCPKIT_LOG": "warning"}, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def gateway_url(tmp_path: Path) -> Iterator[str]:
    config = write_config(tmp_path / "gw.json", {"ask": asking()})
    port = free_port()
    yield from _serve(gateway_argv(config, "--transport", "http", "--port", str(port)), port)


async def test_a_2026_client_answers_a_2025_servers_question_through_the_gateway(gateway_url: str) -> None:
    asked: list[str] = []
    callback = answering("accept", "Ada", asked)
    async with mcp.Client(gateway_url, mode="2026-07-28", elicitation_callback=callback) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("ask_greet", {"by": "the gateway"})
        assert text(result) == "hello Ada", result
        assert asked == ["Who is greeted by the gateway?"]
        plain = await client.call_tool("ask_echo", {"text": "x"})
        assert text(plain) == "x"


@asynccontextmanager
async def in_process(
    tmp_path: Path, gateway: dict[str, Any] | None = None, servers: dict[str, Any] | None = None
) -> AsyncIterator[Gateway]:
    """The gateway in this process (its parked calls can be counted), its downstreams real children."""
    config = load_gateway_config(write_config(tmp_path / "gw.json", servers or {"ask": asking()}, gateway))
    gw = Gateway(config)
    async with anyio.create_task_group() as tg:
        await gw.start(tg)
        try:
            yield gw
        finally:
            gw.stop()
            tg.cancel_scope.cancel()


async def _until_none_parked(gw: Gateway) -> None:
    with anyio.fail_after(60):
        while gw.asking.parked:
            await anyio.sleep(0.02)


@pytest.mark.parametrize(("action", "said"), [("decline", "decline"), ("cancel", "cancel")])
async def test_a_2026_clients_no_reaches_the_server(tmp_path: Path, action: str, said: str) -> None:
    async with in_process(tmp_path) as gw:
        callback = answering(action, None, [])
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=callback) as client:
            result = await client.call_tool("ask_greet", {})
        assert text(result) == said
        await _until_none_parked(gw)


async def test_a_2026_client_that_cannot_be_asked_gets_the_unasked_answer(tmp_path: Path) -> None:
    async with in_process(tmp_path) as gw:
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28") as client:
            result = await client.call_tool("ask_greet", {})
        assert text(result) == "unasked"
        assert gw.asking.parked == 0


async def test_an_abandoned_question_is_cancelled_and_its_call_forgotten(tmp_path: Path) -> None:
    """The client takes the InputRequiredResult and never retries: the downstream's question is
    answered cancel after the wait (here the gateway's 2 s call timeout), its call ends, nothing
    stays parked, and the old requestState is refused in one line."""
    async with (
        in_process(tmp_path, {"call_timeout": 2}) as gw,
        mcp.Client(
            gw.lowlevel(), mode="2026-07-28", elicitation_callback=answering("accept", "x", [])
        ) as client,
    ):
        first = await client.session.call_tool("ask_greet", {}, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult)
        assert first.request_state and first.input_requests
        (request,) = first.input_requests.values()
        assert request.method == "elicitation/create"
        assert gw.asking.parked == 1 and gw.status()["parked"] == 1
        await _until_none_parked(gw)
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                "ask_greet",
                {},
                input_responses={
                    k: mcp_types.ElicitResult(action="accept", content={"name": "x"})
                    for k in first.input_requests
                },
                request_state=first.request_state,
                allow_input_required=True,
            )
        assert refused.value.error.code == mcp_types.INVALID_PARAMS


async def test_a_forged_request_state_is_refused(tmp_path: Path) -> None:
    async with in_process(tmp_path) as gw:
        async with mcp.Client(
            gw.lowlevel(), mode="2026-07-28", elicitation_callback=answering("accept", "x", [])
        ) as client:
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    "ask_greet", {}, request_state="v1.forged", allow_input_required=True
                )
        assert refused.value.error.code == mcp_types.INVALID_PARAMS
        assert gw.asking.parked == 0


async def test_a_2025_client_on_stdio_answers_a_2025_servers_question(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"ask": asking()})
    asked: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Grace"}}

    async with gateway_session(config, handlers=ClientHandlers(elicitation=elicit)) as session:
        result = await session.request("tools/call", {"name": "ask_greet", "arguments": {"by": "stdio"}})
    assert text_of(result) == "hello Grace"
    assert [a["message"] for a in asked] == ["Who is greeted by stdio?"]


async def test_a_2025_client_on_stateless_http_is_not_asked(gateway_url: str) -> None:
    """Stateless HTTP has no way back to a handshake client: the tool hears "unasked"."""
    async with mcp.Client(
        gateway_url, mode="legacy", elicitation_callback=answering("accept", "x", [])
    ) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("ask_greet", {})
    assert text(result) == "unasked"


def text_of(result: Any) -> str:
    return "".join(c.get("text", "") for c in result["content"]) if isinstance(result, dict) else text(result)


@pytest.fixture
def asking_url() -> Iterator[str]:
    """The asking server on its own (stateful) streamable HTTP, a real child."""
    port = free_port()
    yield from _serve([sys.executable, str(ASKING), "--http", str(port)], port)


async def test_a_2026_client_answers_a_2025_http_servers_question(tmp_path: Path, asking_url: str) -> None:
    asked: list[str] = []
    async with in_process(tmp_path, servers={"ask": {"type": "http", "url": asking_url}}) as gw:
        callback = answering("accept", "Lin", asked)
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=callback) as client:
            result = await client.call_tool("ask_greet", {"by": "http"})
        assert text(result) == "hello Lin"
        assert asked == ["Who is greeted by http?"]
        await _until_none_parked(gw)


async def test_the_asking_tool_directly_on_the_2025_wire(asking_url: str) -> None:
    asked: list[str] = []
    async with mcp.Client(
        asking_url, mode="legacy", elicitation_callback=answering("accept", "Bo", asked)
    ) as client:
        result = await client.call_tool("greet", {"by": "nobody between"})
    assert text(result) == "hello Bo"
    assert asked == ["Who is greeted by nobody between?"]


async def test_a_crash_loop_reaches_a_2026_client_through_http_as_it_is_declared(tmp_path: Path) -> None:
    """The withdrawn tools are published on the listen stream as the crash loop is declared
    (not on a poll): a 2026 client on the gateway's HTTP hears it, its list then lacks the
    looping server's tools, and the delay from the gateway's log line declaring the loop to
    the event is printed (a few milliseconds here; the issue asks for under a second)."""
    die = tmp_path / "die"
    config = write_config(
        tmp_path / "gw.json",
        {"ask": asking(), "flaky": flaky("--die-file", str(die))},
        {"restart": {"max_restarts": 2, "backoff": 0.05, "window": 60}},
    )
    port = free_port()
    declared: list[float] = []
    argv = gateway_argv(config, "--transport", "http", "--port", str(port))
    async with await anyio.open_process(argv, env={**os.environ, "MCPKIT_LOG": "warning"}) as gateway:

        async def watch_log() -> None:
            assert gateway.stderr is not None
            async for line in TextReceiveStream(gateway.stderr):
                if "crash loop" in line:
                    declared.append(time.time())

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch_log)
            await anyio.to_thread.run_sync(wait_port, port)
            url = f"http://127.0.0.1:{port}/mcp"
            async with mcp.Client(url, mode="2026-07-28") as client:
                assert "flaky_echo" in await _names(client)
                async with client.listen(tools_list_changed=True) as changes:
                    assert changes.honored.tools_list_changed is True
                    die.write_text("x")
                    assert (await client.call_tool("flaky_crash")).is_error
                    with anyio.fail_after(60):
                        async for event in changes:
                            heard = time.time()
                            assert isinstance(event, ToolsListChanged)
                            if not any(n.startswith("flaky_") for n in await _names(client)):
                                break
                assert "ask_echo" in await _names(client)
            gateway.terminate()
            with anyio.fail_after(30):
                await gateway.wait()
            tg.cancel_scope.cancel()
    assert declared, "the gateway logged no crash loop"
    print(f"crash loop declared -> heard on the listen stream: {heard - declared[0]:.4f} s")


async def _names(client: mcp.Client) -> set[str]:
    listed = await client.list_tools(cache_mode="bypass")
    return {t.name for t in listed.tools}


def _declared(capabilities: Any) -> set[str]:
    """Each capability and each sub-flag set true, as ``resources.subscribe``."""
    out: set[str] = set()
    for key, value in capabilities.model_dump(by_alias=True, exclude_none=True).items():
        out.add(key)
        if isinstance(value, dict):
            out |= {f"{key}.{flag}" for flag, on in value.items() if on is True}
    return out


@pytest.mark.thirdparty
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_capability_the_gateway_declares_reaches_a_server(tmp_path: Path, mode: str) -> None:
    """On each era, each capability the gateway's HTTP face declares is used once and answered
    by a downstream; one declared and not exercised here fails (so a new one gets a check)."""
    config = write_config(tmp_path / "gw.json", {"ask": asking(), "everything": everything_server()})
    port = free_port()
    exercised: set[str] = set()
    for url in _serve(gateway_argv(config, "--transport", "http", "--port", str(port)), port):
        async with mcp.Client(url, mode=mode) as client:  # type: ignore[arg-type]
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            declared = _declared(client.server_capabilities)  # from discover on 2026 (mode auto)
            extensions = set(client.server_capabilities.extensions or {})
            assert {"tools", "tools.listChanged", "prompts", "resources", "completions"} <= declared
            assert text(await client.call_tool("ask_echo", {"text": "x"})) == "x"
            exercised.add("tools")
            if mode != "legacy":
                async with client.listen(tools_list_changed=True) as changes:
                    assert changes.honored.tools_list_changed is True
                exercised.add("tools.listChanged")
            elif "tools.listChanged" in declared:
                exercised.add("tools.listChanged")  # the notification: tests/gateway/test_supervision.py
            prompts = (await client.list_prompts()).prompts
            simple = next(p for p in prompts if p.name.startswith("everything_simple"))
            assert (await client.get_prompt(simple.name)).messages
            exercised.add("prompts")
            resources = (await client.list_resources()).resources
            read = await client.read_resource(resources[0].uri)
            assert read.contents[0].uri == resources[0].uri
            exercised.add("resources")
            with_args = next(p for p in prompts if p.arguments and p.name.startswith("everything_"))
            done = await client.complete(
                mcp_types.PromptReference(name=with_args.name),
                {"name": with_args.arguments[0].name, "value": ""},  # type: ignore[index]
            )
            assert done.completion is not None
            exercised.add("completions")
        if mode == "legacy" and "tasks" in declared:
            async with connect(url) as session:  # a task made, polled and read through the gateway
                answered = await session.call("ask_echo_later", {"text": "t"}, task=True)
                assert answered.text == "t"
                exercised |= {"tasks", *(f for f in declared if f.startswith("tasks."))}
        if TASKS in extensions:
            async with mcp.Client(url, mode="auto", cache=None, extensions=[TasksExtension()]) as modern:
                claimed = await modern.session.call_tool("ask_echo_later", {"text": "t"}, allow_claimed=True)
                assert claimed.result_type == "task"
                assert text(await modern.call_tool("ask_echo_later", {"text": "t"})) == "t"
            if set(extensions) == {TASKS}:
                exercised.add("extensions")
    assert declared <= exercised, f"declared but not forwarded: {sorted(declared - exercised)}"
    assert "logging" not in declared and "resources.subscribe" not in declared


@pytest.mark.thirdparty
async def test_a_2026_client_answers_a_2025_servers_sampling_request(tmp_path: Path) -> None:
    """server-everything's trigger-sampling-request asks the client's model mid-call; through
    the gateway a 2026 client that declared sampling answers it as an input request."""
    asked: list[Any] = []

    async def model(
        context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        asked.append(params)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(text="the client's model says hi"),
            model="stand-in",
        )

    args = {"prompt": "say hi", "maxTokens": 20}
    async with in_process(tmp_path, servers={"everything": everything_server()}) as gw:
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28", sampling_callback=model) as client:
            answered = await client.call_tool("everything_trigger_sampling_request", args)
        assert not answered.is_error, answered
        assert "the client's model says hi" in text(answered)
        assert len(asked) == 1
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28") as client:  # no model: refused, saying why
            refused = await client.call_tool("everything_trigger_sampling_request", args)
        assert "sampling" in text(refused), text(refused)
        await _until_none_parked(gw)


def _on_2026(name: str = "ask") -> dict[str, Any]:
    """The gateway table that has the gateway speak the stateless wire to ``name``."""
    return {"servers": {name: {"protocol": "2026-07-28"}}}


async def test_the_asking_tool_directly_on_the_2026_wire(asking_url: str) -> None:
    asked: list[str] = []
    callback = answering("accept", "Cy", asked)
    async with mcp.Client(asking_url, mode="2026-07-28", elicitation_callback=callback) as client:
        result = await client.call_tool("greet", {"by": "nobody between"})
    assert text(result) == "hello Cy"
    assert asked == ["Who is greeted by nobody between?"]


async def test_a_2026_client_answers_a_2026_servers_question_through_the_gateway(tmp_path: Path) -> None:
    asked: list[str] = []
    async with in_process(tmp_path, _on_2026()) as gw:
        assert gw.downstreams["ask"].protocol_version == "2026-07-28"
        callback = answering("accept", "Di", asked)
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=callback) as client:
            result = await client.call_tool("ask_greet", {"by": "both"})
            assert text(result) == "hello Di"
            declined = await client.call_tool("ask_greet", {"by": "both"})  # the same callback again
            assert text(declined) == "hello Di"
        assert asked == ["Who is greeted by both?"] * 2
        await _until_none_parked(gw)


async def test_a_2025_client_on_stdio_answers_a_2026_servers_question(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"ask": asking()}, _on_2026())
    asked: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Eve"}}

    async with gateway_session(config, handlers=ClientHandlers(elicitation=elicit)) as session:
        result = await session.request("tools/call", {"name": "ask_greet", "arguments": {"by": "eras"}})
    assert text_of(result) == "hello Eve"
    assert asked == ["Who is greeted by eras?"]


async def test_a_2026_servers_question_with_nobody_to_ask_ends_in_one_line(tmp_path: Path) -> None:
    """A 2026 client that declared no elicitation: the gateway refuses the 2026 server's input
    request, which on that wire ends the call; the client gets one line saying why."""
    async with in_process(tmp_path, _on_2026()) as gw:
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28") as client:
            result = await client.call_tool("ask_greet", {})
        assert result.is_error
        assert "elicitation" in text(result) and "\n" not in text(result), text(result)


def test_a_protocol_no_client_speaks_is_refused_in_one_line(tmp_path: Path) -> None:
    path = write_config(tmp_path / "gw.json", {"ask": asking()}, {"servers": {"ask": {"protocol": "2027"}}})
    with pytest.raises(GatewayConfigError) as refused:
        load_gateway_config(path)
    assert "servers.ask" in str(refused.value) and "2026-07-28" in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("protocol", "second"), [("2025-11-25", "hello B"), ("2026-07-28", "hello B")])
async def test_two_clients_asked_at_once(tmp_path: Path, protocol: str, second: str) -> None:
    """A's form stays open while B calls the same server. A 2026 server's question comes back
    in B's own call, so B is asked too. A handshake server's question does not say whose call
    it serves, but A's call waits for A's answer and asks nothing meanwhile, so the question is
    B's: B is asked, and A's form is never shown B's question."""
    b_done = anyio.Event()
    asked: list[str] = []

    async def slow_a(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append("A")
        await b_done.wait()
        return mcp_types.ElicitResult(action="accept", content={"name": "A"})

    async with in_process(tmp_path, {"servers": {"ask": {"protocol": protocol}}}) as gw:
        a = mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=slow_a)
        b = mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=answering("accept", "B", asked))
        async with a, b, anyio.create_task_group() as tg:
            results: dict[str, str] = {}

            async def call_a() -> None:
                results["a"] = text(await a.call_tool("ask_greet", {"by": "A"}))

            tg.start_soon(call_a)
            with anyio.fail_after(60):
                while asked != ["A"]:  # A's question is out: its call waits on the server
                    await anyio.sleep(0.01)
            results["b"] = text(await b.call_tool("ask_greet", {"by": "B"}))
            b_done.set()
        assert results == {"a": "hello A", "b": second}
        await _until_none_parked(gw)


async def test_a_2026_servers_question_passes_through_to_a_2026_client_unparked(tmp_path: Path) -> None:
    """Both ends on the 2026 wire: the server's input request reaches the client as it came (its
    own key), nothing is parked between the rounds, and the retry with the answer finishes it."""
    async with in_process(tmp_path, _on_2026()) as gw:
        callback = answering("accept", "Fay", [])
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=callback) as client:
            first = await client.session.call_tool("ask_greet", {"by": "F"}, allow_input_required=True)
            assert isinstance(first, mcp_types.InputRequiredResult) and first.input_requests
            assert gw.asking.parked == 0
            ((key, request),) = first.input_requests.items()
            assert request.method == "elicitation/create"
            done = await client.session.call_tool(
                "ask_greet",
                {"by": "F"},
                input_responses={key: mcp_types.ElicitResult(action="accept", content={"name": "Fay"})},
                request_state=first.request_state,
                allow_input_required=True,
            )
        assert isinstance(done, mcp_types.CallToolResult)
        assert text(done) == "hello Fay"


async def test_a_2026_client_answers_a_2026_servers_question_through_the_gateways_http(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path / "gw.json", {"ask": asking()}, _on_2026())
    port = free_port()
    asked: list[str] = []
    for url in _serve(gateway_argv(config, "--transport", "http", "--port", str(port)), port):
        async with mcp.Client(
            url, mode="2026-07-28", elicitation_callback=answering("accept", "Gus", asked)
        ) as client:
            result = await client.call_tool("ask_greet", {"by": "http"})
        assert text(result) == "hello Gus"
    assert asked == ["Who is greeted by http?"]


async def test_parked_calls_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound a call runs unparked (here the bound is 1): it is answered, its server's
    question refused, and the count never passes the bound."""
    monkeypatch.setattr(asking_module, "MAX_PARKED", 1)
    release = anyio.Event()
    asked: list[str] = []

    async def held(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        await release.wait()
        return mcp_types.ElicitResult(action="accept", content={"name": "first"})

    async with in_process(tmp_path) as gw:
        first = mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=held)
        second = mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=held)
        async with first, second, anyio.create_task_group() as tg:
            results: dict[str, str] = {}

            async def call_first() -> None:
                results["first"] = text(await first.call_tool("ask_greet", {"by": "1"}))

            tg.start_soon(call_first)
            with anyio.fail_after(60):
                while not asked:
                    await anyio.sleep(0.01)
            results["second"] = text(await second.call_tool("ask_greet", {"by": "2"}))
            assert gw.asking.parked == 1
            assert text(await second.call_tool("ask_echo", {"text": "still served"})) == "still served"
            release.set()
        assert results == {"first": "hello first", "second": "unasked"}
        assert asked == ["Who is greeted by 1?"]
        await _until_none_parked(gw)


async def test_asking_calls_one_after_another_are_each_asked(tmp_path: Path) -> None:
    """A run of asking calls through the gateway, as a conformance run makes them: the first
    client takes its InputRequiredResult and never retries (its form stays open on the server
    until the wait runs out), the next ones answer theirs. Each later call is still asked: a
    call that waits for its own answer asks nothing else, so it does not stand in the way
    (it used to, and every later question came back "unasked")."""
    async with in_process(tmp_path) as gw:
        async with mcp.Client(
            gw.lowlevel(), mode="2026-07-28", elicitation_callback=answering("accept", "x", [])
        ) as client:
            abandoned = await client.session.call_tool("ask_greet", {"by": "1"}, allow_input_required=True)
            assert isinstance(abandoned, mcp_types.InputRequiredResult)
            for n in (2, 3, 4):
                again = await client.session.call_tool("ask_greet", {"by": str(n)}, allow_input_required=True)
                assert isinstance(again, mcp_types.InputRequiredResult), again
                ((key, request),) = again.input_requests.items()  # type: ignore[union-attr]
                assert request.params.message == f"Who is greeted by {n}?"  # type: ignore[union-attr]
                done = await client.session.call_tool(
                    "ask_greet",
                    {"by": str(n)},
                    input_responses={key: mcp_types.ElicitResult(action="accept", content={"name": f"N{n}"})},
                    request_state=again.request_state,
                    allow_input_required=True,
                )
                assert isinstance(done, mcp_types.CallToolResult) and text(done) == f"hello N{n}"
        assert gw.asking.parked == 1  # only the abandoned call waits, until its wait runs out


@pytest.mark.parametrize("askable", [False, True])
async def test_progress_reaches_a_2026_client(tmp_path: Path, askable: bool) -> None:
    """A handshake server's progress reaches a 2026 client under its own token, whether or not
    the client may be asked (a call that may be asked is parked: it used to drop the token),
    and over the gateway's HTTP as on the SDK's in-process wire."""
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()})
    port = free_port()
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    callback = answering("accept", "x", []) if askable else None
    for url in _serve(gateway_argv(config, "--transport", "http", "--port", str(port)), port):
        async with mcp.Client(url, mode="2026-07-28", elicitation_callback=callback) as client:
            result = await client.call_tool("flaky_sleep", {"seconds": 0.3}, progress_callback=on_progress)
        assert not result.is_error, result
    assert seen, "no progress reached the 2026 client"
    assert seen[-1][0] == seen[-1][1]


async def test_a_2025_client_with_a_session_is_asked_over_http(tmp_path: Path) -> None:
    """With --sessions a handshake client that initializes gets a session, and its server's
    question reaches it on the call's own stream; a second call is asked too, and a call that
    asks nothing is still answered."""
    config = write_config(tmp_path / "gw.json", {"ask": asking()})
    port = free_port()
    asked: list[str] = []
    argv = gateway_argv(config, "--transport", "http", "--port", str(port), "--sessions")
    for url in _serve(argv, port):
        async with mcp.Client(
            url, mode="legacy", elicitation_callback=answering("accept", "Kim", asked)
        ) as client:
            assert client.protocol_version == "2025-11-25"
            assert text(await client.call_tool("ask_greet", {"by": "a session"})) == "hello Kim"
            assert text(await client.call_tool("ask_greet", {"by": "it again"})) == "hello Kim"
            assert text(await client.call_tool("ask_echo", {"text": "plain"})) == "plain"
        async with mcp.Client(url, mode="legacy") as unaskable:  # declared no elicitation
            assert text(await unaskable.call_tool("ask_greet", {})) == "unasked"
    assert asked == ["Who is greeted by a session?", "Who is greeted by it again?"]


async def _echo(args: dict[str, Any]) -> str:
    return str(args.get("text"))


def _echoing(name: str) -> ToolSpec:
    return ToolSpec(name, "Return the text.", p.object_schema({"text": p.string()}, required=["text"]), _echo)


async def test_mcpkit_client_hears_a_2026_servers_list_change_on_its_listen_stream() -> None:
    """SessionOptions(listen=True): on the stateless wire the client keeps a subscriptions/listen
    stream open, and a toolkit server's set_tools reaches on_notification as the handshake's
    notifications/tools/list_changed would."""
    server = build_server("changing", "1", [_echoing("first")], tools_change=True)
    heard: list[str] = []
    changed = anyio.Event()

    async def note(method: str, params: dict[str, Any]) -> None:
        heard.append(method)
        if method == "notifications/tools/list_changed":
            changed.set()

    options = SessionOptions(protocol="2026-07-28", listen=True, on_notification=note)
    async with connect(server, options) as session:
        assert session.stateless
        assert [t["name"] for t in await session.list_tools()] == ["first"]
        with anyio.fail_after(30):
            while not session.listening:  # the stream is acknowledged: no change can slip by
                await anyio.sleep(0.01)
            await server.set_tools([_echoing("first"), _echoing("second")])
            await changed.wait()
        assert [t["name"] for t in await session.list_tools(refresh=True)] == ["first", "second"]
    assert heard == ["notifications/tools/list_changed"]


async def test_a_handshake_session_opens_no_listen_stream() -> None:
    server = build_server("changing", "1", [_echoing("first")], tools_change=True)
    async with connect(server, SessionOptions(listen=True)) as session:
        assert not session.stateless and not session.listening


CHANGING = HERE / "fixtures" / "changing_server.py"


async def test_a_2026_servers_own_list_change_reaches_a_2026_client_through_the_gateway(
    tmp_path: Path,
) -> None:
    """The gateway speaks the stateless wire to a toolkit server built with tools_change=True
    and keeps a listen stream open to it: the server's set_tools is heard, the gateway
    re-lists it, and a 2026 client in front hears the change on its own listen stream."""
    servers = {"chg": {"command": sys.executable, "args": [str(CHANGING)]}}
    async with in_process(tmp_path, _on_2026("chg"), servers) as gw:
        downstream = gw.downstreams["chg"]
        assert downstream.protocol_version == "2026-07-28"
        async with mcp.Client(gw.lowlevel(), mode="2026-07-28") as client:
            assert await _names(client) == {"chg_echo", "chg_grow"}
            async with client.listen(tools_list_changed=True) as changes:
                with anyio.fail_after(30):
                    while not downstream.listening:  # the gateway's own stream is acknowledged
                        await anyio.sleep(0.01)
                    assert text(await client.call_tool("chg_grow", {})) == "grown"
                    event = await changes.__anext__()
                assert isinstance(event, ToolsListChanged)
            assert await _names(client) == {"chg_echo", "chg_grow", "chg_grown"}
            assert text(await client.call_tool("chg_grown", {"text": "new"})) == "new"


ROOTS = HERE / "fixtures" / "roots_server.py"


@pytest.mark.parametrize("declared", [True, False])
async def test_a_2025_servers_roots_request_reaches_a_2026_client_mid_call(
    tmp_path: Path, declared: bool
) -> None:
    """A handshake server asks for roots in the middle of a call: a 2026 client that declared
    roots is asked by an InputRequiredResult (roots/list) and its roots reach the server; one
    that did not is never asked and the server hears an empty list."""
    asked: list[str] = []

    async def roots(context: Any) -> mcp_types.ListRootsResult:
        asked.append("roots")
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri="file:///work/project", name="project")])

    servers = {"rt": {"command": sys.executable, "args": [str(ROOTS)]}}
    async with in_process(tmp_path, servers=servers) as gw:
        async with mcp.Client(
            gw.lowlevel(), mode="2026-07-28", list_roots_callback=roots if declared else None
        ) as client:
            result = await client.call_tool("rt_roots", {})
        assert text(result) == ("file:///work/project" if declared else "none")
        assert asked == (["roots"] if declared else [])
        await _until_none_parked(gw)


QUESTIONING = HERE / "fixtures" / "questioning_server.py"


async def test_a_2026_servers_prompt_and_resource_that_ask_reach_a_2025_client_on_stdio(
    tmp_path: Path,
) -> None:
    """prompts/get and resources/read of a 2026 server that asks first (InputRequiredResult): the
    gateway puts the question to its stdio client as elicitation/create and retries with the
    answer, so the client gets the prompt and the resource as if nothing had been asked."""
    config = write_config(
        tmp_path / "gw.json", {"q": {"command": sys.executable, "args": [str(QUESTIONING)]}}, _on_2026("q")
    )
    asked: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Ida"}}

    async with gateway_session(config, handlers=ClientHandlers(elicitation=elicit)) as session:
        prompts = await session.request("prompts/list", {})
        (prompt,) = [p["name"] for p in prompts["prompts"]]
        got = await session.request("prompts/get", {"name": prompt})
        assert got["messages"][0]["content"]["text"] == "hello Ida"
        read = await session.request("resources/read", {"uri": "note://greeting"})
        assert read["contents"][0]["text"] == "hello Ida"
    assert asked == ["Who is greeted?", "Who is greeted?"]


async def test_a_2026_servers_prompt_that_asks_with_nobody_to_ask_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    """Over HTTP the gateway has no client of its own to put a prompt's question to: the
    client gets one line naming the server, not a result that fails validation."""
    servers = {"q": {"command": sys.executable, "args": [str(QUESTIONING)]}}
    async with (
        in_process(tmp_path, _on_2026("q"), servers) as gw,
        mcp.Client(gw.lowlevel(), mode="legacy") as client,
    ):
        (prompt,) = [p.name for p in (await client.list_prompts()).prompts]
        with pytest.raises(MCPError) as refused:
            await client.get_prompt(prompt)
        with pytest.raises(MCPError) as unread:
            await client.read_resource("note://greeting")
    for error in (refused.value, unread.value):
        assert "q:" in str(error) and "\n" not in str(error), error


async def test_a_2026_servers_prompt_and_resource_that_ask_pass_through_to_a_2026_client(
    tmp_path: Path,
) -> None:
    """Both ends on the 2026 wire: the server's InputRequiredResult to prompts/get and
    resources/read reaches the client as it came (its key, nothing parked), and the client's
    retry carries its answer back to the server, as for a tool call."""
    servers = {"q": {"command": sys.executable, "args": [str(QUESTIONING)]}}
    asked: list[str] = []
    callback = answering("accept", "Jo", asked)
    async with (
        in_process(tmp_path, _on_2026("q"), servers) as gw,
        mcp.Client(gw.lowlevel(), mode="2026-07-28", elicitation_callback=callback) as client,
    ):
        (prompt,) = [p.name for p in (await client.list_prompts()).prompts]
        first = await client.session.get_prompt(prompt, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult) and first.input_requests
        assert list(first.input_requests) == ["name"] and gw.asking.parked == 0
        got = await client.get_prompt(prompt)
        assert got.messages[0].content.text == "hello Jo"  # type: ignore[union-attr]
        read = await client.read_resource("note://greeting")
        assert read.contents[0].text == "hello Jo"  # type: ignore[union-attr]
    assert asked == ["Who is greeted?", "Who is greeted?"]
