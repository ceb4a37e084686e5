"""Asking the user through the client, on both eras, and confirmation of destructive tools.

A handler writes ``answer = await ask(ctx, "message", schema)`` once; the server puts the
question to the client's user the way the client's protocol revision allows:

- **2025 wire** (handshake era): an ``elicitation/create`` request to the client while the
  call waits (:func:`elicitor` sends it through the SDK's server session).
- **2026-07-28 wire** (stateless): the call ends with an ``InputRequiredResult`` carrying the
  question as an embedded ``elicitation/create`` input request and a ``requestState``; the
  client asks its user and retries the same call with ``inputResponses`` and that state.
- **Neither** (no ``elicitation`` declared, url-only elicitation, or a 2025 request with no way
  back such as stateless HTTP): ``ask`` returns ``Answer("unasked")`` and the handler decides;
  ``ask(..., required=True)`` instead ends the call with an ``isError`` result saying the
  client cannot be asked (one line), and :func:`confirming` keeps the ``confirm: true`` flag.

How a handler resumes on the 2026 retry: **it runs again from the top**. Each ``ask`` of the
run is numbered (``ask-1``, ``ask-2`` ...); a question answered earlier in the call returns
its answer at once, so the run goes one question further each round until the handler
returns. Holding the first run suspended until the retry would tie the call to one process
and one connection (a stateless HTTP retry may reach another worker, or come after a
restart) and leak a suspended handler for every client that never retries; re-running costs
only the work before the last question. So a handler asks before it changes anything, as
:func:`confirming` does (preview, ask, then act). One question is asked per round.

What rides ``requestState`` is this call's answers so far and a digest of the question just
asked; the SDK's :class:`~mcp.server.request_state.RequestStateBoundary` (installed on every
toolkit server) encrypts and authenticates it, binds it to the tool, its arguments and the
caller, and refuses any other echo with -32602 "Invalid or expired requestState" before the
handler runs, so a client can neither forge an earlier answer nor replay one into another
call. An answer in ``inputResponses`` counts only for the question as it was last shown (the
digest): a handler that asks something else at that point asks again.

Accepted content is coerced to the requested schema as tool arguments are (``"false"``
becomes ``false`` for a boolean field, ``"12"`` becomes ``12`` for an integer), so a sloppy
client cannot turn a "no" into a yes by its spelling; content no coercion makes valid ends
the call with one line saying so.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, cast

import mcp_types

from mcpkit.errors import CallError, ValidationError
from mcpkit.results import text_result
from mcpkit.server._arguments import ArgumentError, ArgumentValidator
from mcpkit.tools import ToolContext, ToolSpec
from mcpkit.tools._context import Elicit

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

logger = logging.getLogger("mcpkit.server")

Action = Literal["accept", "decline", "cancel", "unasked"]
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "Confirm", "description": "Yes, do it", "default": True}
    },
    "required": ["confirm"],
}
"""What a confirmation asks for: one yes/no box, ticked by default."""

INPUT_REQUIRED_VERSIONS = frozenset({"2026-07-28"})
"""Revisions on which a tool asks through ``InputRequiredResult`` instead of ``elicitation/create``."""

_STATE_VERSION = 1


class CannotAskError(CallError):
    """``ask(..., required=True)`` where the client cannot be asked: the call ends with this line."""


class AnswerError(ValidationError):
    """The client's answer does not fit the form it was shown (after coercion)."""


class _InputRequired(BaseException):  # a control signal, not an error: private, outside the error tree
    """Raised by ``ask`` on the 2026 wire for a question not yet answered; the server turns it
    into the call's ``InputRequiredResult``. A ``BaseException`` so that a handler's own
    ``except Exception`` cannot swallow it (it would turn "ask the user" into a failed call)."""

    def __init__(self, result: mcp_types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


def input_required_of(exc: BaseException) -> mcp_types.InputRequiredResult | None:
    """The ``InputRequiredResult`` a handler's ``ask`` raised, also from inside a task group."""
    if isinstance(exc, _InputRequired):
        return exc.result
    if isinstance(exc, BaseExceptionGroup):
        found, rest = exc.split(_InputRequired)
        if found is not None and rest is None:
            leaf: BaseException = found
            while isinstance(leaf, BaseExceptionGroup):
                leaf = leaf.exceptions[0]
            return cast(_InputRequired, leaf).result
    return None


@dataclass(frozen=True)
class Answer:
    """The user's answer: ``unasked`` when the client could not be asked (no capability, no way back)."""

    action: Action
    content: Mapping[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


def _can_fill_forms(session: Any) -> bool:
    """Whether the client declared form elicitation (a bare ``elicitation: {}`` means forms too;
    a url-only client cannot fill a form)."""
    caps = session.client_capabilities
    have = caps.elicitation if caps is not None else None
    return have is not None and (have.form is not None or have.url is None)


def elicitor(ctx: ServerRequestContext[Any, Any]) -> Elicit | None:
    """How this request asks its client's user, or ``None`` when it cannot.

    2025 wire: ``elicitation/create`` through the SDK's session. A request without a way back
    raises in the SDK (``NoBackChannelError``); a client that declared the capability and then
    refuses (mcpkit's own client without a handler does) answers with an error: both are
    "could not ask", never a failed tool call, so the caller falls back to its arguments.
    2026 wire: answers from this call's ``inputResponses`` and sealed ``requestState``, or
    :class:`_InputRequired` for the next question.
    """
    session = ctx.session
    if not _can_fill_forms(session):
        return None
    if ctx.protocol_version in INPUT_REQUIRED_VERSIONS:
        return _Rounds(ctx.params or {}).elicit

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        try:
            result = await session.elicit_form(message, cast(Any, schema), related_request_id=ctx.request_id)
        except Exception as exc:  # no back channel, a refusal, a malformed answer: the user was not asked
            logger.info("elicitation/create not answered (%s: %s)", type(exc).__name__, exc)
            return None
        return {"action": result.action, "content": dict(result.content or {})}

    return elicit


def _digest(message: str, schema: Mapping[str, Any]) -> str:
    text = json.dumps([message, schema], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class _Rounds:
    """One 2026 round of a call: what earlier rounds answered (from the unsealed ``requestState``),
    what the client answered now (``inputResponses``), and the count of questions this run asked.

    The state is plaintext here only because the server's ``RequestStateBoundary`` verified and
    opened it; a state it did not mint never reaches a handler.
    """

    def __init__(self, params: Mapping[str, Any]) -> None:
        state = _load_state(params.get("requestState"))
        self.answers: dict[str, dict[str, Any]] = state["answers"]
        self.asked: dict[str, str] = state["asked"]
        responses = params.get("inputResponses")
        self.responses: Mapping[str, Any] = responses if isinstance(responses, Mapping) else {}
        self.count = 0

    async def elicit(self, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        self.count += 1
        key = f"ask-{self.count}"
        digest = _digest(message, schema)
        recorded = self.answers.get(key)
        if recorded is not None and recorded.get("d") == digest:
            return dict(recorded["r"])
        response = self.responses.get(key)
        if response is not None and self.asked.get(key) == digest:
            answer = elicit_answer(response, key)
            self.answers[key] = {"d": digest, "r": answer}
            return answer
        # Not answered yet (or answered for a question worded differently): ask it now.
        for later in [k for k in self.answers if _number(k) >= self.count]:
            del self.answers[later]  # answers after a changed question belong to another path
        request = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message=message, requested_schema=cast(Any, schema))
        )
        state = {"v": _STATE_VERSION, "answers": self.answers, "asked": {key: digest}}
        raise _InputRequired(
            mcp_types.InputRequiredResult(
                input_requests={key: request},
                request_state=json.dumps(state, separators=(",", ":"), ensure_ascii=True),
            )
        )


def _number(key: str) -> int:
    try:
        return int(key.rpartition("-")[2])
    except ValueError:
        return 0


def _load_state(raw: object) -> dict[str, Any]:
    """The unsealed state, or an empty one (first round, or a state of another shape)."""
    empty: dict[str, Any] = {"answers": {}, "asked": {}}
    if not isinstance(raw, str):
        return empty
    try:
        state = json.loads(raw)
    except ValueError:
        return empty
    if not isinstance(state, dict) or state.get("v") != _STATE_VERSION:
        return empty
    answers, asked = state.get("answers"), state.get("asked")
    if not isinstance(answers, dict) or not isinstance(asked, dict):
        return empty
    return {"answers": answers, "asked": asked}


def elicit_answer(response: object, key: str) -> dict[str, Any]:
    """The client's answer to ``key`` as ``{"action", "content"}``; one line if it is no form answer."""
    try:
        result = mcp_types.ElicitResult.model_validate(response, by_name=False)
    except Exception:
        raise AnswerError(f"The client's answer to question {key} is not an answer to a form.") from None
    return {"action": result.action, "content": dict(result.content or {})}


async def ask(
    ctx: ToolContext, message: str, requested_schema: Mapping[str, Any], *, required: bool = False
) -> Answer:
    """Ask the user ``message`` with a form of ``requested_schema`` (primitive properties only).

    Accepted content comes coerced to the schema. ``required=True``: a client that cannot be
    asked ends the call with an ``isError`` result saying so, instead of ``Answer("unasked")``.
    """
    raw = await ctx.elicit(message, requested_schema)
    if raw is None:
        if required:
            raise CannotAskError(
                f"Tool {ctx.tool or 'this tool'} needs to ask the user, and this client cannot ask "
                "(it declared no form elicitation, or cannot be reached back on this connection)."
            )
        return Answer("unasked")
    action = raw.get("action")
    if action not in ("accept", "decline", "cancel"):
        return Answer("unasked")
    content = dict(raw.get("content") or {})
    if action == "accept":
        content = _fitted(requested_schema, content)
    return Answer(action, content)


def _fitted(schema: Mapping[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """Accepted content coerced to the form's schema, as tool arguments are; one line if it cannot be."""
    try:
        return ArgumentValidator(schema).prepare(content)
    except ArgumentError as exc:
        raise AnswerError(f"The user's answer does not fit the form: {exc}") from None


async def confirm(ctx: ToolContext, message: str) -> bool | None:
    """``True`` when the user said yes, ``False`` for no (or a dismissed form), ``None`` when unasked."""
    answer = await ask(ctx, message, CONFIRM_SCHEMA)
    if answer.action == "unasked":
        return None
    return answer.accepted and answer.content.get("confirm", True) is not False


Question = Callable[[ToolSpec, Mapping[str, Any], mcp_types.CallToolResult], str]
Declined = Callable[[ToolSpec, Mapping[str, Any]], mcp_types.CallToolResult]


def result_text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


def default_question(tool: ToolSpec, args: Mapping[str, Any], preview: mcp_types.CallToolResult) -> str:
    """The tool's name and its preview, as the user is asked to confirm them."""
    return f"Allow {tool.name}? It cannot be undone.\n\n{result_text(preview)}"


def default_declined(tool: ToolSpec, args: Mapping[str, Any]) -> mcp_types.CallToolResult:
    return text_result(f"Nothing was done: the user declined {tool.name}.")


def confirming(
    tool: ToolSpec,
    *,
    flag: str = "confirm",
    question: Question = default_question,
    declined: Declined = default_declined,
) -> ToolSpec:
    """``tool`` (previewing unless ``flag`` is true) confirmed by the user where the client can ask.

    With such a client, each call runs the preview, asks the user (``question`` makes the text
    from the preview) and runs the tool with ``flag`` true only on their yes; a no returns
    ``declined``. Without one, or when asking fails, the call goes on as the arguments say.
    On the 2026 wire the preview runs again on the retry that carries the answer (it must
    change nothing, which is what a preview is). A tool that is not destructive, has no
    ``flag``, or still waits for its context is returned as is.
    """
    if (
        not tool.is_destructive
        or flag not in (tool.input_schema.get("properties") or {})
        or tool.needs_context
    ):
        return tool
    handler = cast(Callable[[dict[str, Any], ToolContext], Any], tool.handler)

    async def run(args: dict[str, Any], ctx: ToolContext) -> Any:
        if not ctx.can_elicit:
            return await handler(args, ctx)
        preview = await handler({k: v for k, v in args.items() if k != flag}, ctx)
        if isinstance(preview, str):
            preview = text_result(preview)
        if preview.is_error:
            return preview
        said = await confirm(ctx, question(tool, args, preview))
        if said is None:
            return await handler(args, ctx) if args.get(flag) is True else preview
        if not said:
            return declined(tool, args)
        return await handler({**args, flag: True}, ctx)

    return replace(tool, handler=run)
