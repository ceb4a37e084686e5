"""The lossless output cap: windows that add up to the whole text, a memory budget, a directory
that replicas share, and ids that can never name another file."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.gateway import GatewayConfigError, load_gateway_config
from mcpkit.gateway.overflow import Overflow
from tests.client.procs import free_port
from tests.gateway.support import flaky, gateway_argv, wait_port, write_config


def _pointer(text: str) -> tuple[str, int] | None:
    """The (id, offset) a cut window names, or None on the last window."""
    tail = text.rpartition("\n[")[2]
    if not tail.startswith("cut:"):
        return None
    key, offset = tail.split("readmore with id=")[1].rstrip("]").split(" and offset=")
    return key, int(offset)


def _body(text: str) -> str:
    head, _, tail = text.rpartition("\n[")
    return head if tail.startswith(("cut:", "end:")) else text


def _read_all(first: str, read: Any) -> str:
    got, window = _body(first), first
    while (pointer := _pointer(window)) is not None:
        window = read(*pointer)
        assert window is not None
        got += _body(window)
    return got


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=st.characters(blacklist_characters="\n["), max_size=120), max_size=400),
    cap=st.integers(min_value=50, max_value=3000),
)
def test_stepping_through_the_windows_gives_back_the_whole_text(lines: list[str], cap: int) -> None:
    whole = "\n".join(lines)
    overflow = Overflow(cap)
    cut = overflow.apply({"content": [{"type": "text", "text": whole}]})
    first = cut["content"][0]["text"]
    assert _read_all(first, overflow.read) == whole


def test_other_content_and_fields_are_kept() -> None:
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    cut = Overflow(10).apply({"content": [{"type": "text", "text": "x" * 100}, image], "isError": False})
    assert cut["content"][1] == image and cut["isError"] is False


def test_the_memory_budget_drops_the_oldest_and_keeps_the_newest() -> None:
    overflow = Overflow(10, keep_bytes=250)
    keys = []
    for i in range(5):
        cut = overflow.apply({"content": [{"type": "text", "text": str(i) * 100}]})
        pointer = _pointer(cut["content"][0]["text"])
        assert pointer is not None
        keys.append(pointer[0])
    assert overflow.read(keys[0], 10) is None  # dropped: the client is told to call again
    assert overflow.read(keys[-1], 10) is not None
    small = Overflow(10, keep_bytes=5)  # one answer bigger than the whole budget is still kept
    pointer = _pointer(small.apply({"content": [{"type": "text", "text": "y" * 100}]})["content"][0]["text"])
    assert pointer is not None and small.read(*pointer) is not None


def test_replicas_sharing_a_directory_serve_each_others_rest(tmp_path: Path) -> None:
    one, two = Overflow(100, directory=tmp_path / "cuts"), Overflow(100, directory=tmp_path / "cuts")
    whole = "\n".join(f"line {i}" for i in range(500))
    first = one.apply({"content": [{"type": "text", "text": whole}]})["content"][0]["text"]
    assert _read_all(first, two.read) == whole


@pytest.mark.parametrize("key", ["../secret", "/tmp/x", "a" * 32 + "/../../secret", "A" * 32, "", ".cut-x"])
def test_an_id_that_is_not_one_of_ours_names_no_file(tmp_path: Path, key: str) -> None:
    (tmp_path / "secret.txt").write_text("not for clients")
    overflow = Overflow(100, directory=tmp_path / "cuts")
    (tmp_path / "cuts" / f"{'A' * 32}.txt").write_text("a file the id check must not reach")
    assert overflow.read(key, 0) is None


def test_old_files_are_swept(tmp_path: Path) -> None:
    overflow = Overflow(10, directory=tmp_path, keep_seconds=60)
    first = overflow.apply({"content": [{"type": "text", "text": "a" * 50}]})["content"][0]["text"]
    pointer = _pointer(first)
    assert pointer is not None
    old = tmp_path / f"{pointer[0]}.txt"
    os.utime(old, (time.time() - 120, time.time() - 120))
    overflow._swept = 0.0  # as if the last sweep was long ago
    overflow.apply({"content": [{"type": "text", "text": "b" * 50}]})
    assert not old.exists()
    assert overflow.read(pointer[0], 10) is None


def test_overflow_dir_must_be_a_path(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()}, {"output_cap": 100, "overflow_dir": 3})
    with pytest.raises(GatewayConfigError, match="overflow_dir"):
        load_gateway_config(config)


def test_an_overflow_dir_that_cannot_be_made_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    config = write_config(
        tmp_path / "gw.json", {"flaky": flaky()}, {"output_cap": 100, "overflow_dir": str(blocker / "sub")}
    )
    got = subprocess.run(
        [*gateway_argv(config)], input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert got.returncode == 2
    assert "overflow_dir" in got.stderr and "Traceback" not in got.stderr


@pytest.mark.slow
def test_two_http_replicas_share_cut_answers(tmp_path: Path) -> None:
    """Behind a balancer a readmore may reach another replica: with a shared overflow_dir it works."""
    config = write_config(
        tmp_path / "gw.json",
        {"flaky": flaky()},
        {"output_cap": 2000, "overflow_dir": str(tmp_path / "cuts")},
    )
    ports = [free_port(), free_port()]
    procs = [
        subprocess.Popen(
            gateway_argv(config, "--transport", "http", "--port", str(port)),
            env={**os.environ, "MCPKIT_LOG": "warning"},
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    try:
        for port in ports:
            wait_port(port)

        def call(port: int, name: str, arguments: dict[str, Any]) -> str:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
            got = httpx2.post(
                f"http://127.0.0.1:{port}/mcp",
                content=json.dumps(body),
                headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
                timeout=60,
            )
            return str(got.json()["result"]["content"][0]["text"])

        first = call(ports[0], "flaky_long", {"lines": 1000})
        turn = iter(ports * 50)  # alternate replicas, as a round-robin balancer would
        whole = _read_all(
            first, lambda key, offset: call(next(turn), "readmore", {"id": key, "offset": offset})
        )
        assert whole == "\n".join(f"line {i:04d}" for i in range(1000))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)
