"""Does the installed wheel start as fast as the source tree? Measured side by side.

Builds the wheel (``python -m build``), installs it with every extra into a fresh venv outside
the tree, then times ``mcpkit ... --help`` for each application from that venv and from the
checkout's editable ``.venv``, in interleaved rounds so machine noise hits both alike. Prints
the median wall time of each and the ratio wheel / source (1.00 = no regression).

    python bench/install_startup.py [--rounds 15] [--keep DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = (
    ("--version",),
    ("archive", "--help"),
    ("archive", "mcp", "--help"),
    ("redmine", "--help"),
    ("redmine", "mcp", "--help"),
    ("gateway", "--help"),
)


def _install(where: Path) -> Path:
    dist = where / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
        check=True,
        capture_output=True,
    )
    [wheel] = dist.glob("*.whl")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", f"{wheel}[all]"], check=True)
    return venv / "bin" / "mcpkit"


def _time(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="build and install here, and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        where = args.keep or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        print("building and installing the wheel ...", file=sys.stderr)
        wheel_bin = _install(where)
        source_bin = REPO / ".venv" / "bin" / "mcpkit"
        print(f"{'command':28} {'source ms':>10} {'wheel ms':>10} {'wheel/source':>13}")
        for command in COMMANDS:
            source, wheel = [], []
            for _ in range(args.rounds):  # interleaved: noise hits both alike
                source.append(_time([str(source_bin), *command], where))
                wheel.append(_time([str(wheel_bin), *command], where))
            s, w = statistics.median(source) * 1000, statistics.median(wheel) * 1000
            print(f"{' '.join(command):28} {s:10.0f} {w:10.0f} {w / s:13.2f}")


if __name__ == "__main__":
    main()
