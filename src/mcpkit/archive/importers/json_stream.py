"""A cursor over JSON text read as a stream, decoding one value at a time.

X archives (``tweets.js``, a JavaScript assignment of one array) and Mastodon archives
(``outbox.json``, an object whose ``orderedItems`` is the array) hold their records in a
single JSON value of up to several hundred MB, often on one line. Neither reader may hold it
whole, so both walk it with this cursor: the structure around the records (``[``, ``,``,
``{``, keys) is read character by character, each record is decoded by
:meth:`json.JSONDecoder.raw_decode` from the cursor's position in a buffer of about a
megabyte.

A record cut by the buffer's end fails to decode (or, for a bare number, ends exactly at the
end: ``1`` of ``12``), so more text is read and the record decoded again. The buffer grows
geometrically while one record does not fit, so a large record costs linear time, and a
record longer than ``max_value`` characters is refused rather than read without bound.

Errors are :class:`JsonStreamError` subclasses saying what happened (cut short, too long,
not JSON); each reader turns them into its own one-line message naming its file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from mcpkit.archive.errors import ArchiveError

__all__ = [
    "JsonCursor",
    "JsonInvalidError",
    "JsonStreamError",
    "JsonTooLongError",
    "JsonTruncatedError",
]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_AFTER_NUMBER = frozenset(",]} \t\n\r")
_JSON = json.JSONDecoder()


_LITERALS = ("true", "false", "null")


def _cut(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether decoding failed only because ``text`` ends too soon (more text could mend it)."""
    if exc.pos >= len(text) - 1 or "Unterminated" in exc.msg:
        return True
    rest = text[exc.pos :]
    return len(rest) < 5 and any(literal.startswith(rest) for literal in _LITERALS)


class JsonStreamError(ArchiveError):
    """A value the cursor could not decode; ``reason`` is the decoder's message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class JsonTruncatedError(JsonStreamError):
    """The text ends inside a value."""


class JsonTooLongError(JsonStreamError):
    """A value longer than the cursor's ``max_value`` characters."""


class JsonInvalidError(JsonStreamError):
    """Text that is not JSON where a value should be."""


class JsonCursor:
    """A position in JSON text that ``read(n)`` serves (up to ``n`` characters, ``""`` only at
    its end); see the module docstring.

    :meth:`peek` and :meth:`next` read the structure between values, :meth:`value` decodes one
    value. :meth:`line` and :meth:`snippet` say where the cursor is, for error messages.
    """

    def __init__(self, read: Callable[[int], str], *, max_value: int, chunk: int = 1 << 20) -> None:
        self._read = read
        self._chunk = chunk
        self.max_value = max_value
        self._buffer = ""
        self._pos = 0
        self._line = 1  # line number of _buffer[0]
        self.eof = False

    def fill(self) -> bool:
        """Read more text (at least as much as is buffered: geometric growth); False at the end."""
        if self.eof:
            return False
        rest = self._buffer[self._pos :]
        chunk = self._read(max(self._chunk, len(rest)))
        if not chunk:
            self.eof = True
            return False
        self._line += self._buffer.count("\n", 0, self._pos)
        self._buffer = rest + chunk
        self._pos = 0
        return True

    def match(self, pattern: re.Pattern[str], want: int = 256) -> re.Match[str] | None:
        """``pattern`` matched at the cursor once ``want`` characters are buffered (or all
        there are); on a match the cursor moves past it."""
        while len(self._buffer) - self._pos < want and self.fill():
            pass
        found = pattern.match(self._buffer, self._pos)
        if found is not None:
            self._pos = found.end()
        return found

    def peek(self) -> str:
        """The next character that is not whitespace, staying before it; ``""`` at the end.
        More than ``max_value`` characters of whitespace in a row raise
        :class:`JsonTooLongError` (a file of nothing but blanks is not streamed to its end)."""
        blank = 0
        while True:
            start = self._pos
            self._pos = _WHITESPACE.match(self._buffer, self._pos).end()  # type: ignore[union-attr]
            blank += self._pos - start
            if blank > self.max_value:
                raise JsonTooLongError(f"more than {self.max_value:,} characters of whitespace in a row")
            if self._pos < len(self._buffer):
                return self._buffer[self._pos]
            if not self.fill():
                return ""

    def next(self) -> str:
        """The next character that is not whitespace, moving past it; ``""`` at the end."""
        char = self.peek()
        if char:
            self._pos += 1
        return char

    def value(self) -> Any:
        """Decode the value at the cursor and move past it."""
        if not self.peek():
            raise JsonTruncatedError("the text ends where a value should start")
        while True:
            try:
                value, end = _JSON.raw_decode(self._buffer, self._pos)
            except RecursionError:
                raise JsonInvalidError("arrays or objects nested too deeply") from None
            except json.JSONDecodeError as exc:
                cut = _cut(self._buffer, exc)
                if len(self._buffer) - self._pos > self.max_value:
                    raise (JsonTooLongError if cut else JsonInvalidError)(exc.msg) from None
                if self.fill():
                    continue
                raise (JsonTruncatedError if cut else JsonInvalidError)(exc.msg) from None
            if (
                isinstance(value, int | float)
                and (end == len(self._buffer) or self._buffer[end] not in _AFTER_NUMBER)
                and self.fill()
            ):
                continue  # a number cut by the buffer's end ("1" of "12", "0." of "0.5") goes on
            if end - self._pos > self.max_value:
                raise JsonTooLongError(f"a value of {end - self._pos:,} characters")
            self._pos = end
            return value

    def line(self) -> int:
        """The line the cursor is on (1 for the first)."""
        return self._line + self._buffer.count("\n", 0, self._pos)

    def snippet(self, size: int = 20) -> str:
        """The next ``size`` characters, ``""`` at the end."""
        return self._buffer[self._pos : self._pos + size]
