"""One contract for every list a tool returns: nothing is dropped without a pointer to the rest.

A model steps through a long list by calling the tool again. It can only do that if each answer
says where it stands, and a size cap that silently shortens a page makes the model skip items
(seen in a real session: ``list_issues limit=100`` returned 61 of 100 issues, the model asked
for ``offset=100`` next, and 39 issues were never seen). So every list carries:

* ``offset``, ``limit``, ``returned``, ``total_count`` (when the backend knows it), and
  ``next_offset`` until the last page: continuing at ``next_offset`` visits every item once;
* a plain sentence saying what was shown and which call reads the rest.

:func:`page_of` builds such a list as XML (the cap in :func:`mcpkit.results.cap_xml` then shortens
it at an item boundary and moves ``next_offset``); :func:`text_page` does the same for plain
text answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import mcp_types

from mcpkit.results._text import DEFAULT_TEXT_LIMIT, cap_text, text_result
from mcpkit.results._xml import Element

__all__ = ["PageMark", "Window", "fill", "page_of", "text_page"]


@dataclass(frozen=True, slots=True)
class Window:
    """The slice of a list a call asked for, and the list's length when the backend knows it."""

    offset: int = 0
    limit: int = 25
    total_count: int | None = None

    def __post_init__(self) -> None:
        if self.offset < 0:
            raise ValueError(f"offset must be zero or more, got {self.offset}")
        if self.limit < 1:
            raise ValueError(f"limit must be one or more, got {self.limit}")
        if self.total_count is not None and self.total_count < 0:
            raise ValueError(f"total_count must be zero or more, got {self.total_count}")

    def next_offset(self, returned: int, fetched: int | None = None) -> int | None:
        """Where the next page starts, or ``None`` on the last page.

        ``fetched`` is how many items the backend gave for this page; when a cap returned fewer
        (``returned < fetched``) more remain whatever the total says. With no total known, a
        full page means there may be more; a short one is the end.
        """
        fetched = returned if fetched is None else fetched
        end = self.offset + returned
        if returned < fetched:
            return end
        if self.total_count is not None:
            return end if end < self.total_count else None
        return end if returned >= self.limit else None


def fill(template: str, **values: object) -> str:
    """``template`` with ``{name}`` placeholders replaced; other braces are left alone."""
    out = template
    for name, value in values.items():
        out = out.replace("{" + name + "}", str(value))
    return out


@dataclass(frozen=True, slots=True)
class PageMark:
    """What a cap needs to shorten a list honestly: its window and how to continue it."""

    window: Window
    next_call: str
    item_call: str | None
    fetched: int

    def item_id(self, item: Element) -> str | None:
        """The id a reader of one item needs: the ``id`` attribute, else an ``<id>`` child."""
        if "id" in item.attrs:
            return item.attrs["id"]
        for child in item.children:
            if child.tag == "id" and child.text:
                return child.text
        return None

    def item_reader(self, item: Element) -> str | None:
        """The call that reads ``item`` in full, when the list says how."""
        if self.item_call is None:
            return None
        ident = self.item_id(item)
        if "{id}" in self.item_call and ident is None:
            return None
        return fill(self.item_call, id=ident)

    def apply(self, element: Element, returned: int, *, cap: int | None = None) -> None:
        """Set the paging attributes and the sentence on ``element`` for ``returned`` items."""
        window = self.window
        nxt = window.next_offset(returned, self.fetched)
        element.set("offset", window.offset).set("limit", window.limit)
        element.set("total_count", window.total_count).set("returned", returned)
        element.set("next_offset", nxt)
        element.comment = describe(window, returned, self.fetched, nxt, self.next_call, cap)


def describe(
    window: Window,
    returned: int,
    fetched: int,
    next_offset: int | None,
    next_call: str,
    cap: int | None = None,
) -> str | None:
    """The sentence a model reads about a page: what it holds and what to call next."""
    if next_offset is None:
        return None
    first, last = window.offset + 1, window.offset + returned
    of_total = f" of {window.total_count}" if window.total_count is not None else ""
    shown = f"items {first} to {last}{of_total}" if returned else f"no items{of_total}"
    call = fill(next_call, offset=next_offset)
    if returned < fetched:
        limit = f" to stay within {cap} characters" if cap is not None else ""
        return f"Shortened to {shown}{limit}; call {call} for the rest."
    return f"Showing {shown}; call {call} for the next page."


def page_of(
    tag: str,
    items: Sequence[Element],
    window: Window,
    *,
    next_call: str,
    item_call: str | None = None,
    attrs: Mapping[str, object] | None = None,
) -> Element:
    """A list element ``<tag type="array" offset limit returned total_count next_offset>``.

    ``next_call`` says how to continue, with ``{offset}`` standing for the next offset
    ("list_issues with offset={offset}"); ``item_call`` says how to read one item in full, with
    ``{id}`` taken from the item ("get_issue with id={id}"). A size cap applied later by
    :func:`mcpkit.results.cap_xml` shortens the list at an item boundary and moves
    ``next_offset``, so stepping by ``next_offset`` still visits every item exactly once.
    """
    element = Element(tag, {**dict(attrs or {}), "type": "array"})
    element.add(*items)
    mark = PageMark(window, next_call, item_call, len(items))
    element.page = mark
    mark.apply(element, len(items))
    return element


def text_page(
    items: Sequence[str],
    window: Window,
    *,
    next_call: str,
    header: str = "",
    cap: int | None = DEFAULT_TEXT_LIMIT,
    separator: str = "\n\n",
) -> mcp_types.CallToolResult:
    """A plain-text list: ``header``, the items that fit in ``cap``, and a line on what is next.

    The page is shortened at an item boundary (at least one item is kept, itself cut with a note
    if it alone is too long), and the last line gives the numbers and the call that continues,
    so a reader can page on without losing an item.
    """
    fetched = len(items)
    kept = len(items)
    if cap is not None:
        budget = cap - len(header) - _FOOTER_ROOM
        used = 0
        for i, item in enumerate(items):
            used += len(item) + (len(separator) if i else 0)
            if used > budget:
                kept = max(1, i)
                break
    shown = list(items[:kept])
    if cap is not None and shown and len(shown[0]) > cap - len(header) - _FOOTER_ROOM and kept == 1:
        shown[0] = cap_text(shown[0], max(0, cap - len(header) - _FOOTER_ROOM))
    nxt = window.next_offset(kept, fetched)
    sentence = describe(window, kept, fetched, nxt, next_call, cap)
    parts = [header] if header else []
    if shown:
        parts.append(separator.join(shown))
    if sentence:
        parts.append(f"[{sentence}]")
    return text_result("\n\n".join(parts), limit=None)


_FOOTER_ROOM = 300
"""Characters kept free for the closing sentence of a text page."""
