"""Every message the server sends, validated against its revision's schema.

The SDK's generated strict models (``mcp_types.methods``) are the schema of each revision, so
nothing here reads a schema file at run time. Results are keyed by the method of the request
they answer, notifications and server-to-client requests by their own method; a method the
revision does not define (a custom one) is not judged here.

List pages and tool results are graded by their own checks (listing.py per page and cursor,
tooldefs.py per tool and client profile, probe.py against each tool's outputSchema), so the
:class:`MessageValidator` leaves those methods to them and reports each problem once. On the
handshake era it sees the wire through a :class:`ValidatingTracer` handed to the session (the
user's ``--trace`` still gets every line); on the stateless era the checker's own wire
(stateless.py) hands it each message.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_types.methods import SERVER_NOTIFICATIONS, SERVER_REQUESTS, validate_server_result
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError as PydanticValidationError

from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.client import Tracer

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

GRADED_ELSEWHERE = frozenset(
    {
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "tools/call",
        "completion/complete",
    }
)
"""Results another check validates with more context (pages, profiles, output schemas)."""

MAX_REPORTED = 20
"""A server that gets one message shape wrong usually gets it wrong every time: say it a few times."""


def first_problem(exc: PydanticValidationError) -> str:
    """One line for a schema failure: the first problem and where it is (a JSON pointer)."""
    problem = exc.errors()[0]
    where = "/" + "/".join(str(p) for p in problem.get("loc", ()))
    return f"{problem.get('msg')} at {where}"


def result_problem(method: str, version: str, result: Mapping[str, Any]) -> str | None:
    """What is wrong with ``result`` as the answer to ``method`` in ``version`` (None: fine or not judged)."""
    try:
        validate_server_result(method, version, result)
    except PydanticValidationError as exc:
        return first_problem(exc)
    except (KeyError, ValueError):
        return None  # a method or revision the SDK's models do not define
    return None


def frame_problem(message: Mapping[str, Any], version: str) -> str | None:
    """What is wrong with a server notification or request frame (None: fine or not judged)."""
    method = message.get("method")
    if not isinstance(method, str):
        return None
    table = SERVER_REQUESTS if "id" in message else SERVER_NOTIFICATIONS
    model = table.get((method, version))
    if model is None:
        return None
    try:
        model.model_validate({"jsonrpc": "2.0", **message}, by_name=False)
    except PydanticValidationError as exc:
        return first_problem(exc)
    return None


class MessageValidator:
    """Validates each message a server sends in one era; reports what does not match.

    ``version`` is the revision messages are judged by: the stateless era knows it up front,
    the handshake era learns it from the initialize result (the first answer).
    """

    def __init__(self, report: CheckReport, version: str | None = None) -> None:
        self.report = report
        self.version = version
        self.methods: dict[Any, str] = {}
        self.checked = 0
        self._said: set[tuple[str, str]] = set()

    def sent(self, message: Mapping[str, Any]) -> None:
        """Remember what an outgoing request asked, so its answer is judged as that method's result."""
        if "id" in message and isinstance(message.get("method"), str):
            self.methods[message["id"]] = message["method"]

    def received(self, message: Mapping[str, Any]) -> None:
        """Judge one message from the server."""
        if "method" in message:
            self.checked += 1
            problem = frame_problem(message, self.version or LATEST_HANDSHAKE_VERSION)
            if problem:
                self._add(str(message["method"]), problem)
            return
        method = self.methods.pop(message.get("id"), None)
        result = message.get("result")
        if method is None or not isinstance(result, dict):
            return  # errors are parsed by the client; unknown ids are its business too
        if method == "initialize" and isinstance(result.get("protocolVersion"), str):
            self.version = result["protocolVersion"]
        self.checked += 1
        if method in GRADED_ELSEWHERE:
            return
        problem = result_problem(method, self.version or LATEST_HANDSHAKE_VERSION, result)
        if problem:
            self._add(method, problem)

    def _add(self, method: str, problem: str) -> None:
        key = (method, problem)
        if key in self._said or len(self._said) >= MAX_REPORTED:
            return
        self._said.add(key)
        self.report.add(
            CheckFinding(
                "message-invalid",
                "error",
                "protocol",
                f"{method} ({self.version}): {problem}",
                "Build messages with an SDK's types for the revision you answer, or check them "
                "against that revision's schema.json.",
                pointer=problem.rpartition(" at ")[2],
            )
        )


class ValidatingTracer(Tracer):
    """A tracer that hands every message to a :class:`MessageValidator`, then to ``inner``.

    The session adds its secrets with :meth:`with_secrets`, so that must keep validating too.
    """

    def __init__(self, validator: MessageValidator, inner: Tracer | None = None) -> None:
        super().__init__(io.StringIO())  # never written: line() hands lines to ``inner``
        self.validator = validator
        self.inner = inner

    def with_secrets(self, secrets: Iterable[str]) -> Tracer:
        inner = self.inner.with_secrets(secrets) if self.inner is not None else None
        return ValidatingTracer(self.validator, inner)

    def line(self, server: str, direction: str, text: str) -> None:
        if self.inner is not None:
            self.inner.line(server, direction, text)

    def message(self, server: str, direction: str, message: SessionMessage | Exception) -> None:
        if not isinstance(message, Exception):
            raw = message.message.model_dump(by_alias=True, exclude_unset=True)
            if direction == "->":
                self.validator.sent(raw)
            elif direction == "<-":
                self.validator.received(raw)
        if self.inner is not None:
            self.inner.message(server, direction, message)

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
