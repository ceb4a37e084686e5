"""Team controls (issue 38): tool allow/deny lists, overrides, per-caller rate limits, reload.

Against real gateway children and real downstream processes; the limits are set so they
cannot refill during a test (or driven by a clock the test holds), the reload is checked with
a call surely in flight (the gate server waits for the test's word).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.gateway import GatewayConfigError, load_gateway_config
from mcpkit.gateway.controls import Limiter, RateLimit, parse_rate_limit, parse_tool_rules
from mcpkit.gateway.limits_http import caller_of
from tests.client.procs import free_port
from tests.gateway.support import (
    HERE,
    INITIALIZE,
    flaky,
    gateway_argv,
    gateway_env,
    gateway_session,
    wait_port,
    write_config,
)

GATE = HERE / "fixtures" / "gate_server.py"


def gate(directory: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(GATE), str(directory)]}


# -- the config ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ({"include": "echo"}, "gateway.servers.a.tools.include: must be a list of tool names or globs"),
        ({"exclude": [""]}, "gateway.servers.a.tools.exclude: must be a list"),
        ({"inclde": ["x"]}, "gateway.servers.a.tools: unknown keys inclde (known"),
        (
            {"overrides": {"echo": {"descr": "x"}}},
            "gateway.servers.a.tools.overrides.echo: unknown keys descr",
        ),
        (
            {"overrides": {"echo": {"description": 3}}},
            "overrides.echo.description: must be a non-empty string",
        ),
        (
            {"overrides": {"echo": {"annotations": {"readOnly": True}}}},
            "overrides.echo.annotations: unknown hint 'readOnly'",
        ),
        (
            {"overrides": {"echo": {"annotations": {"readOnlyHint": "yes"}}}},
            "overrides.echo.annotations.readOnlyHint: must be true or false",
        ),
    ],
)
def test_bad_tool_rules_are_refused_in_one_line_naming_the_field(
    tmp_path: Path, tools: dict[str, Any], message: str
) -> None:
    path = write_config(tmp_path / "gw.json", {"a": flaky()}, {"servers": {"a": {"tools": tools}}})
    with pytest.raises(GatewayConfigError) as caught:
        load_gateway_config(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_misspelt_server_key_is_refused_not_ignored(tmp_path: Path) -> None:
    path = write_config(
        tmp_path / "gw.json", {"a": flaky()}, {"servers": {"a": {"tool": {"exclude": ["x"]}}}}
    )
    with pytest.raises(GatewayConfigError) as caught:
        load_gateway_config(path)
    assert "gateway.servers.a: unknown keys 'tool' (known: max_concurrent, protocol, tools)" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ({"calls": 0}, "gateway.rate_limit.calls: must be a positive whole number"),
        ({"calls": 2.5}, "gateway.rate_limit.calls: must be a positive whole number"),
        ({"calls": 3, "per": -1}, "gateway.rate_limit.per: must be a positive number of seconds"),
        ({"calls": 3, "every": 1}, "gateway.rate_limit: unknown keys every"),
        (5, "gateway.rate_limit: must be a table"),
    ],
)
def test_bad_rate_limits_are_refused_in_one_line(tmp_path: Path, limit: Any, message: str) -> None:
    path = write_config(tmp_path / "gw.json", {"a": flaky()}, {"rate_limit": limit})
    with pytest.raises(GatewayConfigError) as caught:
        load_gateway_config(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
KEYED = st.dictionaries(
    st.sampled_from(["include", "exclude", "overrides", "calls", "per", "description", "annotations"]),
    JSONISH,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSONISH, KEYED))
def test_any_input_is_a_rule_set_or_one_line_refusal(raw: Any) -> None:
    for parse in (parse_tool_rules, parse_rate_limit):
        try:
            parse(raw, "gw")
        except GatewayConfigError as exc:
            assert str(exc).startswith("gw") and "\n" not in str(exc)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 20),
    st.floats(0.5, 100),
    st.lists(st.tuples(st.sampled_from(["a", "b"]), st.floats(0, 30)), max_size=80),
)
def test_a_caller_never_gets_more_than_its_bucket_and_refill(
    calls: int, per: float, steps: list[tuple[str, float]]
) -> None:
    clock = Clock()
    limiter = Limiter(RateLimit(calls, per), clock)
    start = clock.now
    allowed = {"a": 0, "b": 0}
    for caller, advance in steps:
        clock.now += advance
        wait = limiter.take(caller)
        if wait is None:
            allowed[caller] += 1
        else:
            assert wait > 0
            clock_then = clock.now
            clock.now += wait  # exactly when it says, the call goes
            assert limiter.take(caller) is None
            allowed[caller] += 1
            assert clock.now > clock_then
    for count in allowed.values():
        assert count <= calls + (clock.now - start) * calls / per + 1e-6


def test_the_bucket_refills_only_as_time_passes() -> None:
    clock = Clock()
    limiter = Limiter(RateLimit(2, 60), clock)
    assert limiter.take("a") is None and limiter.take("a") is None
    wait = limiter.take("a")
    assert wait == pytest.approx(30.0)
    assert limiter.take("b") is None  # another caller has its own bucket
    clock.now += 29.0
    assert limiter.take("a") == pytest.approx(1.0)
    clock.now += 1.0
    assert limiter.take("a") is None
    assert "2 calls per 60 s per caller; try again in 30 s" in limiter.refusal(30.0)


def test_the_caller_is_the_tokens_subject_then_client_id_then_address() -> None:
    class Access:
        def __init__(self, claims: dict[str, Any], client_id: str) -> None:
            self.claims, self.client_id = claims, client_id

    class User:
        def __init__(self, access: Access) -> None:
            self.access_token = access

    assert caller_of({"user": User(Access({"sub": "ann"}, "app")), "client": ("10.0.0.1", 1)}) == "sub:ann"
    assert caller_of({"user": User(Access({}, "app")), "client": ("10.0.0.1", 1)}) == "client:app"
    assert caller_of({"client": ("10.0.0.1", 5)}) == "addr:10.0.0.1"


# -- allow/deny lists and overrides over a real gateway ------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_excluded_tools_are_neither_listed_nor_callable(tmp_path: Path) -> None:
    rules = {"tools": {"include": ["echo", "t*", "listing"], "exclude": ["tags"]}}
    config = write_config(tmp_path / "gw.json", {"a": flaky()}, {"servers": {"a": rules}})
    async with gateway_session(config) as session:
        assert sorted(t["name"] for t in await session.list_tools()) == ["a_echo", "a_listing", "a_tree"]
        excluded = await session.call("a_tags", {"tags": {}})
        unknown = await session.call("a_nosuch", {"tags": {}})
        assert excluded.is_error and unknown.is_error
        assert excluded.text == unknown.text.replace("a_nosuch", "a_tags")
        assert (await session.call("a_echo", {"text": "hi"})).text == "hi"


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_override_is_adapted_like_the_servers_own_text(tmp_path: Path) -> None:
    """choice's own description breaks claude-desktop-2025's rules (parentheses, underscores);
    the same text given to echo by an override comes out rewritten the same way."""
    own = "Pick a value (a number or a flag) from the time_entries list."
    override = {"description": own, "annotations": {"readOnlyHint": True, "title": "Echo"}}
    rules = {"tools": {"overrides": {"echo": override}}}
    config = write_config(tmp_path / "gw.json", {"a": flaky()}, {"servers": {"a": rules}})
    async with gateway_session(config, client_name="claude-ai") as session:
        tools = {t["name"]: t for t in await session.list_tools()}
    assert tools["a_choice"]["description"] != own  # the strict client's rules rewrite it
    assert tools["a_echo"]["description"] == tools["a_choice"]["description"]
    assert tools["a_echo"]["annotations"] == {"readOnlyHint": True, "title": "Echo"}
    async with gateway_session(config, client_name="mcp-inspector") as session:
        tools = {t["name"]: t for t in await session.list_tools()}
    assert tools["a_echo"]["description"] == tools["a_choice"]["description"] == own  # a lenient client


# -- rate limits -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_stdio_caller_past_its_limit_gets_one_line_is_error(tmp_path: Path) -> None:
    """Two calls an hour: the third cannot have refilled during the test."""
    config = write_config(tmp_path / "gw.json", {"a": flaky()}, {"rate_limit": {"calls": 2, "per": 3600}})
    async with gateway_session(config) as session:
        assert (await session.call("a_echo", {"text": "1"})).text == "1"
        assert (await session.call("a_echo", {"text": "2"})).text == "2"
        refused = await session.call("a_echo", {"text": "3"})
        assert refused.is_error
        assert refused.text.startswith(
            "Rate limit reached: this gateway allows 2 calls per 3600 s per caller"
        )
        assert "\n" not in refused.text


@pytest.mark.slow
def test_an_http_caller_past_its_limit_gets_429_with_retry_after(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"a": flaky()}, {"rate_limit": {"calls": 2, "per": 3600}})
    port = free_port()
    proc = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port)),
        env={**os.environ, **gateway_env()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

        def call(i: int, **extra: Any) -> httpx2.Response:
            params = {"name": "a_echo", "arguments": {"text": str(i)}, **extra}
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
            return httpx2.post(url, json=body, headers=headers, timeout=60)

        first = call(1)
        second = call(2, _meta={"progressToken": "p"})  # the SDK's path counts too
        third = call(3)
        assert first.status_code == 200 and second.status_code == 200
        assert third.status_code == 429
        assert 1 <= int(third.headers["retry-after"]) <= 1800
        assert third.text.startswith("Rate limit reached") and third.text.count("\n") == 1
        listed = httpx2.post(
            url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers=headers, timeout=60
        )
        assert listed.status_code == 200  # only calls count
    finally:
        proc.terminate()
        proc.wait(30)


# -- reload ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("how", ["sighup", "file"])
async def test_reload_keeps_the_call_in_flight_and_announces_the_change(tmp_path: Path, how: str) -> None:
    gate_dir = tmp_path / "gate"
    gate_dir.mkdir()
    servers = {"g": gate(gate_dir)}
    config = write_config(tmp_path / "gw.json", servers)
    changed = anyio.Event()

    async def heard(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    async with gateway_session(config, on_notification=heard) as session:
        assert sorted(t["name"] for t in await session.list_tools()) == ["g_echo", "g_note", "g_wait"]
        result: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:

            async def slow() -> None:
                result["wait"] = await session.call("g_wait", {})

            tg.start_soon(slow)
            with anyio.fail_after(60):
                while not (gate_dir / "started").exists():
                    await anyio.sleep(0.01)
            rules = {
                "servers": {"g": {"tools": {"exclude": ["echo"], "overrides": {"note": {"title": "Word"}}}}}
            }
            write_config(tmp_path / "next.json", servers, rules).replace(config)
            if how == "sighup":
                os.kill(_gateway_pid(tmp_path), signal.SIGHUP)
            with anyio.fail_after(60):
                await changed.wait()
            (gate_dir / "release").touch()
        assert result["wait"].text == "released" and not result["wait"].is_error
        tools = {t["name"]: t for t in await session.list_tools(refresh=True)}
        assert sorted(tools) == ["g_note", "g_wait"] and tools["g_note"]["title"] == "Word"
        assert (await session.call("g_echo", {"text": "x"})).is_error


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_broken_config_on_reload_keeps_the_running_one(tmp_path: Path) -> None:
    gate_dir = tmp_path / "gate"
    gate_dir.mkdir()
    servers = {"g": gate(gate_dir)}
    config = write_config(tmp_path / "gw.json", servers, {"servers": {"g": {"tools": {"exclude": ["note"]}}}})
    changed = anyio.Event()

    async def heard(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    async with gateway_session(config, on_notification=heard) as session:
        assert sorted(t["name"] for t in await session.list_tools()) == ["g_echo", "g_wait"]
        broken = {"servers": {"g": {"tools": {"exclude": "note"}}}}
        write_config(tmp_path / "next.json", servers, broken).replace(config)
        os.kill(_gateway_pid(tmp_path), signal.SIGHUP)
        # then a good one: its change is announced, so the broken one was read and refused before
        write_config(tmp_path / "next.json", servers).replace(config)
        os.kill(_gateway_pid(tmp_path), signal.SIGHUP)
        with anyio.fail_after(60):
            await changed.wait()
        assert sorted(t["name"] for t in await session.list_tools(refresh=True)) == [
            "g_echo",
            "g_note",
            "g_wait",
        ]


def _gateway_pid(tmp_path: Path) -> int:
    """The gateway child of this test: the process whose command line names this test's config."""
    config = str(tmp_path / "gw.json")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"gateway" in argv and config.encode() in argv and int(entry.name) != os.getpid():
            return int(entry.name)
    raise AssertionError(f"no gateway running with {config}")


@pytest.mark.slow
def test_sighup_no_longer_stops_a_gateway(tmp_path: Path) -> None:
    """SIGHUP reloads; the gateway answers afterwards, and SIGTERM still ends it (143)."""
    config = write_config(tmp_path / "gw.json", {"a": flaky()})
    proc = subprocess.Popen(
        gateway_argv(config), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        assert b'"result"' in proc.stdout.readline()
        proc.send_signal(signal.SIGHUP)
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
        proc.stdin.flush()
        assert b'"id": 2' in proc.stdout.readline().replace(b'"id":2', b'"id": 2')
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) in (143, 0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_an_http_gateway_applies_a_changed_file_to_its_lists_and_limit(tmp_path: Path) -> None:
    """Over HTTP too: a changed file excludes a tool and sets a limit, without a restart."""
    config = write_config(tmp_path / "gw.json", {"a": flaky()})
    port = free_port()
    proc = subprocess.Popen(
        gateway_argv(config, "--transport", "http", "--port", str(port)),
        env={**os.environ, **gateway_env()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    def post(method: str, params: dict[str, Any]) -> httpx2.Response:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return httpx2.post(url, json=body, headers=headers, timeout=60)

    def listed() -> set[str]:
        text = post("tools/list", {}).text  # a JSON body or one SSE event
        line = (
            text if text.startswith("{") else next(x[5:] for x in text.splitlines() if x.startswith("data:"))
        )
        return {t["name"] for t in json.loads(line)["result"]["tools"]}

    try:
        wait_port(port)
        assert "a_tags" in listed()
        limited = {
            "rate_limit": {"calls": 1, "per": 3600},
            "servers": {"a": {"tools": {"exclude": ["tags"]}}},
        }
        write_config(tmp_path / "next.json", {"a": flaky()}, limited).replace(config)
        deadline = time.monotonic() + 60  # the file is looked at every second: until the change shows
        while "a_tags" in listed():
            assert time.monotonic() < deadline, "the changed config was not applied"
            time.sleep(0.05)
        assert post("tools/call", {"name": "a_echo", "arguments": {"text": "1"}}).status_code == 200
        assert post("tools/call", {"name": "a_echo", "arguments": {"text": "2"}}).status_code == 429
    finally:
        proc.terminate()
        proc.wait(30)
