"""Starting a stdio server ahead of its session: light to import, adopted once, never leaked."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from mcpkit.client import ServerConfig, Session, SessionOptions, spawn
from mcpkit.client._procgroup import group_alive
from tests.client.procs import raw, sdk_echo, wait_gone

pytestmark = pytest.mark.anyio


def _loads_the_sdk(code: str) -> bool:
    probe = code + "\nimport sys\nprint('mcp' in sys.modules or 'mcp_types' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return out.stdout.strip() == "True"


def test_reading_configs_and_spawning_do_not_load_the_sdk() -> None:
    assert not _loads_the_sdk("from mcpkit.client import ServerConfig, load_config, spawn, CallError")
    # the root still gives every name it lists, the session among them
    assert _loads_the_sdk("from mcpkit.client import Session")


def test_the_root_lists_exactly_the_names_it_gives() -> None:
    import mcpkit.client

    for name in mcpkit.client.__all__:
        assert getattr(mcpkit.client, name) is not None
    with pytest.raises(AttributeError):
        _ = mcpkit.client.NoSuchName  # type: ignore[attr-defined]


async def test_a_session_adopts_the_spawned_process_and_ends_its_group() -> None:
    server = ServerConfig(name="echo", command=sdk_echo())
    process = await spawn(server)
    async with Session(server, SessionOptions(timeout=30), process=process) as session:
        assert session.pid == process.pid
        outcome = await session.call("echo", {"text": "adopted"})
        assert "adopted" in outcome.text
    assert wait_gone([process.pid]) == []
    assert not group_alive(process.pid)


async def test_spawning_a_missing_command_names_it() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-server-binary"):
        await spawn(ServerConfig(name="x", command=["no-such-server-binary"]))
    with pytest.raises(ValueError, match="not a stdio server"):
        await spawn(ServerConfig(name="u", url="http://127.0.0.1:9/mcp"))


def test_a_spawned_process_nobody_adopts_is_ended_at_exit() -> None:
    script = textwrap.dedent(
        f"""
        import anyio
        from mcpkit.client import ServerConfig, spawn

        async def main():
            process = await spawn(ServerConfig(name="r", command={raw()!r}))
            print(process.pid, flush=True)

        anyio.run(main)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(out.stdout.split()[0])
    assert wait_gone([pid]) == [], f"pid {pid} outlived the process that spawned it"
