"""XML results with a size cap that keeps the document well-formed and loses nothing silently.

Cutting rendered XML at a character count leaves open tags behind: exactly the malformed output
that a Redmine server once sent and its client could not parse. So the cap works on the tree, in this order, stopping as soon as it fits:

1. lists built by :func:`mcpkit.results.page_of` are shortened at an item boundary (the whole
   answer's list first, then the longest lists inside it), keeping at least one item, with
   ``next_offset`` moved and a sentence saying which call reads the rest;
2. the longest texts and attribute values are cut, each ending in a marker that says how many
   characters went and, where the tree says how (``Element.more``, a list's ``item_call``),
   which call reads them in full;
3. only if many small fields still do not fit, trailing children of the root are left out,
   with a comment saying how many.
The root is marked ``truncated="true"`` whenever anything was cut.
"""

from __future__ import annotations

from collections.abc import Iterator

import mcp_types

from mcpkit.results._paging import PageMark
from mcpkit.results._text import DEFAULT_TEXT_LIMIT
from mcpkit.results._xml import Element, parse_xml, render

XML_NOTE_MAX = 200
"""Upper bound on what the truncation marking adds on top of ``limit`` (attribute + comment)."""

MIN_KEPT = 40
"""Characters a shortened text or attribute value keeps at least."""

_MAX_SHRINK_ROUNDS = 200


def _cut_marker(dropped: int, total: int, reader: str | None) -> str:
    where = f"; {reader}" if reader else ""
    return f"… [cut {dropped} of {total} characters{where}]"


class _Fitter:
    """One capping run over a private deep copy of the caller's tree."""

    def __init__(self, root: Element, limit: int) -> None:
        self.root = root.deep_copy()
        self.limit = limit
        self.parent: dict[int, Element] = {}
        todo = [self.root]
        while todo:
            node = todo.pop()
            for child in node.children:
                self.parent[id(child)] = node
                todo.append(child)

    def fits(self) -> bool:
        return len(render(self.root)) <= self.limit

    # -- step 1: lists shortened at item boundaries ------------------------------------------

    def pages(self) -> list[Element]:
        """Page lists, the root first, then the others by rendered size, largest first."""
        found = [n for n in self._walk(self.root) if isinstance(n.page, PageMark) and n is not self.root]
        found.sort(key=lambda n: len(render(n, declaration=False)), reverse=True)
        return [self.root, *found] if isinstance(self.root.page, PageMark) else found

    def shorten(self, page: Element) -> bool:
        """Keep the most leading items of ``page`` that fit (at least one); whether it changed."""
        mark: PageMark = page.page
        items = list(page.children)
        if len(items) <= 1:
            return False

        def keep(count: int) -> None:
            page.children = items[:count]
            mark.apply(page, count, cap=self.limit)

        low, high = 1, len(items)
        while low < high:
            middle = (low + high + 1) // 2
            keep(middle)
            if self.fits():
                low = middle
            else:
                high = middle - 1
        keep(low)
        return low < len(items)

    # -- step 2: long strings cut with a pointer ---------------------------------------------

    def _walk(self, top: Element) -> Iterator[Element]:
        todo = [top]
        while todo:
            node = todo.pop()
            yield node
            todo.extend(node.children)

    def reader(self, node: Element) -> str | None:
        """How to read ``node`` in full: its own ``more``, an ancestor's, or its list's item call."""
        current: Element | None = node
        while current is not None:
            if current.more:
                return current.more
            up = self.parent.get(id(current))
            if up is not None and isinstance(up.page, PageMark):
                call = up.page.item_reader(current)
                if call:
                    return f"call {call} to read it in full"
            current = up
        return None

    def shrink_strings(self) -> bool:
        """Cut the longest strings (in place) until the tree fits; whether it does.

        Each round cuts the currently longest value, keeping a prefix of its original text and a
        marker. Every round makes a value strictly shorter and none goes below ``MIN_KEPT``, so
        the loop ends.
        """
        originals: dict[tuple[int, str, str], str] = {}
        markers: dict[tuple[int, str, str], int] = {}
        for _ in range(_MAX_SHRINK_ROUNDS):
            excess = len(render(self.root)) - self.limit
            if excess <= 0:
                return True
            best: tuple[Element, str, str] | None = None
            best_len = 0
            for slot in self._slots():
                key = (id(slot[0]), slot[1], slot[2])
                length = len(_get(slot))
                room = markers.get(key, 0)
                if length - room > MIN_KEPT + 20 and length > best_len:
                    best, best_len = slot, length
            if best is None:
                return False
            key = (id(best[0]), best[1], best[2])
            original = originals.setdefault(key, _get(best))
            reader = self.reader(best[0])
            sample = _cut_marker(len(original), len(original), reader)
            keep = max(MIN_KEPT, len(_get(best)) - excess - len(sample))
            if keep >= len(original):
                return False
            marker = _cut_marker(len(original) - keep, len(original), reader)
            markers[key] = len(marker)
            _put(best, original[:keep] + marker)
        return False

    def _slots(self) -> Iterator[tuple[Element, str, str]]:
        for node in self._walk(self.root):
            if node.text:
                yield node, "text", ""
            if node.tail:
                yield node, "tail", ""
            for key in node.attrs:
                if key not in _PAGING_ATTRS:
                    yield node, "attr", key

    # -- step 3: last resort -------------------------------------------------------------------

    def drop_trailing(self) -> None:
        """Keep the leading root children that fit; a comment says how many were left out."""
        total = len(self.root.children)
        items = list(self.root.children)
        reader = self.root.more
        tail = f"; {reader}" if reader else ""

        def keep(count: int) -> None:
            self.root.children = items[:count]
            self.root.comment = (
                f"truncated: {total - count} of {total} child elements omitted to stay within "
                f"{self.limit} characters{tail}"
            )

        low, high = 0, total
        while low < high:
            middle = (low + high + 1) // 2
            keep(middle)
            if self.fits():
                low = middle
            else:
                high = middle - 1
        keep(low)

    def run(self) -> str:
        self.root.set("truncated", "true")
        for page in self.pages():
            if self.fits():
                break
            self.shorten(page)
        if not self.fits() and not self.shrink_strings() and not isinstance(self.root.page, PageMark):
            self.drop_trailing()
        return render(self.root)


_PAGING_ATTRS = frozenset({"id", "offset", "limit", "returned", "total_count", "next_offset", "type"})


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


def cap_xml(root: Element, limit: int) -> str:
    """``render(root)`` if it fits in ``limit`` characters, else a well-formed shortened document.

    The caller's tree is never changed. Nothing is cut without a mark: shortened lists carry
    ``next_offset`` and a sentence naming the next call, cut values end in a marker. The result
    is at most ``limit + XML_NOTE_MAX`` characters unless one list item, kept whole in identity
    and small fields, is larger than that on its own.
    """
    if limit < 0:
        raise ValueError(f"limit must be zero or more, got {limit}")
    full = render(root)
    if len(full) <= limit:
        return full
    return _Fitter(root, limit).run()


def xml_result(root: Element | str, *, limit: int | None = DEFAULT_TEXT_LIMIT) -> mcp_types.CallToolResult:
    """A successful result whose one text item is an XML document (declaration included).

    ``root`` is an :class:`Element` tree or XML text; text is parsed first (``ValueError`` if
    it is not well-formed), so whatever is returned is well-formed. ``limit=None``: no cap.
    """
    tree = parse_xml(root) if isinstance(root, str) else root
    document = render(tree) if limit is None else cap_xml(tree, limit)
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=document)])
