"""Rules for one content item of a ``CallToolResult``, per protocol version.

Each rule mirrors the spec's schema.json for that version (required fields, JSON types, enums,
ranges, ``format: byte`` and ``format: uri``), and items a version does not know are reported as
such: audio before 2025-03-26, resource links before 2025-06-18. Unknown extra fields are
allowed, as the schema allows them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpkit.results._checks import Path, Report

ROLES = ("user", "assistant")
ICON_THEMES = ("light", "dark")

FIRST_VERSION = {
    "text": "2024-11-05",
    "image": "2024-11-05",
    "resource": "2024-11-05",
    "audio": "2025-03-26",
    "resource_link": "2025-06-18",
}
"""Content types and the protocol version that introduced each."""


def check_meta(report: Report, obj: Mapping[str, Any], path: Path) -> None:
    """``_meta`` is an object where the version defines it (2025-06-18 on for content)."""
    if report.has("2025-06-18"):
        report.typed(obj, "_meta", "object", path, required=False)


def check_annotations(report: Report, item: Mapping[str, Any], path: Path) -> None:
    if not report.typed(item, "annotations", "object", path, required=False):
        return
    notes = item["annotations"]
    here = [*path, "annotations"]
    if report.typed(notes, "audience", "array", here, required=False):
        for i, role in enumerate(notes["audience"]):
            if role not in ROLES:
                report.add([*here, "audience", i], f"must be one of {', '.join(ROLES)}")
    if report.typed(notes, "priority", "number", here, required=False) and not 0 <= notes["priority"] <= 1:
        report.add([*here, "priority"], "must be between 0 and 1")
    if report.has("2025-06-18"):
        report.typed(notes, "lastModified", "string", here, required=False)


def check_icons(report: Report, obj: Mapping[str, Any], path: Path) -> None:
    """``icons`` (2025-11-25 on): each needs a ``src`` URI; sizes are strings; theme light/dark."""
    if not report.has("2025-11-25") or not report.typed(obj, "icons", "array", path, required=False):
        return
    for i, icon in enumerate(obj["icons"]):
        here = [*path, "icons", i]
        if not isinstance(icon, Mapping):
            report.add(here, "must be an object")
            continue
        report.uri(icon, "src", here)
        report.strings(icon, here, (), ("mimeType",))
        if report.typed(icon, "sizes", "array", here, required=False):
            for j, size in enumerate(icon["sizes"]):
                if not isinstance(size, str):
                    report.add([*here, "sizes", j], "must be a string")
        if "theme" in icon and icon["theme"] not in ICON_THEMES:
            report.add([*here, "theme"], f"must be one of {', '.join(ICON_THEMES)}")


def _text(report: Report, item: Mapping[str, Any], path: Path) -> None:
    report.typed(item, "text", "string", path, required=True)


def _binary(report: Report, item: Mapping[str, Any], path: Path) -> None:
    report.base64(item, "data", path)
    report.typed(item, "mimeType", "string", path, required=True)


def _embedded(report: Report, item: Mapping[str, Any], path: Path) -> None:
    if not report.typed(item, "resource", "object", path, required=True):
        return
    contents = item["resource"]
    here = [*path, "resource"]
    report.uri(contents, "uri", here)
    report.strings(contents, here, (), ("mimeType",))
    check_meta(report, contents, here)
    # The schema says anyOf(text contents, blob contents): one good branch is enough.
    if isinstance(contents.get("text"), str):
        return
    if "blob" in contents:
        report.base64(contents, "blob", here)
    elif "text" in contents:
        report.typed(contents, "text", "string", here, required=True)
    else:
        report.add(here, "needs 'text' (a string) or 'blob' (base64)")


def _link(report: Report, item: Mapping[str, Any], path: Path) -> None:
    report.uri(item, "uri", path)
    report.strings(item, path, ("name",), ("title", "description", "mimeType"))
    report.typed(item, "size", "integer", path, required=False)
    check_icons(report, item, path)


_RULES: dict[str, Callable[[Report, Mapping[str, Any], Path], None]] = {
    "text": _text,
    "image": _binary,
    "audio": _binary,
    "resource": _embedded,
    "resource_link": _link,
}


def check_content_item(report: Report, item: Any, path: Path) -> None:
    """Report every problem of one content item at ``path``."""
    if not isinstance(item, Mapping):
        report.add(path, "content item must be an object")
        return
    if not report.typed(item, "type", "string", path, required=True):
        return
    kind = item["type"]
    since = FIRST_VERSION.get(kind)
    if since is None:
        known = ", ".join(t for t, v in FIRST_VERSION.items() if report.has(v))
        report.add([*path, "type"], f"unknown content type {kind[:40]!r} (known: {known})")
        return
    if not report.has(since):
        report.add([*path, "type"], f"{kind} content is not in protocol {report.version} (added in {since})")
        return
    _RULES[kind](report, item, path)
    check_annotations(report, item, path)
    check_meta(report, item, path)
