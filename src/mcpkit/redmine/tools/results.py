"""The result shapes every Redmine tool shares: a page, one entity, a write, a delete preview.

Lists follow the toolkit's lossless contract (:func:`mcpkit.results.page_of`): the answer
carries ``offset``, ``limit``, ``returned``, ``total_count`` and ``next_offset``, a size cap
shortens a page only at an item boundary, and long texts in a list are excerpts whose marker
names the call that reads them in full.

The cap counts what the client receives: the bytes of the XML as it travels inside the JSON
answer, escapes included (:func:`wire_size`). It used to count characters of the XML and cut
the *text* by that excess, so a description of ``"<&>"`` (five to six bytes a character once
escaped) was cut to 40 characters. :func:`fit` knows what each character costs, keeps as much
of a text as its share of the answer holds (never under :data:`MIN_KEPT` characters), and
names in the marker the :mod:`read_text <mcpkit.redmine.tools.texts>` call that returns the
rest, exactly, in pages. In a single issue the journals give way first: a page of notes is
shortened, then the notes are cut, and only then the description.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Any

import mcp_types

from mcpkit.redmine.tools.args import confirmed
from mcpkit.redmine.tools.base import RedmineContext
from mcpkit.redmine.xml import response, singular
from mcpkit.results import DEFAULT_TEXT_LIMIT, Element, Window, escape_text, page_of, render, xml_result

MIN_KEPT = 1000
"""Characters a cut text keeps at least, whatever its escapes cost."""
READER = "read_text with source="
"""How a text element names its reader (``Element.more``): ``read_text with source="issue 9 description"``."""


EDITABLE = frozenset({("issue", "description"), ("wiki_page", "text")})
"""Texts ``edit_text`` changes: their answers carry the text's :func:`text_hash` as ``hash``."""


def text_hash(text: str) -> str:
    """What ``edit_text`` checks a text by: 16 hex digits of the SHA-256 of the text as stored.

    A text's ``updated_on`` has whole seconds, so two saves in one second looked alike; the
    hash changes with every change of the text itself."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def wire_size(text: str) -> int:
    """Bytes ``text`` takes inside the JSON answer a client receives (quotes not counted)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2


@lru_cache(maxsize=4096)
def _xml_cost(char: str) -> int:
    return wire_size(escape_text(char))


@lru_cache(maxsize=4096)
def _plain_cost(char: str) -> int:
    return wire_size(char)


def prefix_costs(text: str, *, xml: bool) -> list[int]:
    """``costs[k]`` is the bytes as sent of ``text[:k]`` (escaped as XML text first when ``xml``)."""
    cost = _xml_cost if xml else _plain_cost
    return [0, *accumulate(cost(c) for c in text)]


def fitting_prefix(costs: Sequence[int], budget: int) -> int:
    """The most characters whose cost stays within ``budget`` (``costs`` from :func:`prefix_costs`)."""
    low, high = 0, len(costs) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if costs[middle] <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def source_of(reader: str | None) -> str | None:
    """The ``source`` of a text element whose reader is ``read_text``, else ``None``."""
    if reader and reader.startswith(READER):
        return reader[len(READER) :].strip('"')
    return None


def reads_with(element: Element, source: str) -> Element:
    """Mark ``element``'s text as one :func:`fit` may cut, naming the read_text source of the rest."""
    element.more = f'{READER}"{source}"'
    return element


def cut_marker(kept: int, total: int, source: str) -> str:
    """The end of a cut text: how much was shown and the exact call that returns the rest."""
    return (
        f" … [cut {total - kept} of {total} characters; call read_text with "
        f'source="{source}" and offset={kept} for the rest]'
    )


def _walk(top: Element) -> Iterator[tuple[Element, int]]:
    """Every element with how many page lists it sits in (notes inside a journals page: 1)."""
    todo = [(top, 0)]
    while todo:
        node, depth = todo.pop()
        yield node, depth
        inner = depth + (1 if node.page is not None and node is not top else 0)
        todo.extend((child, inner) for child in node.children)


def fit(root: Element, budget: int) -> Element:
    """``root`` if its answer fits in ``budget`` bytes as sent, else a shortened copy that does.

    In order, stopping once it fits: page lists are shortened at an item boundary (at least
    one item kept, ``next_offset`` moved); texts marked by :func:`reads_with` are cut, those in
    lists alone when that is enough, else the longest first, each to what its share of the
    budget holds but never under :data:`MIN_KEPT` characters, ending in a marker naming the
    read_text call for the rest.
    The caller's tree is not changed. What still does not fit (many small fields) is left to
    the toolkit's cap, which cuts at the element level with its own markers.
    """
    if wire_size(render(root)) <= budget:
        return root
    tree = root.deep_copy()
    tree.set("truncated", "true")

    def excess() -> int:
        return wire_size(render(tree)) - budget

    pages = [n for n, _ in _walk(tree) if n.page is not None]
    pages.sort(key=lambda n: (n is not tree, -len(render(n, declaration=False))))
    for page in pages:
        if excess() <= 0:
            return tree
        _shorten(page, excess, budget)
    texts = [(n, d) for n, d in _walk(tree) if source_of(n.more) and n.text and len(n.text) > MIN_KEPT]
    # The texts inside lists (notes) give way first, when that is enough; otherwise the longest go first.
    saved = [(n, n.text, dict(n.attrs)) for n, _ in texts]
    if _cut_in_order([n for n, d in texts if d > 0], excess):
        return tree
    for node, text, attrs in saved:
        node.text, node.attrs = text, attrs
    _cut_in_order([n for n, _ in sorted(texts, key=lambda nd: -len(nd[0].text or ""))], excess)
    return tree


def _cut_in_order(nodes: list[Element], excess: Callable[[], int]) -> bool:
    """Cut ``nodes`` in turn until the answer fits; whether it does."""
    for node in nodes:
        if excess() <= 0:
            return True
        _cut(node, excess)
    return excess() <= 0


def _shorten(page: Element, excess: Callable[[], int], budget: int) -> None:
    items = list(page.children)
    if len(items) <= 1:
        return

    def keep(count: int) -> None:
        page.children = items[:count]
        page.page.apply(page, count, cap=budget)

    low, high = 1, len(items)
    while low < high:
        middle = (low + high + 1) // 2
        keep(middle)
        if excess() <= 0:
            low = middle
        else:
            high = middle - 1
    keep(low)


def _cut(node: Element, excess: Callable[[], int]) -> None:
    """Cut ``node``'s text until the answer fits, keeping at least :data:`MIN_KEPT` characters.

    The marker and the attributes it adds cost bytes too, so the cut is measured again and
    made deeper (from the original text) until the answer fits or the floor is reached."""
    text = node.text or ""
    source = source_of(node.more) or ""
    costs = prefix_costs(text, xml=True)
    room = costs[-1] - excess()
    for _ in range(8):
        kept = max(MIN_KEPT, fitting_prefix(costs, room))
        if kept >= len(text):
            return
        node.text = text[:kept] + cut_marker(kept, len(text), source)
        node.set("truncated", "true").set("total_length", len(text)).set("shown", kept)
        over = excess()
        if over <= 0 or kept == MIN_KEPT:
            return
        room -= over


def fitted_result(root: Element, budget: int) -> mcp_types.CallToolResult:
    """``root`` fitted to ``budget`` bytes as sent, as a result.

    What :func:`fit` cannot shed (the :data:`MIN_KEPT` floors, one list item) stays: handing it to
    a cap that cuts texts by their escaped size would starve them again."""
    return xml_result(fit(root, budget), limit=None)


def answer_budget(rc: RedmineContext) -> int:
    """Bytes as sent one entity's answer may take (``REDMINE_ANSWER_LIMIT``)."""
    return rc.client.config.answer_limit


DEFAULT_SOURCES = {"issue": "issue", "project": "project", "news": "news", "version": "version"}


def text_sources(tag: str, data: Mapping[str, Any]) -> dict[str, str]:
    """The read_text sources of an entity's long texts, where its answer says enough to name them."""
    kind = DEFAULT_SOURCES.get(tag)
    ref = data.get("identifier") if tag == "project" else data.get("id")
    if kind is None or ref is None:
        return {}
    return {"description": f"{kind} {ref} description"}


def page_elements(
    rc: RedmineContext, items: Sequence[Any], *, item_tag: str, item_call: str | None
) -> list[Element]:
    """Each item as an element; an excerpt's marker names ``item_call`` for that item."""
    out: list[Element] = []
    for item in items:
        reader = None
        if item_call and isinstance(item, Mapping) and item.get("id") is not None:
            reader = "call " + item_call.replace("{id}", str(item["id"])) + " to read it in full"
        element = rc.fmt.with_reader(reader).value(item_tag, item)
        if element is not None:
            out.append(element)
    return out


def page_element(
    rc: RedmineContext,
    tag: str,
    items: Sequence[Any],
    window: Window,
    *,
    next_call: str,
    item_call: str | None = None,
    item_tag: str | None = None,
) -> Element:
    """One page of a list as ``<tag type="array" offset limit returned total_count next_offset>``."""
    elements = page_elements(rc, items, item_tag=item_tag or singular(tag), item_call=item_call)
    return page_of(tag, elements, window, next_call=next_call, item_call=item_call)


def page_result(
    rc: RedmineContext,
    tag: str,
    items: Sequence[Any],
    window: Window,
    *,
    tool: str,
    item_call: str | None = None,
    item_tag: str | None = None,
) -> mcp_types.CallToolResult:
    """A page as a result; the next page is ``tool`` with the same arguments and the next offset."""
    return fitted_result(
        page_element(
            rc,
            tag,
            items,
            window,
            next_call=f"{tool} with the same arguments and offset={{offset}}",
            item_call=item_call,
            item_tag=item_tag,
        ),
        DEFAULT_TEXT_LIMIT,
    )


def local_page(items: Sequence[Any], offset: int, limit: int) -> tuple[list[Any], Window]:
    """A page cut from a list Redmine returns whole (versions, categories, wiki pages...)."""
    return list(items[offset : offset + limit]), Window(offset, limit, len(items))


def entity_element(
    rc: RedmineContext, tag: str, data: Mapping[str, Any], sources: Mapping[str, str] | None = None
) -> Element:
    """One entity with every field in full; its long texts name their read_text source.

    ``sources`` maps a text field to its source where the entity's own answer cannot name it
    (a wiki page does not say its project)."""
    element = rc.fmt.full().entity(tag, data)
    named = {**text_sources(tag, data), **(sources or {})}
    for child in element.children:
        if child.tag in named:
            reads_with(child, named[child.tag])
        if (tag, child.tag) in EDITABLE and isinstance(data.get(child.tag), str):
            child.set("hash", text_hash(data[child.tag]))
    return element


def entity_result(
    rc: RedmineContext, tag: str, data: Mapping[str, Any], sources: Mapping[str, str] | None = None
) -> mcp_types.CallToolResult:
    """One entity as a result, fitted losslessly to the answer budget."""
    return fitted_result(entity_element(rc, tag, data, sources), answer_budget(rc))


def entity_of(body: Mapping[str, Any], tag: str) -> dict[str, Any]:
    """``body[tag]`` when it is an object, else an empty one (Redmine always nests entities)."""
    value = body.get(tag)
    return dict(value) if isinstance(value, Mapping) else {}


def done(
    message: str, entity: Element | None = None, *, limit: int = DEFAULT_TEXT_LIMIT
) -> mcp_types.CallToolResult:
    """A successful write: ``<response><status>success</status>…``, fitted to ``limit`` bytes as sent."""
    return fitted_result(response(message, entity), limit)


def done_entity(
    rc: RedmineContext,
    message: str,
    tag: str,
    data: Mapping[str, Any],
    sources: Mapping[str, str] | None = None,
) -> mcp_types.CallToolResult:
    """A successful write with the entity as Redmine now has it (``sources`` as for :func:`entity_element`)."""
    return done(message, entity_element(rc, tag, data, sources), limit=answer_budget(rc))


def preview_result(what: str, impact: Sequence[Element]) -> mcp_types.CallToolResult:
    """What a delete would remove; nothing was deleted."""
    env = response(
        f"Nothing was deleted. Deleting {what} cannot be undone; call again with confirm true to delete it.",
        status="preview",
    )
    box = env.child("impact")
    box.add(*impact)
    return xml_result(env)


async def confirm_or_preview(
    args: Mapping[str, Any],
    *,
    what: str,
    preview: Callable[[], Awaitable[list[Element]]],
    delete: Callable[[], Awaitable[None]],
    verb: str = "Deleted",
) -> mcp_types.CallToolResult:
    """Delete only with ``confirm: true``; otherwise describe what would go.

    The preview reads the target first, so a wrong id fails here with a 404 rather than
    after the model has been told it may confirm.
    """
    impact = await preview()
    if not confirmed(args):
        return preview_result(what, impact)
    await delete()
    return done(f"{verb} {what}.")
