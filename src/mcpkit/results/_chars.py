"""Character hygiene shared by every builder: what may travel in a result at all.

Two different hazards, two functions:

* A Python ``str`` may hold lone surrogates (from ``surrogateescape`` decoding, JSON ``\\ud800``
  escapes, bad C extensions). They cannot be encoded as UTF-8, so the SDK fails while writing
  the message and the client sees no answer at all. :func:`scrub_surrogates` makes any text
  sendable.
* XML 1.0 forbids most C0 controls, lone surrogates and U+FFFE/U+FFFF even when escaped; a single
  one makes the whole document unparsable (a client once failed on every answer holding
  such a character from an issue description). :func:`clean_xml_chars` removes
  them; removal, not replacement, because there is no character the reader would have wanted.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# XML 1.0 (5th ed.) production [2] Char, negated: everything a document may not contain.
_NOT_XML_CHAR = "[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
_SURROGATE = "[\ud800-\udfff]"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: these character classes took a few ms of every start-up."""
    return re.compile(pattern)


REPLACEMENT = "\ufffd"


def clean_xml_chars(text: str) -> str:
    """``text`` without the characters XML 1.0 does not allow (escaped or not)."""
    return _compiled(_NOT_XML_CHAR).sub("", text)


def scrub_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it always encodes as UTF-8.

    A well-formed Python ``str`` never holds a valid surrogate *pair* (astral characters are
    single code points), so every surrogate code point found here is a lone one.
    """
    return _compiled(_SURROGATE).sub(REPLACEMENT, text)


def scrub_surrogates_in(value: Any) -> Any:
    """A JSON value (parsed) with :func:`scrub_surrogates` applied to every string in it, keys
    included; the value itself when it has none (nothing is copied then).

    ``json.loads`` turns a ``"\\ud800"`` escape into a lone surrogate where stricter parsers
    (pydantic's, so the SDK's) refuse the whole message: a relay that reads such an answer
    scrubs it rather than losing it.
    """
    if isinstance(value, str):
        surrogate = _compiled(_SURROGATE)
        return surrogate.sub(REPLACEMENT, value) if surrogate.search(value) else value
    if isinstance(value, list):
        items = [scrub_surrogates_in(item) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        pairs = [(scrub_surrogates_in(k), scrub_surrogates_in(v)) for k, v in value.items()]
        changed = any(
            k is not k0 or v is not v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)
        )
        return dict(pairs) if changed else value
    return value
