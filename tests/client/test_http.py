"""Streamable HTTP against peers that misbehave at the HTTP level (tests/fixtures/servers/http_misbehave.py).

Every failure must be bounded by the timeout, refused without buffering, and reported in one
line naming the URL, the status and what to do (issue 11).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from mcpkit.client import (
    CallTimeoutError,
    ConnectError,
    HttpError,
    ResponseTooLargeError,
    SessionOptions,
    connect,
)
from tests.client.procs import free_port, start_misbehaving_http

pytestmark = pytest.mark.anyio


@contextmanager
def misbehaving(*flags: str) -> Iterator[str]:
    proc, port = start_misbehaving_http(*flags)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args], capture_output=True, text=True, timeout=120
    )


async def test_one_protocol_version_header_and_the_session_id() -> None:
    # The fixture answers 400 to a repeated MCP-Protocol-Version header (as the TypeScript SDK
    # does) and to any request after initialize without its session id.
    with misbehaving() as url:
        async with connect(url, SessionOptions(timeout=10)) as s:
            assert s.server_info["name"] == "http-misbehave"
            assert (await s.call("echo", {"text": "hi"})).text == "hi"
            assert len(await s.list_tools()) == 5


async def test_a_same_origin_redirect_is_followed() -> None:
    with misbehaving("--redirect") as url:
        async with connect(url, SessionOptions(timeout=10)) as s:
            assert (await s.call("echo", {"text": "moved"})).text == "moved"


async def test_sse_answers_are_read_too() -> None:
    with misbehaving("--sse-answers") as url:
        async with connect(url, SessionOptions(timeout=10)) as s:
            assert (await s.call("echo", {"text": "streamed"})).text == "streamed"


async def test_no_response_stream_stays_open_after_many_calls() -> None:
    with misbehaving() as url:
        async with connect(url, SessionOptions(timeout=10)) as s:
            for i in range(200):
                assert (await s.call("echo", {"text": str(i)})).text == str(i)
            assert s.open_http_streams == 0
            with pytest.raises(CallTimeoutError):
                await s.call("silent", {}, timeout=0.3)
            assert s.pending == 0
            # The cancellation that follows the timeout closes the never-ending stream.
            with anyio.fail_after(60):  # a guard only
                while s.open_http_streams:
                    await anyio.sleep(0.02)


async def test_an_answer_on_a_stream_that_never_ends_returns_at_once() -> None:
    """Closing an answered stream reads its rest only briefly: a stream that never ends is cut."""
    with misbehaving() as url:
        async with connect(url, SessionOptions(timeout=10)) as s:
            with anyio.fail_after(60):  # a guard: the answer comes before the drain, never after it
                assert (await s.call("lingering", {})).text == "answered"
            assert (await s.call("echo", {"text": "next"})).text == "next"
            with anyio.fail_after(60):  # a guard only
                while s.open_http_streams:
                    await anyio.sleep(0.02)


@pytest.mark.parametrize("tool", ["endless", "silent"])
async def test_a_stream_that_never_answers_times_out_and_the_session_goes_on(tool: str) -> None:
    with misbehaving() as url:
        async with connect(url, SessionOptions(timeout=10)) as s:
            with pytest.raises(CallTimeoutError):
                await s.call(tool, {}, timeout=0.5)
            assert s.pending == 0
            assert (await s.call("echo", {"text": "still here"})).text == "still here"


async def test_initialize_is_bounded_by_the_timeout() -> None:
    with (
        misbehaving("--init-hang") as url,
        pytest.raises(ConnectError, match="no answer to initialize within 1 s"),
    ):
        async with connect(url, SessionOptions(timeout=1)):
            pass


@pytest.mark.parametrize("flags", [(), ("--chunked",), ("--sse-answers",)])
async def test_a_body_over_the_limit_is_refused(flags: tuple[str, ...]) -> None:
    with misbehaving(*flags) as url:
        async with connect(url, SessionOptions(timeout=30, max_body=1024 * 1024)) as s:
            with pytest.raises(ResponseTooLargeError, match=r"(body|event) over the 1 MB limit"):
                await s.call("huge", {"megabytes": 5})
            assert (await s.call("huge", {"megabytes": 0.5})).text == "x" * (512 * 1024)
            assert (await s.call("echo", {"text": "after"})).text == "after"


@pytest.mark.slow
@pytest.mark.parametrize("flags", [(), ("--chunked",)])
def test_a_huge_body_is_not_buffered(flags: tuple[str, ...]) -> None:
    """A 1 GB answer with the default 64 MB limit: refused, and the client never holds it."""
    with misbehaving(*flags) as url:
        script = textwrap.dedent(
            f"""
            import anyio, re
            from mcpkit.client import connect, ResponseTooLargeError, SessionOptions

            async def main():
                async with connect({url!r}, SessionOptions(timeout=60)) as s:
                    try:
                        await s.call("huge", {{"megabytes": 1024}})
                    except ResponseTooLargeError as exc:
                        print("refused", exc)
                # VmHWM is this process image's own peak; ru_maxrss would carry over the forking
                # pytest worker's size across exec (Linux keeps it in the signal struct)
                status = open("/proc/self/status").read()
                print(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))

            anyio.run(main)
            """
        )
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("refused") and "64 MB limit" in lines[0], out.stderr
    peak_mb = int(lines[1]) / 1024
    assert peak_mb < 400, f"peak RSS {peak_mb:.0f} MB: the body was buffered"


async def test_an_html_page_is_one_clear_error() -> None:
    with misbehaving("--html") as url, pytest.raises(HttpError) as info:
        async with connect(url, SessionOptions(timeout=10)):
            pass
    assert info.value.status == 200 and info.value.kind == "content-type"
    assert url in str(info.value) and "HTML page" in str(info.value) and "/mcp" in str(info.value)


async def test_an_error_status_is_not_followed_by_the_sse_fallback() -> None:
    with misbehaving("--status", "502") as url, pytest.raises(HttpError) as info:
        async with connect(url, SessionOptions(timeout=10)):
            pass
    assert info.value.status == 502
    assert "HTTP 502" in str(info.value) and "SSE" not in str(info.value)


async def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with anyio.fail_after(30), pytest.raises(HttpError) as info:
        async with connect(url, SessionOptions(timeout=10)):
            pass
    assert info.value.kind == "refused" and "connection refused" in str(info.value) and url in str(info.value)


async def test_tls_with_an_untrusted_certificate(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a self-signed certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    with misbehaving("--tls", str(cert), str(key)) as url:
        tls_url = url.replace("http://", "https://")
        with pytest.raises(HttpError) as info:
            async with connect(tls_url, SessionOptions(timeout=10)):
                pass
    assert (
        info.value.kind == "tls" and "TLS handshake" in str(info.value) and "certificate" in str(info.value)
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--html",), "HTML page"),
        (("--status", "503"), "HTTP 503"),
        (("--init-hang",), "no answer to initialize within 2 s"),
    ],
)
def test_cli_says_it_in_one_line_without_a_traceback(flags: tuple[str, ...], words: str) -> None:
    with misbehaving(*flags) as url:
        out = mcpkit("call", "echo", "text=x", "--timeout", "2", "--url", url)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: ") and words in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_cli_refused_and_trace_shows_details() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    out = mcpkit("tools", "--timeout", "5", "--url", url)
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and url in out.stderr
    with misbehaving("--html") as html_url:
        traced = mcpkit("tools", "--timeout", "5", "--trace", "stderr", "--url", html_url)
    assert traced.returncode == 1 and "->" in traced.stderr and "initialize" in traced.stderr


@pytest.mark.slow
def test_cli_max_body_option() -> None:
    with misbehaving() as url:
        out = mcpkit("call", "huge", "megabytes=2", "--max-body", "1", "--url", url)
        assert out.returncode == 1 and "over the 1 MB limit" in out.stderr
        out = mcpkit("call", "huge", "megabytes=2", "--max-body", "3", "--url", url)
        assert out.returncode == 0 and len(out.stdout) == 2 * 1024 * 1024 + 1


@pytest.mark.slow
def test_sse_fallback_says_why_in_one_line(sse_server: int) -> None:
    out = mcpkit("call", "echo", "text=old", "--url", f"http://127.0.0.1:{sse_server}/sse")
    assert out.returncode == 0 and out.stdout.strip() == "old"
    reason = [line for line in out.stderr.splitlines() if "SSE" in line]
    assert len(reason) == 1 and "POST answered HTTP 405" in reason[0]
