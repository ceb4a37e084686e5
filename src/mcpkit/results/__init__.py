"""What a tool returns: builders that cannot produce an invalid result, and a strict validator.

Every result mcpkit sends is built here, because a server that glued XML together from strings
sent answers its client could not parse: text with an explicit size cap, XML that is
well-formed by construction, errors as one line with ``isError`` true, lists that say where they
stand and which call reads the rest (:func:`page_of`, :func:`text_page`). :func:`validate_result`
checks any raw result (ours or another server's) against the protocol version in use, and
:func:`to_wire` gives the exact JSON a client receives, so tests check what goes on the wire.
"""

from mcpkit.results._chars import clean_xml_chars, scrub_surrogates, scrub_surrogates_in
from mcpkit.results._errors import ERROR_MESSAGE_LIMIT, error_result, one_line
from mcpkit.results._paging import Window, page_of, text_page
from mcpkit.results._plain import plain_text_wire
from mcpkit.results._text import DEFAULT_TEXT_LIMIT, cap_text, text_result
from mcpkit.results._validate import validate_result
from mcpkit.results._wire import to_wire
from mcpkit.results._xml import Element, escape_attr, escape_text, parse_xml, render
from mcpkit.results._xml_result import XML_NOTE_MAX, cap_xml, xml_result

__all__ = [
    "DEFAULT_TEXT_LIMIT",
    "ERROR_MESSAGE_LIMIT",
    "XML_NOTE_MAX",
    "Element",
    "Window",
    "cap_text",
    "cap_xml",
    "clean_xml_chars",
    "error_result",
    "escape_attr",
    "escape_text",
    "one_line",
    "page_of",
    "parse_xml",
    "plain_text_wire",
    "render",
    "scrub_surrogates",
    "scrub_surrogates_in",
    "text_page",
    "text_result",
    "to_wire",
    "validate_result",
    "xml_result",
]
