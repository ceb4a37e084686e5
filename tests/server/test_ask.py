"""Asking the user: confirming() through the official SDK client and mcpkit's own client.

A client that answers ``elicitation/create`` decides each destructive call (its user's yes or
no wins over the model's confirm flag); a client that declares no elicitation, or cannot be
asked on its connection, keeps the contract of the flag: a preview, then confirm true.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpkit.client import ClientHandlers, SessionOptions, connect
from mcpkit.server import ask, build_server, confirm, confirming
from mcpkit.server._ask import AnswerError, CannotAskError
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools import params as p
from mcpkit.tools.coerce import as_bool

pytestmark = pytest.mark.anyio
_MISSING = object()


class Store:
    def __init__(self) -> None:
        self.items = {"a", "b"}


def server_for(store: Store) -> Any:
    async def delete(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult | str:
        name = args["name"]
        if name not in store.items:
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(text=f"no item {name}")], is_error=True
            )
        if args.get("confirm") is not True:
            return f"preview: would delete {name}"
        store.items.discard(name)
        return f"deleted {name}"

    tool = ToolSpec(
        "delete_item",
        "Delete an item. Without confirm true it only previews.",
        p.object_schema({"name": p.string(), "confirm": p.boolean()}, required=["name"]),
        delete,
        destructive=True,
    )
    return build_server("ask", "1", [confirming(tool)])


def answering(action: str, content: dict[str, Any] | None, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action=action, content=content)

    return callback


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_the_users_yes_deletes_without_the_flag() -> None:
    store, asked = Store(), []
    callback = answering("accept", {"confirm": True}, asked)
    async with Client(server_for(store).lowlevel, mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("delete_item", {"name": "a"})
    assert text(result) == "deleted a" and store.items == {"b"}
    assert asked == ["Allow delete_item? It cannot be undone.\n\npreview: would delete a"]


@pytest.mark.parametrize(
    ("action", "content"), [("decline", None), ("cancel", None), ("accept", {"confirm": False})]
)
async def test_the_users_no_wins_over_the_models_confirm(action: str, content: dict[str, Any] | None) -> None:
    store, asked = Store(), []
    callback = answering(action, content, asked)
    async with Client(server_for(store).lowlevel, mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("delete_item", {"name": "a", "confirm": True})
    assert not result.is_error and "declined" in text(result)
    assert store.items == {"a", "b"} and len(asked) == 1


async def test_an_error_in_the_preview_is_returned_without_asking() -> None:
    store, asked = Store(), []
    callback = answering("accept", {"confirm": True}, asked)
    async with Client(server_for(store).lowlevel, mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("delete_item", {"name": "zzz"})
    assert result.is_error and text(result) == "no item zzz" and asked == []


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_that_cannot_be_asked_keeps_the_confirm_flag(mode: str) -> None:
    """No elicitation declared, on either era: the preview, then confirm true."""
    store = Store()
    async with Client(server_for(store).lowlevel, mode=mode) as client:
        preview = await client.call_tool("delete_item", {"name": "a"})
        assert text(preview) == "preview: would delete a" and store.items == {"a", "b"}
        done = await client.call_tool("delete_item", {"name": "a", "confirm": True})
    assert text(done) == "deleted a" and store.items == {"b"}


@pytest.mark.parametrize(
    ("action", "content", "left"), [("accept", {"confirm": True}, {"b"}), ("decline", None, {"a", "b"})]
)
async def test_a_2026_client_is_asked_through_an_input_request(
    action: str, content: dict[str, Any] | None, left: set[str]
) -> None:
    """The same confirming tool on the stateless wire: the call returns an InputRequiredResult,
    the SDK's client asks its user and retries, and the answer decides."""
    store, asked = Store(), []
    callback = answering(action, content, asked)
    async with Client(server_for(store).lowlevel, mode="2026-07-28", elicitation_callback=callback) as client:
        result = await client.call_tool("delete_item", {"name": "a", "confirm": True})
    assert store.items == left and not result.is_error
    assert asked == ["Allow delete_item? It cannot be undone.\n\npreview: would delete a"]


async def test_mcpkit_client_asks_through_its_handler_or_falls_back_to_the_flag() -> None:
    store, asked = Store(), []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirm": True}}

    with_user = SessionOptions(handlers=ClientHandlers(elicitation=elicitation))
    async with connect(server_for(store), with_user) as session:
        assert (await session.call("delete_item", {"name": "a"})).text == "deleted a"
    assert len(asked) == 1 and store.items == {"b"}
    # Without a handler mcpkit's client still declares elicitation but refuses: the flag decides.
    async with connect(server_for(store)) as session:
        assert (await session.call("delete_item", {"name": "b"})).text == "preview: would delete b"
        assert (await session.call("delete_item", {"name": "b", "confirm": True})).text == "deleted b"
    assert store.items == set()


def test_tools_without_the_flag_are_left_as_they_are() -> None:
    async def handler(args: dict[str, Any]) -> str:
        return "ok"

    plain = ToolSpec("plain", "Answer.", p.object_schema({}), handler)
    assert confirming(plain) is plain


NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
AGE_FORM = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}


def survey_server(runs: list[str] | None = None) -> Any:
    """A tool that asks two questions in a row (and counts its runs: it re-runs on each 2026 round)."""

    async def survey(args: dict[str, Any], ctx: ToolContext) -> str:
        if runs is not None:
            runs.append("run")
        name = await ask(ctx, "Your name?", NAME_FORM)
        if not name.accepted:
            return f"no name ({name.action})"
        age = await ask(ctx, f"How old are you, {name.content['name']}?", AGE_FORM)
        if not age.accepted:
            return f"no age ({age.action})"
        return f"{name.content['name']} is {age.content['age']!r}"

    async def must(args: dict[str, Any], ctx: ToolContext) -> str:
        return (await ask(ctx, "Go on?", NAME_FORM, required=True)).action

    return build_server(
        "survey",
        "1",
        [
            ToolSpec(
                "survey", "Ask two questions.", p.object_schema({"topic": p.string()}), survey, read_only=True
            ),
            ToolSpec("must_ask", "Ask or refuse.", p.object_schema({}), must, read_only=True),
        ],
    )


def form_answers(asked: list[str]) -> Any:
    """A user who gives their name and their age (as text: the server coerces it to the form's integer)."""

    async def callback(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        if "name" in params.message:
            return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})
        return mcp_types.ElicitResult(action="accept", content={"age": "36"})

    return callback


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_handler_asks_two_questions_and_gets_both_answers_on_both_eras(mode: str) -> None:
    asked: list[str] = []
    runs: list[str] = []
    async with Client(
        survey_server(runs).lowlevel, mode=mode, elicitation_callback=form_answers(asked)
    ) as client:
        result = await client.call_tool("survey", {"topic": "x"})
    assert text(result) == "Ada is 36" and not result.is_error
    assert asked == ["Your name?", "How old are you, Ada?"]  # each question asked once
    # 2025: one run that waits; 2026: one run per round, the last with both answers at hand.
    assert len(runs) == (1 if mode == "legacy" else 3)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_required_refuses_a_client_that_cannot_be_asked_in_one_line(mode: str) -> None:
    async with Client(survey_server().lowlevel, mode=mode) as client:
        result = await client.call_tool("must_ask", {})
    assert result.is_error
    line = text(result)
    assert "\n" not in line and "cannot ask" in line and "must_ask" in line


async def first_round(client: Any, arguments: dict[str, Any]) -> mcp_types.InputRequiredResult:
    first = await client.session.call_tool("survey", arguments, allow_input_required=True)
    assert isinstance(first, mcp_types.InputRequiredResult) and first.request_state
    assert list(first.input_requests or {}) == ["ask-1"]
    return first


NAME_ADA = {"ask-1": mcp_types.ElicitResult(action="accept", content={"name": "Ada"})}


def tampered(state: str) -> str:
    """The sealed state with one character of its ciphertext changed."""
    middle = len(state) // 2
    return state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]


@pytest.mark.parametrize("how", ["tampered", "other-arguments", "not-a-token"])
async def test_a_request_state_the_server_did_not_mint_for_this_call_is_refused(how: str) -> None:
    async with Client(
        survey_server().lowlevel, mode="2026-07-28", elicitation_callback=form_answers([])
    ) as client:
        first = await first_round(client, {"topic": "x"})
        state = first.request_state
        assert state is not None
        arguments = {"topic": "x"}
        if how == "tampered":
            state = tampered(state)
        elif how == "other-arguments":
            arguments = {"topic": "y"}  # a state replayed into another call
        else:
            state = '{"v":1,"answers":{"ask-1":{"d":"x","r":{"action":"accept","content":{"name":"Eve"}}}}}'
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                "survey", arguments, input_responses=NAME_ADA, request_state=state, allow_input_required=True
            )
    assert refused.value.code == mcp_types.INVALID_PARAMS
    assert refused.value.message == "Invalid or expired requestState"


async def test_an_answer_without_the_state_of_its_question_is_not_taken_the_question_is_asked_again() -> None:
    async with Client(
        survey_server().lowlevel, mode="2026-07-28", elicitation_callback=form_answers([])
    ) as client:
        again = await client.session.call_tool(
            "survey", {"topic": "x"}, input_responses=NAME_ADA, allow_input_required=True
        )
    assert isinstance(again, mcp_types.InputRequiredResult)
    assert list(again.input_requests or {}) == ["ask-1"]


async def test_an_answer_that_is_not_a_form_answer_ends_the_call_in_one_line() -> None:
    async with Client(
        survey_server().lowlevel, mode="2026-07-28", elicitation_callback=form_answers([])
    ) as client:
        first = await first_round(client, {"topic": "x"})
        roots = mcp_types.ListRootsResult(roots=[])
        result = await client.session.call_tool(
            "survey",
            {"topic": "x"},
            input_responses={"ask-1": roots},
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(result, mcp_types.CallToolResult) and result.is_error
    assert text(result) == "The client's answer to question ask-1 is not an answer to a form."


def asked_with(answer: dict[str, Any] | None) -> ToolContext:
    """A tool context whose client answers every question with ``answer`` (None: cannot be asked)."""

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        return answer

    return ToolContext(tool="t", _elicit=elicit if answer is not None else None)


BOOL_FORM = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}},
    "required": ["ok"],
}
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["true", "false", "yes", "no", "on", "off", "1", "0", " 12 ", "2.5", "null"]),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(ok=scalars, n=st.one_of(st.just(_MISSING), scalars))
def test_accepted_content_reaches_the_handler_coerced_to_the_form_or_is_refused_in_one_line(
    ok: Any, n: Any
) -> None:
    content = {"ok": ok} if n is _MISSING else {"ok": ok, "n": n}

    async def main() -> None:
        try:
            answer = await ask(asked_with({"action": "accept", "content": content}), "Sure?", BOOL_FORM)
        except AnswerError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("The user's answer does not fit the form")
            return
        assert isinstance(answer.content["ok"], bool)
        assert answer.content["ok"] is as_bool(ok)  # the words and numbers tool arguments accept
        if "n" in answer.content:
            assert type(answer.content["n"]) is int
        said = await confirm(asked_with({"action": "accept", "content": {"confirm": ok}}), "Sure?")
        assert said is as_bool(ok)  # "false", 0 or "no" is never a yes

    anyio.run(main)


async def test_an_unasked_client_and_a_strange_action_read_as_unasked() -> None:
    assert (await ask(asked_with(None), "Sure?", BOOL_FORM)).action == "unasked"
    assert (await ask(asked_with({"action": "maybe"}), "Sure?", BOOL_FORM)).action == "unasked"
    with pytest.raises(CannotAskError):
        await ask(asked_with(None), "Sure?", BOOL_FORM, required=True)
