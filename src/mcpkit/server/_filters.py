"""Tool filters: which tools a server shows, by category, by name and by the read-only switch.

Clients cap how many tools they take (Cursor sends 40), and operators want a server that
cannot write. A filter decides visibility once, at build time; hidden tools are absent from
``tools/list`` and refused on call with a message saying why, never silently ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mcpkit.tools import ToolSpec
from mcpkit.tools.coerce import as_bool

logger = logging.getLogger(__name__)


def _split(text: str | None) -> frozenset[str]:
    return frozenset(part.strip() for part in (text or "").split(",") if part.strip())


ALLOW_SETTING = "MCPKIT_TOOLS_ALLOW"
"""The environment variable that sets :attr:`ToolFilter.allow`, named in a refusal's reason."""


def _names(value: str | Iterable[str] | None) -> frozenset[str]:
    return _split(value) if isinstance(value, str) else frozenset(value or ())


@dataclass(frozen=True)
class ToolFilter:
    """Include/exclude by category, an allow-list of tool names, plus read-only.

    ``include`` of ``None`` means every category; an exclusion wins over an inclusion, so
    ``include=a,b exclude=b`` shows only ``a``. ``allow`` of ``None`` means every tool; a list
    shows only the tools it names, and the other settings still hide some of those.
    """

    include: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()
    read_only: bool = False
    allow: frozenset[str] | None = None

    @classmethod
    def parse(
        cls,
        include: str | Iterable[str] | None = None,
        exclude: str | Iterable[str] | None = None,
        read_only: bool | str | None = None,
        allow: str | Iterable[str] | None = None,
    ) -> ToolFilter:
        """Build a filter from comma-separated strings or collections."""
        return cls(
            include=_names(include) or None,
            exclude=_names(exclude),
            read_only=as_bool(read_only) if read_only not in (None, "") else False,
            allow=_names(allow) or None,
        )

    def merged(self, other: ToolFilter) -> ToolFilter:
        """Both filters at once: the stricter of each setting."""
        return ToolFilter(
            _both(self.include, other.include),
            self.exclude | other.exclude,
            self.read_only or other.read_only,
            _both(self.allow, other.allow),
        )

    def hidden_reason(self, tool: ToolSpec) -> str | None:
        """Why ``tool`` is hidden, or ``None`` when it is shown."""
        if self.allow is not None and tool.name not in self.allow:
            return f"it is not in the server's allow-list {ALLOW_SETTING}"
        if self.read_only and not tool.read_only:
            return "the server is in read-only mode and this tool can change data"
        if tool.category in self.exclude:
            return f"its category {tool.category!r} is excluded"
        if self.include is not None and tool.category not in self.include:
            return f"its category {tool.category!r} is not among the included categories"
        return None

    def apply(self, tools: Sequence[ToolSpec]) -> tuple[list[ToolSpec], dict[str, str]]:
        """Split ``tools`` into the visible ones and a map of hidden name -> reason.

        Category names that match no tool are logged as warnings: a typo in an include list
        (``MCPKIT_TOOLS_INCLUDE``, say) would otherwise hide everything without a word.
        """
        known = {t.category for t in tools}
        for name in sorted(((self.include or frozenset()) | self.exclude) - known):
            logger.warning(
                "tool filter names unknown category %r; known categories: %s", name, ", ".join(sorted(known))
            )
        for name in sorted((self.allow or frozenset()) - {t.name for t in tools}):
            logger.warning("%s names unknown tool %r; it allows no tool of that name", ALLOW_SETTING, name)
        visible: list[ToolSpec] = []
        hidden: dict[str, str] = {}
        for tool in tools:
            reason = self.hidden_reason(tool)
            if reason is None:
                visible.append(tool)
            else:
                hidden[tool.name] = reason
        return visible, hidden


def _both(one: frozenset[str] | None, other: frozenset[str] | None) -> frozenset[str] | None:
    """What two "only these" sets allow together; ``None`` allows everything."""
    if one is None:
        return other
    if other is None:
        return one
    return one & other
