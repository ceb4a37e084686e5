"""Cut texts lose nothing: the calls a cut names return the exact original text, in pages.

A description of ``"<&>"`` used to be cut to 40 characters because the cap counted escaped
bytes and cut raw characters by that excess, and the marker said no call showed more. Here,
for random texts (among them texts of only ``<&>"'`` and control characters) and random
answer budgets, an issue's description and a journal note are read as ``get_issue`` shows
them and then through the ``read_text`` calls the markers name: the pages put together are
the original, character for character, and every answer stays within its budget as sent.

Redmine is a stand-in here (thousands of generated cases); the real Redmine runs the same
path in tests/integration/redmine/test_redmine_trust.py.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import anyio
import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.config import RedmineConfig
from mcpkit.redmine.tools.base import RedmineContext
from mcpkit.redmine.tools.issues import get_issue
from mcpkit.redmine.tools.results import MIN_KEPT, text_hash, wire_size
from mcpkit.redmine.tools.texts import read_text
from mcpkit.redmine.xml import Formatter
from mcpkit.results import clean_xml_chars, validate_result

KEY = "feedfacefeedfacefeedfacefeedfacefeedface"
MARKER = re.compile(
    r' … \[cut (\d+) of (\d+) characters; call read_text with source="([^"]+)" and offset=(\d+) for the rest\]$'
)
HEAD = re.compile(
    r'^\[([^\]]+?): characters (\d+) to (\d+) of (\d+)(?:, hash (?P<hash>[0-9a-f]{16}))?(?:; call read_text with source="([^"]+)" and offset=(\d+) for the rest|, the end)\]$'
)

HOSTILE = st.sampled_from(
    list("<&>\"'") + [chr(c) for c in range(32)] + ["\u00e9", "\u2028", "\U0001f600", "a", " "]
)
PIECES = st.text(alphabet=HOSTILE, min_size=1, max_size=40)
TEXTS = st.one_of(
    st.text(alphabet=HOSTILE, max_size=300),
    st.builds(lambda piece, times: piece * times, PIECES, st.integers(1, 3000)),
    st.builds(lambda times: '"<&>"' * times, st.integers(1, 6000)),
)


def stand_in(description: str, note: str) -> httpx2.MockTransport:
    issue = {
        "id": 5,
        "subject": "Hostile",
        "project": {"id": 1, "name": "P"},
        "description": description,
        "journals": [{"id": 77, "user": {"id": 1, "name": "A"}, "notes": note, "private_notes": False}],
    }

    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/users/current.json"):
            return httpx2.Response(200, json={"user": {"id": 1, "login": "admin", "admin": True}})
        if request.url.path.endswith("/issues/5.json"):
            return httpx2.Response(200, content=json.dumps({"issue": issue}).encode())
        return httpx2.Response(404)

    return httpx2.MockTransport(answer)


def answer_text(result: Any) -> str:
    validate_result(result.model_dump(by_alias=True, exclude_none=True))
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


async def read_all(rc: RedmineContext, source: str, offset: int, budget: int, want_hash: str | None) -> str:
    """Follow read_text from ``offset`` to the end, checking each page's first line and size.

    A text edit_text changes names on every page the hash of the whole text (``want_hash``)."""
    parts: list[str] = []
    for _ in range(100_000):
        text = answer_text(await read_text({"source": source, "offset": offset}, rc))
        assert wire_size(text) <= budget
        head, _, body = text.partition("\n")
        match = HEAD.match(head)
        assert match, head
        assert match[1] == source and int(match[2]) == offset and int(match[3]) == offset + len(body)
        parts.append(body)
        assert match["hash"] == want_hash, head
        if match[7] is None:
            return "".join(parts)
        assert int(match[7]) == int(match[3]) > offset
        offset = int(match[7])
    raise AssertionError("read_text did not end")


async def check(description: str, note: str, budget: int) -> None:
    config = RedmineConfig(url="http://redmine.invalid", api_key=KEY, answer_limit=budget)
    client = RedmineClient(config, transport=stand_in(description, note))
    rc = RedmineContext(client, Formatter(500))
    try:
        shown = answer_text(await get_issue({"id": 5}, rc))
        root = ET.fromstring(shown.split("\n", 1)[1].encode())
        for original, element in (
            (description, root.find("description")),
            (note, root.find("journals/journal/notes")),
        ):
            text = "" if element is None else (element.text or "")
            match = MARKER.search(text)
            if match is None:
                assert text == clean_xml_chars(original) or not original
                continue
            kept, source = int(match[4]), match[3]
            assert int(match[2]) == len(original) and int(match[1]) == len(original) - kept
            assert kept >= min(MIN_KEPT, len(original)), "a cut text keeps a useful length"
            assert element is not None and element.get("shown") == str(kept)
            assert text[: match.start()] == clean_xml_chars(original[:kept])
            want = text_hash(original) if re.fullmatch(r"issue \d+ description", source) else None
            if want is not None:
                assert element.get("hash") == want
            assert await read_all(rc, source, kept, budget, want) == original[kept:]
            assert await read_all(rc, source, 0, budget, want) == original
        if wire_size(shown) > budget:
            # Only the floor may pass the budget: each text is at most MIN_KEPT characters shown.
            for original, element in (
                (description, root.find("description")),
                (note, root.find("journals/journal/notes")),
            ):
                if element is not None and element.get("shown") is not None:
                    assert int(element.get("shown") or 0) == MIN_KEPT
                else:
                    assert len(original) <= MIN_KEPT
    finally:
        await client.aclose()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(description=TEXTS, note=TEXTS, budget=st.integers(4_000, 60_000))
def test_every_cut_text_reads_back_exactly_by_the_calls_it_names(
    description: str, note: str, budget: int
) -> None:
    anyio.run(check, description, note, budget)


def test_a_description_of_escapes_keeps_what_its_budget_holds() -> None:
    """The reported case: 30,000 characters of "<&>" showed 40; now the answer's share of them."""
    text = '"<&>"' * 6000

    async def run() -> None:
        config = RedmineConfig(url="http://redmine.invalid", api_key=KEY)
        client = RedmineClient(config, transport=stand_in(text, "short"))
        rc = RedmineContext(client, Formatter(500))
        try:
            shown = answer_text(await get_issue({"id": 5}, rc))
        finally:
            await client.aclose()
        description = ET.fromstring(shown.split("\n", 1)[1].encode()).find("description")
        assert description is not None
        assert int(description.get("shown") or 0) > 20_000
        assert wire_size(shown) <= config.answer_limit

    anyio.run(run)
