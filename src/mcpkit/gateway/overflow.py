"""The output cap, lossless: a long answer is cut, and the rest stays readable by ``readmore``.

Clients limit how much tool output reaches the model (Claude Code warns over 10,000 tokens and
cuts at 25,000 by default). A gateway that lets the client cut would drop text silently; one
that cuts itself must say where the rest is. With ``output_cap`` set, the text of a result
longer than the cap is cut (at a line break near the cap when there is one), the whole text
is kept for a while, and the result ends with a line naming the ``readmore`` call that
returns the next part. ``readmore`` has no ``_`` in its name, so it can never meet a
``SERVER_TOOL`` name.

Where the whole texts are kept: in memory, within a byte budget (the oldest go first), or,
with ``overflow_dir`` set, as files in that directory, so that replicas behind a load
balancer that share the directory serve each other's ``readmore`` (files older than an hour
are removed). Ids are random (128 bits) and are checked before they name a file.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import tempfile
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

TOOL = "readmore"
KEEP_BYTES = 256 * 1024 * 1024
"""Characters of cut answers kept in memory for ``readmore`` (the oldest go first)."""
KEEP_SECONDS = 3600.0
"""How long a cut answer stays in ``overflow_dir``."""
_ID = re.compile(r"[0-9a-f]{32}")

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

    def __init__(
        self,
        cap: int,
        *,
        keep_bytes: int = KEEP_BYTES,
        directory: Path | None = None,
        keep_seconds: float = KEEP_SECONDS,
    ) -> None:
        self.cap = cap
        self.keep_bytes = keep_bytes
        self.directory = directory
        self.keep_seconds = keep_seconds
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._kept = 0
        self._swept = 0.0
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    def apply(self, raw: dict[str, Any]) -> dict[str, Any]:
        """``raw`` with its text cut to the cap and a pointer to the rest (unchanged when short)."""
        items = raw.get("content")
        if not isinstance(items, list):
            return raw
        texts = [i.get("text") for i in items if isinstance(i, dict) and i.get("type") == "text"]
        whole = "\n".join(t for t in texts if isinstance(t, str))
        if len(whole) <= self.cap:
            return raw
        key = secrets.token_hex(16)
        self._keep(key, whole)
        others = [i for i in items if not (isinstance(i, dict) and i.get("type") == "text")]
        return {**raw, "content": [{"type": "text", "text": self._window(key, whole, 0)}, *others]}

    def read(self, key: str, offset: int) -> str | None:
        """The window of the kept text at ``offset``; None when the id is unknown or expired."""
        whole = self._kept_text(key)
        if whole is None:
            return None
        return self._window(key, whole, max(0, min(offset, len(whole))))

    def _keep(self, key: str, whole: str) -> None:
        if self.directory is not None:
            self._sweep()
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".cut-")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(whole)
            os.replace(tmp, self.directory / f"{key}.txt")
            return
        self._texts[key] = whole
        self._kept += len(whole)
        while self._kept > self.keep_bytes and len(self._texts) > 1:
            _, dropped = self._texts.popitem(last=False)
            self._kept -= len(dropped)

    def _kept_text(self, key: str) -> str | None:
        if not _ID.fullmatch(key):
            return None  # never a path: ids are hex only
        if self.directory is None:
            return self._texts.get(key)
        try:
            return (self.directory / f"{key}.txt").read_text(encoding="utf-8")
        except OSError:
            return None

    def _sweep(self) -> None:
        """Remove files older than ``keep_seconds`` (at most once a minute)."""
        now = time.time()
        if self.directory is None or now - self._swept < 60:
            return
        self._swept = now
        for path in self.directory.glob("*.txt"):
            with contextlib.suppress(OSError):
                if now - path.stat().st_mtime > self.keep_seconds:
                    path.unlink()

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
