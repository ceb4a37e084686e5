"""Tool-definition baselines: catch a definition that changes after it was approved.

A "rug pull" is a server whose tools look harmless when a user approves them and change
later (a new instruction in a description, a new parameter). ``--baseline FILE`` records a
SHA-256 of every tool definition (canonical JSON: sorted keys, no whitespace) on the first
run; later runs report tools added, removed and changed; ``--update-baseline`` rewrites it.
The file is plain JSON meant to be committed next to the config it guards.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.errors import ConfigError

FORMAT = "mcpkit-check-baseline/1"


class BaselineError(ConfigError):
    """The baseline file exists but cannot be read as a baseline."""


def tool_hash(tool: dict[str, Any]) -> str:
    canonical = json.dumps(tool, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def apply_baseline(
    path: str | Path, tools: list[dict[str, Any]], report: CheckReport, *, update: bool
) -> None:
    """Compare ``tools`` with the baseline at ``path`` (record it when missing or when ``update``)."""
    file = Path(path)
    current = {str(t.get("name")): tool_hash(t) for t in tools}
    if not file.exists() or update:
        _write(file, report, current)
        report.baseline = {"file": str(file), "recorded": len(current)}
        return
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        known: dict[str, str] = dict(data["tools"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BaselineError(
            f"cannot read baseline {file}: {exc}; delete it or use --update-baseline"
        ) from exc
    added = sorted(set(current) - set(known))
    removed = sorted(set(known) - set(current))
    changed = sorted(n for n in set(current) & set(known) if current[n] != known[n])
    for name in added:
        report.add(
            CheckFinding(
                "tool-added",
                "warning",
                "security",
                "a tool that is not in the baseline appeared",
                "Review it, then run with --update-baseline to approve it.",
                tool=name,
            )
        )
    for name in removed:
        report.add(
            CheckFinding("tool-removed", "info", "security", "a tool of the baseline is gone", "", tool=name)
        )
    for name in changed:
        report.add(
            CheckFinding(
                "tool-changed",
                "error",
                "security",
                "the tool's definition changed since the baseline was recorded",
                "Read the new definition (mcpkit tools --json); run with --update-baseline only if you approve it.",
                tool=name,
            )
        )
    report.baseline = {"file": str(file), "added": added, "removed": removed, "changed": changed}


def _write(file: Path, report: CheckReport, current: dict[str, str]) -> None:
    data = {
        "format": FORMAT,
        "server": report.server_info.get("name"),
        "tools": dict(sorted(current.items())),
    }
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
