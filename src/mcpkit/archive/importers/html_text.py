"""Post HTML (Mastodon's ``content``) turned into the text a person reads.

Why a parser of our own on :mod:`html.parser` and not a generic HTML-to-text converter: what
matters here are a few rules of how Mastodon writes a post, and each one lost makes the archive
worse to search:

* paragraphs are ``<p>`` elements and line breaks ``<br>``: they become a blank line and a line
  feed, so a post reads as it was written (a converter that drops them runs the lines together);
* a long link is split into ``invisible`` and ``ellipsis`` spans (``https://`` hidden, the middle
  shown with a CSS ``…``): the spans' texts are joined, which gives back the whole URL, and a
  link whose visible text is a cut form of its ``href`` is replaced by the ``href``;
* mentions and hashtags are links whose text is ``@name`` and ``#tag``: their text is kept;
* entities (``&#39;``, ``&amp;``) are unescaped exactly once (``&amp;#39;`` stays ``&#39;``).

Newlines inside a text node are HTML whitespace, not line breaks (Mastodon writes none), so
they read as a space; other whitespace is kept as written. Nothing here is lost silently: every
text node ends up in the result.

Speed: :class:`html.parser.HTMLParser` costs about 12 µs a tag, which made a Mastodon import
spend nine tenths of its time tokenizing its own regular markup. So a post whose markup is
only plain tags with quoted attributes (what Mastodon writes) is tokenized by one regular
expression and fed to the same handlers; anything else (comments, ``<script>``, a stray
``<``, unquoted attributes) goes to ``HTMLParser`` whole. The rules live once, in the
handlers; the tests check that both tokenizers give the same text.
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

__all__ = ["html_to_text", "is_shortened_url"]

_PARAGRAPH = frozenset(
    {"p", "div", "blockquote", "pre", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "section"}
)
_LINE = frozenset({"br", "li", "tr", "hr"})
_SKIP = frozenset({"script", "style", "template"})
_ELLIPSES = ("…", "...")
_NAME = r"[a-zA-Z][a-zA-Z0-9]*"
_ATTRIBUTE = r"""[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:=(?:"[^"<]*"|'[^'<]*'))?"""
_TOKEN = re.compile(rf"<(/?)({_NAME})((?:\s+{_ATTRIBUTE})*)\s*(/?)>|([^<]+)")
_ATTRIBUTES = re.compile(r"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:=(?:"([^"]*)"|'([^']*)'))?""")


class _TextParser(HTMLParser):
    """Collects text pieces; ``\\n\\n`` marks a paragraph boundary, ``\\n`` a line break."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._pre = 0
        self._skip = 0
        self._link: tuple[str, int] | None = None  # (href, index of its first part)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag in _PARAGRAPH:
            self._break("\n\n")
            if tag == "pre":
                self._pre += 1
        elif tag in _LINE:
            self.parts.append("\n")
        elif tag == "a":
            href = next((value for name, value in attrs if name == "href" and value), "")
            self._link = (href, len(self.parts))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _LINE:
            self.parts.append("\n")
        elif tag in _PARAGRAPH:
            self._break("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in _PARAGRAPH:
            if tag == "pre":
                self._pre = max(0, self._pre - 1)
            self._break("\n\n")
        elif tag == "a" and self._link is not None:
            href, start = self._link
            self._link = None
            shown = "".join(self.parts[start:])
            if href and is_shortened_url(shown, href):
                del self.parts[start:]
                self.parts.append(href)

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.parts.append(data if self._pre else data.replace("\r\n", " ").replace("\n", " "))

    def reset_text(self) -> None:
        """Forget what was collected (the fast tokenizer gave up; HTMLParser starts over)."""
        self.parts.clear()
        self._pre = self._skip = 0
        self._link = None

    def _break(self, mark: str) -> None:
        if self.parts and self.parts[-1] != mark:
            self.parts.append(mark)


def is_shortened_url(shown: str, href: str) -> bool:
    """Whether a link's visible text is its URL shortened for display (scheme, ``www.``, a bare
    ``/`` path or the tail left out, ``…`` or ``...`` added: Mastodon and Bluesky both do), so
    that the URL itself is what the reader should get; anchor words that are no URL are not."""
    if not shown or "\n" in shown or shown == href:
        return False
    core = shown
    for ellipsis in _ELLIPSES:
        core = core.removesuffix(ellipsis)
    core = core.strip()
    if len(core) < 4:  # "go", "…": anchor text, not a URL
        return False
    core = core.lower()
    url = href.lower()
    rest = url.split("://", 1)[-1]
    host, slash, tail = rest.partition("/")
    bare = host + tail if slash and tail[:1] in ("", "?", "#") else rest  # "host/?q" shown "host?q"
    return any(form.startswith(core) for form in (url, rest, rest.removeprefix("www."), bare))


def _tokenized(html: str, parser: _TextParser) -> bool:
    """Feed ``html`` to the parser's handlers with the fast tokenizer; False (the parser left
    empty) when the markup is outside the plain subset it reads."""
    position = 0
    for token in _TOKEN.finditer(html):
        if token.start() != position:  # something no token matched: a stray "<", a comment
            parser.reset_text()
            return False
        position = token.end()
        closing, name, attributes, empty, text = token.groups()
        if text is not None:
            parser.handle_data(unescape(text) if "&" in text else text)
            continue
        tag = name.lower()
        if tag in _SKIP:  # raw-text elements: HTMLParser's rules
            parser.reset_text()
            return False
        if closing:
            parser.handle_endtag(tag)
            continue
        pairs: list[tuple[str, str | None]] = []
        if tag == "a":
            for found in _ATTRIBUTES.finditer(attributes):
                value = found.group(2) if found.group(2) is not None else found.group(3)
                pairs.append((found.group(1).lower(), None if value is None else unescape(value)))
        if empty:
            parser.handle_startendtag(tag, pairs)
        else:
            parser.handle_starttag(tag, pairs)
    if position != len(html):
        parser.reset_text()
        return False
    return True


def html_to_text(html: str, *, fast: bool = True) -> str:
    """The readable text of a post's HTML: paragraphs apart by a blank line, ``<br>`` a line
    feed, links whole, entities unescaped once; leading and trailing blank space removed.
    ``fast=False`` tokenizes with :class:`~html.parser.HTMLParser` whatever the markup (the
    reference the fast tokenizer is tested against)."""
    if "<" not in html and "&" not in html:
        return html.replace("\n", " ").strip()
    parser = _TextParser()
    if not (fast and _tokenized(html, parser)):
        parser.feed(html)
        parser.close()
    return "".join(parser.parts).strip()
