"""Config files (JSON and TOML), the Pool, tracing with redaction, and the HTTP transports."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.client import (
    CallError,
    Pool,
    ServerConfig,
    ServerConfigError,
    SessionOptions,
    Tracer,
    connect,
    load_config,
    resolve_target,
)
from mcpkit.client._trace import REDACTED, redact_headers, tracer_for
from tests.client.procs import RAW, SDK_ECHO, wait_gone


def _write_configs(tmp: Path) -> tuple[Path, Path]:
    js = tmp / "servers.json"
    js.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "raw": {
                        "command": sys.executable,
                        "args": [str(RAW)],
                        "env": {"FIXTURE_TOKEN": "t0ps3cret"},
                    },
                    "echo.sdk": {"command": sys.executable, "args": [str(SDK_ECHO)], "cwd": str(tmp)},
                }
            }
        )
    )
    toml = tmp / "servers.toml"
    toml.write_text(
        f"""
[mcpServers.raw]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(RAW))}]
env = {{ FIXTURE_TOKEN = "t0ps3cret" }}

[mcpServers."echo.sdk"]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(SDK_ECHO))}]
cwd = {json.dumps(str(tmp))}
"""
    )
    return js, toml


def test_json_and_toml_configs_are_equivalent(tmp_path: Path) -> None:
    js, toml = _write_configs(tmp_path)
    assert load_config(js) == load_config(toml)
    raw = load_config(js)["raw"]
    assert (
        raw.kind == "stdio"
        and raw.command == [sys.executable, str(RAW)]
        and raw.env == {"FIXTURE_TOKEN": "t0ps3cret"}
    )


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"mcpServers": []},
        {"mcpServers": {"x": {}}},
        {"mcpServers": {"x": {"command": "a", "url": "http://b"}}},
        {"mcpServers": {"x": {"command": "a", "args": "not a list"}}},
        {"mcpServers": {"x": {"url": "http://b", "type": "carrier-pigeon"}}},
        {"mcpServers": {"x": {"command": "a", "timeout": -1}}},
    ],
)
def test_malformed_configs_are_rejected_with_a_reason(tmp_path: Path, bad: object) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ServerConfigError):
        load_config(path)


def test_env_vars_expand_in_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "abc")
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "x": {"url": "http://h/${NOPE:-mcp}", "headers": {"Authorization": "Bearer ${MY_TOKEN}"}}
                }
            }
        )
    )
    cfg = load_config(path)["x"]
    assert cfg.url == "http://h/mcp" and cfg.headers == {"Authorization": "Bearer abc"}


def test_target_resolution_order(tmp_path: Path) -> None:
    js, _ = _write_configs(tmp_path)
    assert resolve_target("https://x/mcp").kind == "http"
    assert resolve_target("raw", config=js).env == {"FIXTURE_TOKEN": "t0ps3cret"}
    assert resolve_target("uvx mcp-server-time --local-timezone 'Europe/Paris'", config=js).command == [
        "uvx",
        "mcp-server-time",
        "--local-timezone",
        "Europe/Paris",
    ]
    assert resolve_target(["a", "b c"]).command == ["a", "b c"]
    with pytest.raises(ServerConfigError, match="no server 'nope'"):
        resolve_target("nope", config=js)


@pytest.mark.anyio
@pytest.mark.parametrize("which", ["json", "toml"])
async def test_pool_calls_server_dot_tool(tmp_path: Path, which: str) -> None:
    js, toml = _write_configs(tmp_path)
    async with Pool.from_config(js if which == "json" else toml, SessionOptions(timeout=30)) as pool:
        assert (await pool.call("raw.echo", {"text": "a"})).text == "a"
        assert (await pool.call("echo.sdk.echo", {"text": "b"})).text == "b"  # server names may hold dots
        assert set(await pool.list_tools()) == {"raw", "echo.sdk"}
        with pytest.raises(CallError, match=r"not 'server\.tool'"):
            await pool.call("nosuch.echo", {})
        pids = [(await pool.session(n)).pid for n in pool.names]
    assert wait_gone([p or 0 for p in pids]) == []


@pytest.mark.anyio
async def test_trace_file_has_time_direction_and_no_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace.log"
    # Only a CLI reads MCPKIT_TRACE (tracer_for); the session is handed the tracer.
    tracer = tracer_for(None, {"MCPKIT_TRACE": str(trace)})
    assert tracer is not None and tracer_for(None, {}) is None
    cfg = ServerConfig(name="raw", command=[sys.executable, str(RAW)], env={"FIXTURE_TOKEN": "t0ps3cret"})
    async with connect(cfg, SessionOptions(timeout=30, tracer=tracer)) as s:
        await s.call("echo", {"text": "the token is t0ps3cret"})
    text = trace.read_text()
    assert "t0ps3cret" not in text
    assert f"'FIXTURE_TOKEN': '{REDACTED}'" in text
    sent = [line for line in text.splitlines() if " -> " in line and '"tools/call"' in line]
    received = [line for line in text.splitlines() if " <- " in line and REDACTED in line]
    assert sent and received
    assert sent[0][:4].isdigit() and sent[0][10] == "T"  # ISO time first


@given(
    st.text(alphabet="ABCDEFGHIJ0123456789", min_size=4, max_size=30),
    st.text(alphabet="abcdefghij {}:", max_size=40),
)
def test_tracer_never_prints_a_secret(secret: str, around: str) -> None:
    import io

    sink = io.StringIO()
    Tracer(sink, secrets=[secret]).line("s", "->", around + secret + around + secret)
    body = sink.getvalue().split("] -> ", 1)[1]
    assert secret not in body and body.count(REDACTED) == 2


def test_authorization_and_key_headers_are_redacted() -> None:
    shown = redact_headers({"Authorization": "Bearer x", "X-Api-Key": "k", "Accept": "json"})
    assert shown == {"Authorization": REDACTED, "X-Api-Key": REDACTED, "Accept": "json"}


@pytest.mark.anyio
async def test_streamable_http_with_auth_header(http_server: int, tmp_path: Path) -> None:
    trace = tmp_path / "t.log"
    url = f"http://127.0.0.1:{http_server}/mcp"
    async with connect(
        url,
        SessionOptions(tracer=Tracer.open(str(trace)), timeout=30),
        headers={"Authorization": "Bearer tok-123456"},
    ) as s:
        assert s.server_info["name"] == "sdk-echo"
        assert (await s.call("echo", {"text": "over http"})).text == "over http"
        with pytest.raises(CallError):
            await s.call("nope", {})
    assert "tok-123456" not in trace.read_text() and "connect http" in trace.read_text()


@pytest.mark.anyio
async def test_http_without_credentials_is_a_connect_error(http_server: int) -> None:
    from mcpkit.client import ConnectError

    with pytest.raises(ConnectError):
        async with connect(
            f"http://127.0.0.1:{http_server}/mcp", SessionOptions(timeout=10, connect_timeout=10)
        ):
            pass


@pytest.mark.anyio
async def test_sse_fallback_when_streamable_http_is_not_served(sse_server: int) -> None:
    async with connect(f"http://127.0.0.1:{sse_server}/sse", SessionOptions(timeout=30)) as s:
        assert (await s.call("echo", {"text": "over sse"})).text == "over sse"
