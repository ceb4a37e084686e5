"""The output cap, lossless: a long answer is cut, and the rest stays readable by ``readmore``.

Clients limit how much tool output reaches the model (Claude Code warns over 10,000 tokens and
cuts at 25,000 by default). A gateway that lets the client cut would drop text silently; one
that cuts itself must say where the rest is. With ``output_cap`` set, the text of a result
longer than the cap is cut (at a line break near the cap when there is one), the whole text
is kept in memory for a while, and the result ends with a line naming the ``readmore`` call
that returns the next part. ``readmore`` has no ``_`` in its name, so it can never meet a
``SERVER_TOOL`` name.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from typing import Any

TOOL = "readmore"
KEEP = 64
"""How many cut answers are kept for ``readmore`` (the oldest go first)."""

DEFINITION: dict[str, Any] = {
    "name": TOOL,
    "description": "Read the rest of an answer that was cut because it was long.\n"
    "The cut answer ends with the id and offset to pass here.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The id named at the end of the cut answer"},
            "offset": {"type": "integer", "description": "Where to continue, as named there"},
        },
        "required": ["id", "offset"],
    },
    "annotations": {"readOnlyHint": True},
}


class Overflow:
    """Cuts long results to ``cap`` characters and serves the rest in windows of the same size."""

    def __init__(self, cap: int, keep: int = KEEP) -> None:
        self.cap = cap
        self.keep = keep
        self._texts: OrderedDict[str, str] = OrderedDict()

    def apply(self, raw: dict[str, Any]) -> dict[str, Any]:
        """``raw`` with its text cut to the cap and a pointer to the rest (unchanged when short)."""
        items = raw.get("content")
        if not isinstance(items, list):
            return raw
        texts = [i.get("text") for i in items if isinstance(i, dict) and i.get("type") == "text"]
        whole = "\n".join(t for t in texts if isinstance(t, str))
        if len(whole) <= self.cap:
            return raw
        key = secrets.token_hex(6)
        self._texts[key] = whole
        while len(self._texts) > self.keep:
            self._texts.popitem(last=False)
        others = [i for i in items if not (isinstance(i, dict) and i.get("type") == "text")]
        return {**raw, "content": [{"type": "text", "text": self._window(key, whole, 0)}, *others]}

    def read(self, key: str, offset: int) -> str | None:
        """The window of the kept text at ``offset``; None when the id is unknown or expired."""
        whole = self._texts.get(key)
        if whole is None:
            return None
        return self._window(key, whole, max(0, min(offset, len(whole))))

    def _window(self, key: str, whole: str, offset: int) -> str:
        end = offset + self.cap
        if end < len(whole):
            newline = whole.rfind("\n", offset + self.cap * 9 // 10, end)
            end = newline + 1 if newline > offset else end
            return (
                whole[offset:end]
                + f"\n[cut: characters {offset} to {end} of {len(whole)} shown; "
                + f"the rest: readmore with id={key} and offset={end}]"
            )
        return whole[offset:] + (
            f"\n[end: characters {offset} to {len(whole)} of {len(whole)}]" if offset else ""
        )
