"""XML results with a size cap that keeps the document well-formed.

Cutting rendered XML at a character count leaves open tags behind: exactly the malformed output
seed 002 was about. So the cap works on the tree: it keeps the first children of the root that
fit, marks the root ``truncated="true"`` and leaves a comment saying how many were omitted. If
even one child is too big, long texts and attribute values are shortened (each saying how much
was cut) before giving up on that child.
"""

from __future__ import annotations

from collections.abc import Iterator

import mcp_types

from mcpkit.results.text import DEFAULT_TEXT_LIMIT
from mcpkit.results.xml import Element, parse_xml, render

XML_NOTE_MAX = 200
"""Upper bound on what the truncation marking adds on top of ``limit`` (attribute + comment)."""

MIN_KEPT = 40
"""Characters a shortened text or attribute value keeps at least."""

_MAX_SHRINK_ROUNDS = 200
_MARKER_ROOM = 30  # len(_cut_marker(n)) for any n below 10**10


def _cut_marker(dropped: int) -> str:
    return f"… [cut {dropped} characters]"


def _with_first(root: Element, count: int) -> Element:
    head = root.copy()
    head.children = root.children[:count]
    return head


def _largest_fitting(root: Element, limit: int) -> int:
    """How many leading children of ``root`` fit in ``limit`` (binary search over renders)."""
    low, high = 0, len(root.children)
    while low < high:
        middle = (low + high + 1) // 2
        if len(render(_with_first(root, middle))) <= limit:
            low = middle
        else:
            high = middle - 1
    return low


def _slots(root: Element) -> Iterator[tuple[Element, str, str]]:
    """Every shortenable string in the tree: (element, kind, key) with kind text/tail/attr."""
    todo = [root]
    while todo:
        node = todo.pop()
        if node.text:
            yield node, "text", ""
        if node.tail:
            yield node, "tail", ""
        for key in node.attrs:
            yield node, "attr", key
        todo.extend(node.children)


def _get(slot: tuple[Element, str, str]) -> str:
    node, kind, key = slot
    if kind == "attr":
        return node.attrs[key]
    return (node.text if kind == "text" else node.tail) or ""


def _put(slot: tuple[Element, str, str], value: str) -> None:
    node, kind, key = slot
    if kind == "attr":
        node.attrs[key] = value
    elif kind == "text":
        node.text = value
    else:
        node.tail = value


def _shrink_strings(tree: Element, limit: int) -> bool:
    """Shorten the longest strings of ``tree`` (in place) until it fits; whether it does.

    Each round cuts the currently longest value, keeping a prefix of its original text and a
    marker saying how many characters went. Every round makes a value strictly shorter and no
    value goes below ``MIN_KEPT``, so the loop ends.
    """
    originals: dict[tuple[int, str, str], str] = {}
    for _ in range(_MAX_SHRINK_ROUNDS):
        excess = len(render(tree)) - limit
        if excess <= 0:
            return True
        candidates = [s for s in _slots(tree) if len(_get(s)) > MIN_KEPT + _MARKER_ROOM]
        if not candidates:
            return False
        slot = max(candidates, key=lambda s: len(_get(s)))
        original = originals.setdefault((id(slot[0]), slot[1], slot[2]), _get(slot))
        keep = max(MIN_KEPT, len(_get(slot)) - excess - _MARKER_ROOM)
        _put(slot, original[:keep] + _cut_marker(len(original) - keep))
    return False


def cap_xml(root: Element, limit: int) -> str:
    """``render(root)`` if it fits in ``limit`` characters, else a well-formed shortened document.

    The caller's tree is never changed. The result is at most ``limit + XML_NOTE_MAX``
    characters unless ``limit`` is smaller than the root element alone (with shortened values).
    """
    if limit < 0:
        raise ValueError(f"limit must be zero or more, got {limit}")
    full = render(root)
    if len(full) <= limit:
        return full
    total = len(root.children)
    kept = _largest_fitting(root, limit)
    head = _with_first(root, kept)
    shortened = False
    if kept == 0:
        # Not even the first child fits: shorten its long values, else keep only the root.
        for count in (1, 0) if total else (0,):
            head = _with_first(root, count).deep_copy()
            shortened = True
            if _shrink_strings(head, limit):
                break
        kept = len(head.children)
    note = f"truncated: {total - kept} of {total} child elements omitted"
    if shortened:
        note += ", long values shortened"
    head.set("truncated", "true")
    head.comment = f"{note} to stay within {limit} characters"
    return render(head)


def xml_result(root: Element | str, *, limit: int | None = DEFAULT_TEXT_LIMIT) -> mcp_types.CallToolResult:
    """A successful result whose one text item is an XML document (declaration included).

    ``root`` is an :class:`Element` tree or XML text; text is parsed first (``ValueError`` if
    it is not well-formed), so whatever is returned is well-formed. ``limit=None``: no cap.
    """
    tree = parse_xml(root) if isinstance(root, str) else root
    document = render(tree) if limit is None else cap_xml(tree, limit)
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=document)])
