"""Print a report: a rich table grouped by severity, JSON, or SARIF 2.1.0 for code-scanning UIs."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from mcpkit import __version__
from mcpkit.check.model import SEVERITY_RANK, Report

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_table(report: Report, console: Console) -> None:
    info = report.server_info
    console.print(
        f"[bold]{info.get('name', '?')}[/] {info.get('version', '')}  protocol {report.protocol_version}  "
        f"initialize {1000 * (report.init_seconds or 0):.0f} ms  {len(report.tools)} tools"
        + (f"  probed {len(report.probed)}" if report.probed else "")
    )
    console.print(f"capabilities: {json.dumps(report.capabilities)}")
    if not report.findings:
        console.print("[green]no findings[/]")
        return
    for severity in sorted({f.severity for f in report.findings}, key=lambda s: -SEVERITY_RANK[s]):
        rows = [f for f in report.findings if f.severity == severity]
        table = Table(title=_title(len(rows), severity), title_style=_STYLE[severity])
        table.add_column("rule", style=_STYLE[severity], no_wrap=True)
        table.add_column("where")
        table.add_column("finding")
        table.add_column("fix")
        for f in rows:
            where = (f.tool or "") + f.pointer + (f" [{f.profile}]" if f.profile else "")
            table.add_row(f.rule, where or f.area, f.message, f.hint)
        console.print(table)
    console.print(
        f"{report.count('error')} errors, {report.count('warning')} warnings, {report.count('info')} notes"
    )


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0: one run, one rule per rule id, logical locations ``tool/pointer``."""
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for f in report.findings:
        rules.setdefault(
            f.rule,
            {
                "id": f.rule,
                "shortDescription": {"text": f.rule.replace("-", " ")},
                "help": {"text": f.hint or f.message},
                "properties": {"area": f.area},
            },
        )
        where = (f.tool or report.server_info.get("name") or "server") + f.pointer
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message + (f" Fix: {f.hint}" if f.hint else "")},
            "locations": [
                {
                    "logicalLocations": [
                        {"name": f.tool or f.area, "fullyQualifiedName": where, "kind": "function"}
                    ]
                }
            ],
        }
        if f.profile:
            result["properties"] = {"profile": f.profile}
        results.append(result)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mcpkit check",
                        "version": __version__,
                        "rules": list(rules.values()),
                    }
                },
                "automationDetails": {"id": f"mcpkit-check/{report.target}"},
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False)


def _title(count: int, severity: str) -> str:
    noun = {"error": "error", "warning": "warning", "info": "note"}[severity]
    return f"{count} {noun}{'' if count == 1 else 's'}"
