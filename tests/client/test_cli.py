"""``mcpkit tools / call / shell`` as real processes against the fixture servers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mcpkit.cli import app as mcpkit_app
from mcpkit.client._args import parse_pairs
from mcpkit.client.target_cli import split_pairs
from tests.client.procs import RAW, children_of, raw, wait_gone

MCPKIT = [sys.executable, "-m", "mcpkit"]


def mcpkit(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCPKIT, *args], input=stdin, capture_output=True, text=True, timeout=timeout)


def test_tools_json_lists_definitions() -> None:
    out = mcpkit("tools", "--json", "--", *raw())
    assert out.returncode == 0, out.stderr
    names = [t["name"] for t in json.loads(out.stdout)]
    assert "echo" in names and "mixed" in names


def test_tools_table() -> None:
    out = mcpkit("tools", "--", *raw())
    assert out.returncode == 0 and "echo" in out.stdout and "Return the text." in out.stdout


def test_call_prints_text_and_keeps_string_typed_values() -> None:
    out = mcpkit("call", "echo", "text=007", "--", *raw())
    assert out.returncode == 0, out.stderr
    assert out.stdout == "007\n"


def test_call_with_json_args_and_json_output() -> None:
    out = mcpkit("call", "mixed", "--json", "--args", "{}", "--", *raw())
    assert out.returncode == 0
    assert len(json.loads(out.stdout)["content"]) == 7


def test_call_is_error_exits_1_with_message_on_stderr() -> None:
    out = mcpkit("call", "fail", "--", *raw())
    assert out.returncode == 1 and out.stdout == "" and "disk on fire" in out.stderr


def test_call_crash_exits_1_with_exit_code() -> None:
    out = mcpkit("call", "crash", "code=5", "--", *raw())
    assert out.returncode == 1 and "exited with code 5" in out.stderr


def test_call_timeout_exits_1() -> None:
    # --timeout also bounds start-up: generous enough for a loaded machine to start the
    # server, far short of the call's hour.
    out = mcpkit("call", "sleep", "seconds=3600", "--timeout", "5", "--", *raw())
    assert out.returncode == 1 and "timed out" in out.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["call", "echo"],  # no target
        ["call", "echo", "--url", "http://127.0.0.1:9/mcp", "--", "python"],  # two targets
        ["call", "echo", "--args", "[1]", "--", "python"],  # not an object
        ["call", "echo", "--args", "{", "--", "python"],  # not JSON
        ["call", "echo", "--args", "{}", "a=1", "--", "python"],  # both forms
        ["tools", "--server", "nope", "--config", "/nonexistent.json"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = CliRunner().invoke(mcpkit_app, args)
    assert result.exit_code == 2, result.output


def test_server_from_config(tmp_path: Path) -> None:
    cfg = tmp_path / "servers.toml"
    cfg.write_text(
        f"[mcpServers.raw]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(RAW))}]\n"
    )
    out = mcpkit("call", "echo", "text=hello", "--server", "raw", "--config", str(cfg))
    assert out.returncode == 0 and out.stdout == "hello\n"


def test_unreachable_url_exits_1() -> None:
    out = mcpkit("tools", "--url", "http://127.0.0.1:9/mcp", "--timeout", "5")
    assert out.returncode == 1 and out.stderr.startswith("error:")


def test_trace_flag_writes_messages_to_stderr() -> None:
    out = mcpkit("call", "echo", "text=hi", "--trace", "stderr", "--", *raw())
    assert out.returncode == 0
    assert '-> {"jsonrpc":"2.0","id":' in out.stderr and " <- " in out.stderr


def test_shell_lists_calls_and_keeps_history() -> None:
    script = 'list\ncall echo {"text": "hey"}\necho text=yo\nfail\nhistory\nquit\n'
    out = mcpkit("shell", "--", *raw(), stdin=script)
    assert out.returncode == 0, out.stderr
    assert "echo: Return the text." in out.stdout
    assert "hey\n" in out.stdout and "yo\n" in out.stdout
    assert "tool error: it broke" in out.stderr
    assert "   2  call echo" in out.stdout


def test_ctrl_c_during_a_call_kills_the_server() -> None:
    # SIGINT's default disposition, whatever this test worker inherited (see test_lifecycle.py).
    proc = subprocess.Popen(
        [*MCPKIT, "call", "hang", "--timeout", "600", "--", *raw()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    servers: list[int] = []
    deadline = time.monotonic() + 60
    while not servers and time.monotonic() < deadline:
        servers = children_of(proc.pid)
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # in the handshake or the call: either way the server goes
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert servers and wait_gone(servers) == []


@given(
    st.lists(st.from_regex(r"[a-z_][a-z0-9_]{0,8}=[^\s]{0,10}", fullmatch=True), max_size=5),
    st.lists(st.from_regex(r"[a-z/][a-z0-9./-]{0,10}", fullmatch=True), max_size=4),
)
def test_split_pairs_finds_where_the_command_starts(pairs: list[str], command: list[str]) -> None:
    assert split_pairs([*pairs, *command]) == (pairs, command)


@given(
    st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), st.text(max_size=10), max_size=5)
)
def test_string_properties_stay_strings(values: dict[str, str]) -> None:
    schema = {"type": "object", "properties": {k: {"type": "string"} for k in values}}
    assert parse_pairs([f"{k}={v}" for k, v in values.items()], schema) == values


def test_untyped_values_are_read_as_json_when_they_parse() -> None:
    assert parse_pairs(["n=5", "f=true", "l=[1]", "s=hello"]) == {"n": 5, "f": True, "l": [1], "s": "hello"}


def test_commands_are_mounted_in_mcpkit() -> None:
    """``python -m mcpkit`` has the client commands, mounted by mcpkit.cli."""
    out = subprocess.run(
        [sys.executable, "-m", "mcpkit", "--help"], capture_output=True, text=True, timeout=60
    )
    for name in ("tools", "call", "shell", "check", "archive", "redmine"):
        assert f" {name} " in out.stdout, out.stdout
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "call", "echo", "text=mounted", "--", *raw()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == "mounted\n"


def test_timeout_bounds_initialize_on_stdio_too() -> None:
    # ``sleep`` reads nothing and answers nothing: the opening request must give up at --timeout.
    # Under --protocol auto (the default) that is server/discover, and the error names it.
    out = mcpkit("call", "anything", "--timeout", "2", "--", "sleep", "60")
    assert out.returncode == 1 and "no answer to server/discover within 2 s" in out.stderr
    assert out.stderr.count("\n") == 1


def test_url_without_a_scheme_is_a_usage_error() -> None:
    result = CliRunner().invoke(mcpkit_app, ["tools", "--url", "127.0.0.1:8000/mcp"])
    assert result.exit_code == 2 and "http:// or https://" in result.output
