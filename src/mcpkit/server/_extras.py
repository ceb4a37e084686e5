"""Resources and prompts a server may serve besides tools.

They exist so a server that really serves them can say so; a server given none declares
neither capability: a server that announced empty resource and prompt capabilities had clients
call handlers that did not exist.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ResourceSpec:
    """One readable resource: its URI, a name, and an async reader returning its text."""

    uri: str
    name: str
    read: Callable[[], Awaitable[str]]
    description: str | None = None
    mime_type: str = "text/plain"


@dataclass(frozen=True)
class PromptArgumentSpec:
    """One named argument a prompt template accepts."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class PromptSpec:
    """A prompt template: an async renderer from string arguments to the user message text."""

    name: str
    render: Callable[[Mapping[str, str]], Awaitable[str]]
    description: str | None = None
    arguments: Sequence[PromptArgumentSpec] = field(default_factory=tuple)
