"""Redmine JSON to XML elements: one formatter for every resource.

Why one generic formatter rather than one per resource: upstream hand-wrote a template per
resource and half of them forgot to escape, so a ``&`` in an issue subject broke the answer. Here every value goes through the
toolkit's XML builder, which escapes and drops characters XML cannot carry, and the few
Redmine shapes that deserve care are handled once:

- references such as ``{"id": 1, "name": "Bug"}`` become ``<tracker id="1">Bug</tracker>``,
  so a model sees names rather than bare ids;
- custom fields keep their id and name as attributes and every value; a field with no value is
  left out (two empty fields cost a list of 25 issues about 2 KB and say nothing);
- text written by Redmine users (subjects, descriptions, notes, wiki text, comments) carries
  ``untrusted="true"`` so a model can tell it from instructions;
- in lists, long text (descriptions, notes, journal detail values) is cut to an excerpt whose
  marker names the call that reads it in full (``reader``); a single entity is formatted with
  ``text_limit=None`` and left to the lossless cap of :func:`mcpkit.results.xml_result`;
- ``api_key`` fields (Redmine shows them to admins) are dropped: a key never reaches a result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from mcpkit.results import Element

# Fields whose text was written by a Redmine user, not by Redmine.
UNTRUSTED = frozenset({"subject", "description", "notes", "text", "comments", "title", "summary"})
# Fields cut at the text limit (wiki text gets a larger allowance, see Formatter.limit_for).
CAPPED = frozenset({"description", "notes", "old_value", "new_value", "comments", "text"})
DROPPED = frozenset({"api_key", "password"})
REF_KEYS = frozenset({"id", "name", "is_closed"})
_SINGULAR = {
    "children": "issue",
    "watchers": "user",
    "allowed_statuses": "status",
    "issue_statuses": "issue_status",
    "issue_priorities": "priority",
    "time_entry_activities": "activity",
    "time_entries": "time_entry",
    "enabled_modules": "module",
    "issue_custom_fields": "custom_field",
    "possible_values": "possible_value",
    "issue_categories": "issue_category",
    "statuses": "status",
    "aliases": "alias",
    "news": "news",
    "files": "file",
}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,60}$")


def empty(value: Any) -> bool:
    """A custom field value that says nothing: unset, blank, or a multiple field with no value."""
    if isinstance(value, list):
        return all(empty(v) for v in value)
    return value is None or (isinstance(value, str) and not value.strip())


def singular(tag: str) -> str:
    """The element name for one member of a list element named ``tag``."""
    if tag in _SINGULAR:
        return _SINGULAR[tag]
    if tag.endswith("ies"):
        return tag[:-3] + "y"
    if tag.endswith("s") and len(tag) > 1:
        return tag[:-1]
    return "item"


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def is_reference(value: Mapping[str, Any]) -> bool:
    """``{"id": 3, "name": "Bug"}`` and the like: a pointer to another entity."""
    return "name" in value and set(value) <= REF_KEYS and all(_scalar(v) for v in value.values())


class Formatter:
    """Turns Redmine JSON into :class:`Element` trees.

    ``text_limit`` cuts long text fields to an excerpt (``None``: never); ``reader`` is the call
    that reads a cut text in full, named in the cut marker so nothing is dropped without a pointer.
    """

    def __init__(self, text_limit: int | None = 500, reader: str | None = None) -> None:
        self.text_limit = text_limit
        self.reader = reader

    def with_reader(self, reader: str | None) -> Formatter:
        """The same limits, naming ``reader`` in every cut marker."""
        return Formatter(self.text_limit, reader)

    def full(self) -> Formatter:
        """A formatter that cuts nothing (for one entity; the result cap then works losslessly)."""
        return Formatter(None)

    def limit_for(self, tag: str) -> int | None:
        """Wiki pages are documents people ask to read, so their text gets ten times the limit."""
        if self.text_limit is None:
            return None
        return self.text_limit * 10 if tag == "text" else self.text_limit

    def text(self, tag: str, value: str, attrs: dict[str, object] | None = None) -> Element:
        """A text element with the untrusted mark and the cap applied by field name."""
        attrs = dict(attrs or {})
        if tag in UNTRUSTED or tag in ("old_value", "new_value"):
            attrs["untrusted"] = True
        if tag in CAPPED:
            limit = self.limit_for(tag)
            if limit is not None and len(value) > limit:
                attrs["truncated"] = True
                attrs["total_length"] = len(value)
                where = f"; {self.reader}" if self.reader else ""
                value = value[:limit] + f" … [excerpt: the first {limit} of {len(value)} characters{where}]"
        return Element(tag, attrs, value)

    def value(self, tag: str, value: Any) -> Element | None:
        """One field as an element, or ``None`` for nulls and dropped fields."""
        if value is None or tag in DROPPED:
            return None
        extra: dict[str, object] = {} if _NAME.match(tag) else {"name": tag}
        name = tag if not extra else "field"
        if isinstance(value, bool | int | float):
            return Element(name, extra, value)
        if isinstance(value, str):
            return self.text(name, value, extra)
        if isinstance(value, Mapping):
            if "value" in value and "id" in value and "name" in value:
                return None if empty(value["value"]) else self.custom_field(name, value)
            if is_reference(value):
                attrs: dict[str, object] = {**extra, "id": value.get("id")}
                if "is_closed" in value:
                    attrs["is_closed"] = value["is_closed"]
                return Element(name, attrs, value.get("name"))
            return self.mapping(name, value, extra)
        if isinstance(value, list | tuple):
            out = self.array(name, value, attrs=extra)
            return None if tag == "custom_fields" and not out.children and value else out
        return Element(name, extra, str(value))

    def mapping(
        self, tag: str, data: Mapping[str, Any], attrs: Mapping[str, object] | None = None
    ) -> Element:
        """A JSON object as an element with one child per non-null field."""
        out = Element(tag, dict(attrs or {}))
        for key, val in data.items():
            child = self.value(str(key), val)
            if child is not None:
                out.add(child)
        return out

    def custom_field(self, tag: str, field: Mapping[str, Any]) -> Element:
        """``<custom_field id= name= multiple=>value</custom_field>``, multi-values as children."""
        attrs: dict[str, object] = {"id": field.get("id"), "name": field.get("name")}
        value = field.get("value")
        if isinstance(value, list):
            attrs["multiple"] = True
            out = Element(tag, attrs)
            for item in value:
                out.child("value", None, "" if item is None else str(item))
            return out
        return Element(tag, attrs, "" if value is None else value)

    def array(
        self,
        tag: str,
        items: Iterable[Any],
        *,
        item_tag: str | None = None,
        attrs: Mapping[str, object] | None = None,
    ) -> Element:
        """A list as ``<tag type="array">`` with one child per item."""
        out = Element(tag, {**dict(attrs or {}), "type": "array"})
        child_tag = item_tag or singular(tag)
        for item in items:
            child = self.value(child_tag, item)
            if child is not None:
                out.add(child)
        return out

    def collection(
        self,
        tag: str,
        items: Iterable[Any],
        *,
        total_count: int | None = None,
        offset: int | None = None,
        limit: int | None = None,
        item_tag: str | None = None,
    ) -> Element:
        """A page of results: ``<issues type="array" total_count= offset= limit=>``."""
        return self.array(
            tag,
            items,
            item_tag=item_tag,
            attrs={"total_count": total_count, "offset": offset, "limit": limit},
        )

    def entity(self, tag: str, data: Mapping[str, Any]) -> Element:
        """One Redmine entity such as an issue or a project."""
        return self.mapping(tag, data)


def response(message: str, *children: Element | None, status: str = "success") -> Element:
    """The envelope of every write: ``<response><status/><message/>[entity]</response>``."""
    out = Element("response")
    out.child("status", None, status)
    out.child("message", None, message)
    for child in children:
        if child is not None:
            out.add(child)
    return out
