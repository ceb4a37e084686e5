"""Shared test set-up: the anyio backend and the `slow` marker. Paths and helpers live in tests/support/.

`make test` runs everything on all cores; `pytest -m "not slow"` runs the quick tests while you
work. A test is slow when it starts real processes (the mcpkit CLI, servers over stdio or HTTP,
third-party servers, a daemon), talks to the real Redmine, or sweeps big generated corpora. The
modules below hold such tests; a test elsewhere that is slow carries ``@pytest.mark.slow``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SLOW_MODULES = {
    # real child processes: the mcpkit CLI, stdio and HTTP servers, the archive daemon and demo
    "archive_faces/test_demo.py",
    "archive_faces/test_daemon.py",
    "archive_faces/test_shell.py",
    "archive_faces/test_cli.py",
    "client/test_cli.py",
    "client/test_leak.py",
    "client/test_lifecycle.py",
    "client/test_seed004.py",
    "check/test_check_fixtures.py",
    "check/test_protocol_checks.py",
    "client/test_http.py",
    "archive/test_enrich.py",
    "archive_faces/test_limits.py",
    "archive_faces/test_parity.py",
    "check/test_third_party.py",
    "compat/test_corpus.py",
    "server/test_stdio_server.py",
    "server/test_sdk_client.py",
    "redmine/test_config.py",
    # the official schemas over thousands of generated results
    "results/test_schema_crosscheck.py",
}
SLOW_DIRS = ("integration/",)
HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relative = Path(str(item.path)).relative_to(HERE).as_posix()
        except ValueError:
            continue
        if relative in SLOW_MODULES or relative.startswith(SLOW_DIRS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
