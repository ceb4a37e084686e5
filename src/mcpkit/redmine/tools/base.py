"""A Redmine tool: mcpkit's ``ToolSpec`` with a module-level handler that takes the Redmine context.

Handlers are plain module-level functions ``handler(args, rc)`` that take the Redmine context
explicitly, so each one is unit-testable without a server: build a :class:`RedmineContext` on a
client and await the handler. The server binds each tool to a *provider* (``ToolSpec.bind``),
which picks the context for each call: one fixed context over stdio, the caller's own key over
HTTP. There used to be a Redmine ``Tool`` type beside ``ToolSpec``; now there is one kind of tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.xml import Formatter
from mcpkit.tools import ContextHandler, Provide, ToolSpec
from mcpkit.tools import params as p


@dataclass(frozen=True)
class RedmineContext:
    """What a Redmine handler needs besides its arguments: the client for this call's key, and
    the list formatter. It is the Redmine side of one call; mcpkit's ``ToolContext`` (progress,
    logging, the request's headers) is the tool side, from which the provider makes this one."""

    client: RedmineClient
    fmt: Formatter


Handler = ContextHandler[RedmineContext]
"""``handler(args, rc)``: validated arguments and this call's Redmine context to a result."""
Provider = Provide[RedmineContext]
"""From the toolkit's per-call :class:`ToolContext` to the Redmine context."""

Kind = Literal["read", "write", "idempotent", "destructive"]
_SAYS_ONLY_NUMBER = re.compile(r"^[A-Z][a-z]*( [a-z]+)? number$")


def compact(properties: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The properties without descriptions that only repeat the name (``tracker_id``: "Tracker number";
    ``id`` of get issue: "Issue number", which the tool's name already says).

    ``tools/list`` is read by the model on every turn and some clients cap its size; a name
    such as ``status_id`` already says all that "Status number" would.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, schema in properties.items():
        node = dict(schema)
        said = node.get("description")
        if (name == "id" or name.endswith("_id")) and isinstance(said, str) and _SAYS_ONLY_NUMBER.match(said):
            del node["description"]
        out[name] = node
    return out


def redmine_tool(
    name: str,
    description: str,
    properties: Mapping[str, Mapping[str, Any]],
    handler: Handler,
    category: str,
    required: tuple[str, ...] = (),
    kind: Kind = "read",
) -> ToolSpec:
    """One Redmine tool: mcpkit's :class:`ToolSpec` whose handler takes the :class:`RedmineContext`.

    ``kind`` is the honest answer to "what can a call do": ``read`` (read-only), ``write``
    (creates something each time), ``idempotent`` (the same call twice leaves the same state),
    ``destructive`` (deletes; such tools preview unless called with confirm true). The server
    binds every tool to its provider of contexts (:meth:`ToolSpec.bind`).
    """
    read_only = kind == "read"
    return ToolSpec.with_context(
        handler,
        name=name,
        description=description,
        input_schema=p.object_schema(compact(properties), required=required),
        category=category,
        read_only=read_only,
        destructive=None if read_only else kind == "destructive",
        idempotent=True if read_only else kind in ("idempotent", "destructive"),
    )
