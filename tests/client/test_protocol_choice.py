"""Which wire the client speaks: ``protocol`` (``--protocol`` on the CLI) auto, 2026-07-28 or 2025-11-25.

A toolkit server serves both eras on one endpoint, so each choice is honoured there as asked;
a server that only knows the handshake (the raw fixture server) is reached by ``auto`` through
it, and refused in one line by ``2026-07-28``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit.client import ConnectError, SessionOptions, connect
from tests.client.procs import free_port, raw, start_command_on_port

pytestmark = pytest.mark.anyio

ASKING = [
    sys.executable,
    str(Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "asking_server.py"),
]
EXPECTED = {"auto": "2026-07-28", "2026-07-28": "2026-07-28", "2025-11-25": "2025-11-25"}


@pytest.fixture(params=["stdio", "http"])
def both_eras(request: pytest.FixtureRequest) -> Iterator[str | list[str]]:
    """A toolkit server that serves both eras: its command line, or the URL of a running one."""
    if request.param == "stdio":
        yield ASKING
        return
    port = free_port()
    proc = start_command_on_port([*ASKING, "--http", str(port)], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("protocol", list(EXPECTED))
async def test_each_choice_is_spoken_with_a_server_that_serves_both(
    both_eras: str | list[str], protocol: str
) -> None:
    async with connect(both_eras, SessionOptions(protocol=protocol, timeout=30)) as session:
        version = session.protocol_version
        stateless = session.stateless
        discovered = session.discover_result
        initialized = dict(session.initialize_result)
        info = session.server_info
        tools = {t["name"] for t in await session.list_tools()}
        preview = await session.call("delete_item", {"name": "a"})
    assert version == EXPECTED[protocol] and stateless == (version == "2026-07-28")
    assert info.get("name") == "asking"
    assert {"survey", "delete_item", "must_ask"} <= tools and preview.text == "preview: would delete a"
    if stateless:
        assert discovered is not None and "2026-07-28" in discovered["supportedVersions"]
        assert "2025-11-25" in discovered["supportedVersions"] and initialized == {}
    else:
        assert discovered is None and initialized["protocolVersion"] == "2025-11-25"


async def test_auto_speaks_the_handshake_to_a_server_that_knows_only_it() -> None:
    async with connect(raw(), SessionOptions(protocol="auto", timeout=30)) as session:
        assert session.protocol_version == "2025-11-25" and not session.stateless
        assert (
            session.discover_result is None and session.initialize_result["protocolVersion"] == "2025-11-25"
        )
        assert (await session.call("echo", {"text": "hi"})).text == "hi"


async def test_the_stateless_wire_alone_is_refused_in_one_line_by_a_handshake_only_server() -> None:
    with pytest.raises(ConnectError) as refused:
        async with connect(raw(), SessionOptions(protocol="2026-07-28", timeout=30)):
            pass
    message = str(refused.value)
    assert "\n" not in message and "does not offer the stateless 2026-07-28 wire" in message
    assert "protocol auto or 2025-11-25" in message


def test_protocol_must_be_one_of_the_three() -> None:
    with pytest.raises(ValueError, match="protocol must be one of auto, 2026-07-28, 2025-11-25"):
        SessionOptions(protocol="2024-11-05")  # type: ignore[arg-type]


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("protocol", "wire"), [("2026-07-28", "server/discover"), ("2025-11-25", "initialize")]
)
def test_the_call_command_speaks_the_wire_it_is_told(protocol: str, wire: str, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    out = mcpkit("call", "--protocol", protocol, "--json", "--trace", str(trace), "survey", "--", *ASKING)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["content"][0]["text"] == "no name (unasked)"
    sent = trace.read_text()
    assert f'"method":"{wire}"' in sent.replace(" ", "")
    other = "initialize" if wire == "server/discover" else "server/discover"
    assert f'"method":"{other}"' not in sent.replace(" ", "")


def test_the_call_command_defaults_to_auto_and_refuses_an_unknown_protocol() -> None:
    auto = mcpkit("call", "--json", "echo", "text=hi", "--", *raw())
    assert auto.returncode == 0, auto.stderr
    assert json.loads(auto.stdout)["content"][0]["text"] == "hi"
    bad = mcpkit("call", "--protocol", "2024-11-05", "echo", "--", *raw())
    assert bad.returncode == 2 and "--protocol" in bad.stderr
