#!/usr/bin/env python3
"""`make demo` for the post archive: import the shipped sample, embed it, search it.

Installs nothing (the Makefile does). Every step runs the real command-line face in a child
process, exactly as a user would type it, on a throw-away database (``--db DIR/demo.db``,
default a temporary directory), so the demo also proves the CLI works end to end.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from mcpkit.archive.web.serve import DEFAULT_PORT, web_url


def sample_csv() -> Path:
    ref = resources.files("mcpkit.archive") / "data" / "sample_twilog.csv"
    with resources.as_file(ref) as path:
        return Path(path)


def step(title: str, *args: str, env: dict[str, str]) -> None:
    shown = "mcpkit archive " + " ".join(shlex.quote(a) for a in args)
    print(f"\n=== {title}\n$ {shown}", flush=True)
    db = env["MCPKIT_ARCHIVE_DB"]
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.archive.cli", *args, "--db", db], env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"demo step failed ({done.returncode}): {shown}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, help="where to put demo.db (default: a temporary directory)")
    opts = parser.parse_args(argv)
    workdir = opts.dir or Path(tempfile.mkdtemp(prefix="mcpkit-archive-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "demo.db"
    env = dict(os.environ, MCPKIT_ARCHIVE_DB=str(db))
    csv_path = sample_csv()
    print(f"Post archive demo: sample {csv_path.name}, database {db}")
    step(
        "Import the sample Twilog export (330 posts, 4 users, likes and bookmarks)",
        "import",
        str(csv_path),
        env=env,
    )
    step("Import it again: nothing is added twice", "import", str(csv_path), env=env)
    step("Embed every post with the bundled offline model", "embed", env=env)
    step("Japanese semantic search", "search", "猫が日向で寝ている", "--top-k", "3", env=env)
    step(
        "An English query finds Japanese posts",
        "search",
        "saw Mount Fuji from the bullet train",
        "--top-k",
        "4",
        env=env,
    )
    step(
        "Semantic search with filters",
        "search",
        "旅行の思い出",
        "--user",
        "kenji_travel",
        "--to",
        "2024-06-30",
        "--top-k",
        "3",
        env=env,
    )
    step("Text search (FTS5 trigram index)", "text", "コーヒー", "--limit", "3", env=env)
    step("Database statistics", "stats", env=env)
    step("Users by number of posts", "users", env=env)
    print(
        f"""
=== Next steps
Serve this archive over WebSocket JSON-RPC (upstream's port 8765, loopback only):
  MCPKIT_ARCHIVE_DB={db} mcpkit archive start      # returns once it answers; stop with: mcpkit archive stop
Then query it from the CLI (it uses the server when one answers) or the interactive shell:
  mcpkit archive search "cats sleeping in the sun"
  mcpkit archive shell
Run the MCP server for a client such as Claude Desktop:
  mcpkit archive mcp --url ws://127.0.0.1:8765          # thin wrapper over the running server
  mcpkit archive mcp --db {db}                          # or in-process, no server needed
Browse it in the local web app (search as you type, timeline, posts in their threads):
  mcpkit archive web --db {db}
  then open {web_url("127.0.0.1", DEFAULT_PORT)}
"""
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
