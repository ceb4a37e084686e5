"""The web app's pictures come out of the export zip decompressed a read at a time: a member
that outgrows what its header declares stops there, whatever the codec, with memory bounded
(zipfile's own read expanded a bzip2 or lzma chunk whole: a few hundred bytes, hundreds of MB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.export_fixtures.bombs import compressed_member, repeated, write_raw_zip
from tests.support.env import REPO

BOUND_KB = 300 * 1024  # peak resident memory of the child, in KiB (its own VmHWM: tests/support/peak.py)
CHILD = """
import sys
from pathlib import Path
from mcpkit.archive.export_media import read_member
from tests.support.peak import vmhwm_kb
got = read_member(Path(sys.argv[1]), sys.argv[2], 20 * 1024 * 1024)
print("none" if got is None else len(got), vmhwm_kb())
"""


def _read_in_child(zip_path: Path, member: str) -> tuple[str, int]:
    """What the web app's reader returns, and the child's peak resident memory in KiB."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(zip_path), member],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,  # `tests` importable
    )
    assert done.returncode == 0, done.stderr
    answer, peak = done.stdout.split()
    return answer, int(peak)


@pytest.mark.parametrize("codec", ["bzip2", "lzma", "deflate"])
def test_a_picture_that_lies_about_its_size_is_not_served_and_memory_stays_bounded(
    codec: str, tmp_path: Path
) -> None:
    bomb = compressed_member("media/a.png", codec, repeated(b"", b"\0", 384 << 20), declare=1000)
    path = write_raw_zip(tmp_path / "export.zip", [bomb])
    answer, peak_kb = _read_in_child(path, "media/a.png")
    assert answer == "none"
    assert peak_kb < BOUND_KB, f"peak {peak_kb // 1024} MiB"


@pytest.mark.parametrize("codec", ["stored", "bzip2", "lzma", "deflate"])
def test_an_honest_picture_is_served_whole(codec: str, tmp_path: Path) -> None:
    from mcpkit.archive.export_media import read_member

    data = bytes(range(256)) * 400
    path = write_raw_zip(tmp_path / "export.zip", [compressed_member("media/b.png", codec, [data])])
    assert read_member(path, "media/b.png", 1 << 20) == data
    assert read_member(path, "media/missing.png", 1 << 20) is None
    assert read_member(path, "media/b.png", 1000) is None  # larger than the page serves
