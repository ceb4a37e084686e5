"""The small vocabulary of :func:`mcpkit.results.validate_result`: where, what type, since when.

JSON types follow JSON Schema (what the spec's schema.json means): ``true`` is not a number,
``1.0`` is an integer. Strings declared ``format: byte`` must be canonical base64 (RFC 4648,
padded); ``format: uri`` must be an RFC 3986 URI (a scheme, then only URI characters).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")

Path = Sequence[str | int]


def pointer(path: Path) -> str:
    """RFC 6901 JSON pointer for ``path``; the document root is shown as ``/``."""
    if not path:
        return "/"
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def json_type(value: Any, expected: str) -> bool:
    """Whether ``value`` (parsed JSON) is of JSON Schema type ``expected``."""
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "object":
        return isinstance(value, Mapping)
    if expected == "array":
        return isinstance(value, list)
    if isinstance(value, bool):
        return False
    if expected == "number":
        return isinstance(value, int | float)
    if expected == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise ValueError(f"unknown JSON type {expected!r}")


def is_base64(text: str) -> bool:
    """Canonical padded base64 (no whitespace, no URL-safe alphabet); empty is valid."""
    return _BASE64.fullmatch(text) is not None


def is_uri(text: str) -> bool:
    """An RFC 3986 URI: scheme, colon, then only unreserved/reserved characters or %XX."""
    return _URI.fullmatch(text) is not None


def version_index(version: str) -> int:
    """Position of ``version`` among the protocol versions the SDK knows (``ValueError`` if none)."""
    try:
        return KNOWN_PROTOCOL_VERSIONS.index(version)
    except ValueError:
        known = ", ".join(KNOWN_PROTOCOL_VERSIONS)
        raise ValueError(f"unknown MCP protocol version {version!r} (known: {known})") from None


@dataclass
class Report:
    """Problems found so far for one protocol version."""

    version: str
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._index = version_index(self.version)

    def has(self, since: str) -> bool:
        """Whether this report's version includes a feature added in ``since``."""
        return self._index >= version_index(since)

    def add(self, path: Path, message: str) -> None:
        self.problems.append(f"{pointer(path)}: {message}")

    def typed(self, obj: Mapping[str, Any], key: str, expected: str, path: Path, *, required: bool) -> bool:
        """Check ``obj[key]`` has JSON type ``expected``; whether it is present and right."""
        if key not in obj:
            if required:
                self.add(path, f"missing required field {key!r}")
            return False
        if not json_type(obj[key], expected):
            self.add([*path, key], f"must be {_article(expected)} {expected}, got {_describe(obj[key])}")
            return False
        return True

    def strings(
        self, obj: Mapping[str, Any], path: Path, required: Sequence[str], optional: Sequence[str]
    ) -> None:
        """Type-check several string fields at once."""
        for key in required:
            self.typed(obj, key, "string", path, required=True)
        for key in optional:
            self.typed(obj, key, "string", path, required=False)

    def base64(self, obj: Mapping[str, Any], key: str, path: Path) -> bool:
        """A required base64 string field; whether it is valid."""
        if not self.typed(obj, key, "string", path, required=True):
            return False
        if not is_base64(obj[key]):
            self.add([*path, key], "is not valid base64 (RFC 4648, padded, no whitespace)")
            return False
        return True

    def uri(self, obj: Mapping[str, Any], key: str, path: Path, *, required: bool = True) -> bool:
        """A URI string field; whether it is present and valid."""
        if not self.typed(obj, key, "string", path, required=required):
            return False
        if not is_uri(obj[key]):
            self.add([*path, key], f"is not a valid URI (RFC 3986): {obj[key][:80]!r}")
            return False
        return True


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__
