"""Fixtures for the client tests: HTTP fixture servers started as real processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.client.procs import start_http_server


@pytest.fixture
def http_server() -> Iterator[int]:
    proc, port = start_http_server("--require-token", "tok-123456", "--http")
    yield port
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def sse_server() -> Iterator[int]:
    proc, port = start_http_server("--sse")
    yield port
    proc.terminate()
    proc.wait(10)
