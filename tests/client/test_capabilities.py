"""The capabilities the client declares, read off the wire: what its initialize request carries.

A capability is declared only when something answers it: roots always (the configured roots,
none by default), sampling and elicitation only with a handler. Declaring them while refusing
every request made servers offer tools (server-everything's sampling and elicitation tools)
that could only fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import ClientHandlers, SessionOptions, connect
from tests.client.procs import raw

pytestmark = pytest.mark.anyio


async def _answer(params: dict[str, Any]) -> dict[str, Any]:
    return {}


ELICITATION = {"elicitation": {"form": {}, "url": {}}}


@pytest.mark.parametrize(
    ("handlers", "declared"),
    [
        (ClientHandlers(), {"roots": {"listChanged": False}}),
        (ClientHandlers(sampling=_answer), {"roots": {"listChanged": False}, "sampling": {}}),
        (ClientHandlers(elicitation=_answer), {"roots": {"listChanged": False}, **ELICITATION}),
        (
            ClientHandlers(sampling=_answer, elicitation=_answer, roots_from=_answer),
            {"roots": {"listChanged": True}, "sampling": {}, **ELICITATION},
        ),
    ],
    ids=["none", "sampling", "elicitation", "all"],
)
async def test_initialize_declares_only_what_a_handler_answers(
    tmp_path: Path, handlers: ClientHandlers, declared: dict[str, Any]
) -> None:
    tap = tmp_path / "wire.jsonl"
    # The server's stdin passes through tee: the file holds the bytes the client wrote.
    command = ["sh", "-c", 'tee "$0" | exec "$@"', str(tap), *raw()]
    options = SessionOptions(timeout=30, handlers=handlers, protocol="2025-11-25")
    async with connect(command, options) as session:
        await session.list_tools()
    first = json.loads(tap.read_text("utf-8").splitlines()[0])
    assert first["method"] == "initialize"
    assert first["params"]["capabilities"] == declared
