"""The archive's errors sit under the bases of mcpkit's error tree that say what a caller can do,
and the faces still answer them as before (JSON-RPC -32603, exit 1, an isError line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.errors import (
    ArchiveError,
    DamagedSpaceError,
    ImportFormatError,
    ModelMismatchError,
    SpaceMissingError,
)
from mcpkit.archive.mcp import EmbedStoppedError, ToolFailedError
from mcpkit.archive.rpc.security import SecurityConfigError
from mcpkit.errors import CallError, ConfigError, ValidationError
from mcpkit.jsonrpc import JsonRpcError

from .helpers import HashEmbedder, row, write_csv

pytestmark = pytest.mark.anyio

# what a caller does about it: fix a setting or set the archive up (ConfigError), or take the
# failed call as failed (CallError); none is a bad argument (ValidationError, -32602, exit 2)
SETUP = [SpaceMissingError, ModelMismatchError, SecurityConfigError]
FAILED = [ArchiveError, ImportFormatError, DamagedSpaceError, ToolFailedError, EmbedStoppedError]


@pytest.mark.parametrize("cls", SETUP + FAILED)
def test_one_except_call_error_covers_an_archive_failure(cls: type[Exception]) -> None:
    with pytest.raises(CallError):
        raise cls("x")


@pytest.mark.parametrize("cls", SETUP)
def test_what_needs_setting_up_is_a_config_error(cls: type[Exception]) -> None:
    with pytest.raises(ConfigError):
        raise cls("x")


@pytest.mark.parametrize("cls", SETUP + FAILED)
def test_no_archive_failure_reads_as_a_bad_argument(cls: type[Exception]) -> None:
    assert not issubclass(cls, ValidationError | ValueError)


async def test_a_missing_space_is_still_an_internal_error_on_the_wire(tmp_path: Path) -> None:
    api = ArchiveAPI.open(tmp_path / "a.db", embedder=HashEmbedder())
    try:
        import_csv_rows(api, tmp_path)
        with pytest.raises(JsonRpcError) as info:
            await api.call("search_similar", {"query": "post"})  # nothing embedded yet
    finally:
        api.close()
    assert info.value.code == -32603
    assert isinstance(info.value.__cause__, SpaceMissingError)


def import_csv_rows(api: ArchiveAPI, tmp_path: Path) -> None:
    from mcpkit.archive.importers import import_csv

    rows = [row(i, "alice", f"post {i}", f"2024-01-{i:02d} 00:00:00") for i in range(1, 4)]
    import_csv(write_csv(tmp_path / "e.csv", rows), api.engine.store)
