"""XML built as a tree, so it cannot come out malformed.

A Redmine server glued strings together: a tag left open, a ``&`` left raw, a control character
from an issue description, and the client could not parse the result. Here a document is a tree
of :class:`Element` values and only :func:`render` turns it into text, so:

* tag and attribute names are checked when the element is made (``ValueError``), never later;
* every text and attribute value is escaped (``& < > " '``, plus the line-end characters a parser
  would otherwise normalise away) and cleaned of characters XML 1.0 does not allow;
* every element is closed by construction.

Names are XML NCNames (no ``:``; namespaces are out of scope) that expat also accepts, because
expat (behind ``xml.etree`` and ``xml.dom.minidom``) still uses the older XML 1.0 name tables.
"""

from __future__ import annotations

import functools
import re
import xml.parsers.expat
from collections.abc import Mapping
from typing import Any

from mcpkit.results._chars import clean_xml_chars

__all__ = [
    "DECLARATION",
    "Element",
    "check_name",
    "clean_xml_chars",
    "escape_attr",
    "escape_text",
    "parse_xml",
    "render",
]

DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'

_NAME_START = (
    "A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)


@functools.cache
def _ncname() -> re.Pattern[str]:
    """An XML name without a colon, compiled on first use (a few ms of every start-up before)."""
    return re.compile(f"[{_NAME_START}][{_NAME_START}\\-.0-9\u00b7\u0300-\u036f\u203f-\u2040]*")


_TEXT_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\r": "&#13;"}
)
_ATTR_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&apos;",
        "\r": "&#13;",
        "\n": "&#10;",
        "\t": "&#9;",
    }
)


def escape_text(text: str) -> str:
    """``text`` ready to sit between tags: disallowed characters removed, specials escaped.

    ``\\r`` is written as a character reference because a parser turns a raw one into ``\\n``.
    """
    return clean_xml_chars(text).translate(_TEXT_ESCAPES)


def escape_attr(text: str) -> str:
    """``text`` ready for a double-quoted attribute value.

    Tabs and line ends become character references: a parser normalises raw ones to spaces.
    """
    return clean_xml_chars(text).translate(_ATTR_ESCAPES)


@functools.lru_cache(maxsize=4096)
def _expat_accepts(document: str) -> bool:
    parser = xml.parsers.expat.ParserCreate()
    try:
        parser.Parse(document, True)
    except xml.parsers.expat.ExpatError:
        return False
    return True


def check_name(name: str, what: str = "tag") -> str:
    """``name`` if it is a usable element or attribute name, else ``ValueError`` saying why."""
    if not isinstance(name, str) or not _ncname().fullmatch(name):
        raise ValueError(f"invalid XML {what} name {name!r}: use letters, digits, '_', '-', '.'")
    if what == "attribute" and name == "xmlns":
        raise ValueError("invalid XML attribute name 'xmlns': namespaces are not supported")
    probe = f"<{name}/>" if what == "tag" else f'<a {name}=""/>'
    if not _expat_accepts(probe):
        raise ValueError(f"invalid XML {what} name {name!r}: not accepted by standard XML parsers")
    return name


def as_xml_value(value: object) -> str:
    """How a Python value reads in XML: booleans as ``true``/``false``, the rest via ``str()``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Element:
    """One XML element: a checked tag, attributes, optional text, children, optional comment.

    ``tail`` is text after this element inside its parent (mixed content, as in
    :mod:`xml.etree`); builders rarely need it, :func:`parse_xml` sets it.
    ``comment`` is rendered as the last node inside the element (used for truncation notes).
    ``more`` says how to read this element in full when a size cap cuts it (for example
    "get_issue with id=9 returns the full description"); ``page`` marks a list built by
    :func:`mcpkit.results.page_of`, which a cap shortens at an item boundary, never silently.
    Neither is rendered: they only steer :func:`mcpkit.results.cap_xml`.
    """

    __slots__ = ("attrs", "children", "comment", "more", "page", "tag", "tail", "text")

    def __init__(self, tag: str, attrs: Mapping[str, object] | None = None, text: object = None) -> None:
        self.tag: str = check_name(tag)
        self.attrs: dict[str, str] = {}
        for key, value in (attrs or {}).items():
            self.set(key, value)
        self.text: str | None = None if text is None else as_xml_value(text)
        self.children: list[Element] = []
        self.tail: str | None = None
        self.comment: str | None = None
        self.more: str | None = None
        self.page: Any = None

    def set(self, name: str, value: object) -> Element:
        """Set (or with ``None`` remove) one attribute; returns self."""
        check_name(name, "attribute")
        if value is None:
            self.attrs.pop(name, None)
        else:
            self.attrs[name] = as_xml_value(value)
        return self

    def child(self, tag: str, attrs: Mapping[str, object] | None = None, text: object = None) -> Element:
        """Append a new child element and return it (for building nested structures)."""
        new = Element(tag, attrs, text)
        self.children.append(new)
        return new

    def add(self, *children: Element) -> Element:
        """Append existing elements; returns self so calls can chain."""
        for item in children:
            if not isinstance(item, Element):
                raise TypeError(f"can only add Element children, not {type(item).__name__}")
            self.children.append(item)
        return self

    def copy(self) -> Element:
        """A shallow copy: own attribute dict and child list, shared child elements."""
        twin = Element.__new__(Element)
        twin.tag, twin.text, twin.tail, twin.comment = self.tag, self.text, self.tail, self.comment
        twin.more, twin.page = self.more, self.page
        twin.attrs = dict(self.attrs)
        twin.children = list(self.children)
        return twin

    def deep_copy(self) -> Element:
        """A copy of the whole subtree (iterative: deep trees do not hit the recursion limit)."""
        top = self.copy()
        todo = [top]
        while todo:
            node = todo.pop()
            node.children = [c.copy() for c in node.children]
            todo.extend(node.children)
        return top

    def __repr__(self) -> str:
        return f"Element({self.tag!r}, {self.attrs!r}, text={self.text!r}, children={len(self.children)})"


def _comment(text: str) -> str:
    body = clean_xml_chars(text).replace("--", "- -").rstrip("-")
    return f"<!-- {body} -->"


def _open_tag(element: Element) -> str:
    attrs = "".join(f' {key}="{escape_attr(value)}"' for key, value in element.attrs.items())
    return f"<{element.tag}{attrs}"


def render(root: Element, *, declaration: bool = True) -> str:
    """The document as text: declaration line (unless told not to), then the element tree.

    Elements holding only elements are indented two spaces per level; an element with text
    or mixed content is written exactly, so no whitespace is added to anyone's data.
    """
    out: list[str] = [DECLARATION, "\n"] if declaration else []
    stack: list[tuple[Element, int] | str] = [(root, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        element, depth = item
        out.append(_open_tag(element))
        if not element.children and element.comment is None:
            out.append(f">{escape_text(element.text)}</{element.tag}>" if element.text else "/>")
            continue
        out.append(">")
        if element.text:
            out.append(escape_text(element.text))
        pretty = not element.text and all(not c.tail for c in element.children)
        inner = "\n" + "  " * (depth + 1) if pretty else ""
        closing = ("\n" + "  " * depth if pretty else "") + f"</{element.tag}>"
        stack.append(closing)
        if element.comment is not None:
            stack.append(inner + _comment(element.comment))
        for child in reversed(element.children):
            if child.tail:
                stack.append(escape_text(child.tail))
            stack.append((child, depth + 1))
            if inner:
                stack.append(inner)
    return "".join(out)


class _TreeBuilder:
    """expat callbacks that build :class:`Element` values, refusing any DTD (so no entities)."""

    def __init__(self) -> None:
        self.root: Element | None = None
        self.open: list[Element] = []

    def start(self, tag: str, attrs: list[str]) -> None:
        element = Element(tag, dict(zip(attrs[::2], attrs[1::2], strict=True)))
        if self.open:
            self.open[-1].children.append(element)
        else:
            self.root = element
        self.open.append(element)

    def end(self, tag: str) -> None:
        element = self.open.pop()
        if element.children:  # element content: whitespace between children is indentation
            if element.text is not None and not element.text.strip():
                element.text = None
            for child in element.children:
                if child.tail is not None and not child.tail.strip():
                    child.tail = None

    def data(self, text: str) -> None:
        parent = self.open[-1]
        if parent.children:
            last = parent.children[-1]
            last.tail = (last.tail or "") + text
        else:
            parent.text = (parent.text or "") + text

    @staticmethod
    def refuse_doctype(*_: Any) -> None:
        raise ValueError("XML with a DOCTYPE is not accepted (entities could expand without bound)")


def parse_xml(document: str) -> Element:
    """An :class:`Element` tree from XML text; ``ValueError`` if it is not well-formed.

    Comments and processing instructions are dropped, and so is whitespace-only text between
    child elements (indentation), which :func:`render` puts back.
    """
    builder = _TreeBuilder()
    parser = xml.parsers.expat.ParserCreate()
    parser.ordered_attributes = True
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.StartDoctypeDeclHandler = builder.refuse_doctype
    try:
        parser.Parse(document, True)
    except xml.parsers.expat.ExpatError as exc:
        raise ValueError(f"not well-formed XML: {exc}") from None
    if builder.root is None:  # pragma: no cover - expat reports "no element found" first
        raise ValueError("not well-formed XML: no root element")
    return builder.root
