"""Print a report: a rich table grouped by severity, JSON, or SARIF 2.1.0 for code-scanning UIs."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mcpkit import __version__
from mcpkit.check.model import SEVERITY_RANK, CheckReport
from mcpkit.check.rules import info

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_table(report: CheckReport, console: Console) -> None:
    if report.error:
        console.print(f"[bold red]cannot check {report.target}[/]: {report.error}")
        return
    server_info = report.server_info
    console.print(
        f"[bold]{server_info.get('name', '?')}[/] {server_info.get('version', '')}  protocol {report.protocol_version}  "
        f"initialize {1000 * (report.init_seconds or 0):.0f} ms  {len(report.tools)} tools"
        + (f"  probed {len(report.probed)}" if report.probed else "")
        + (f"  restarted {report.restarts}x" if report.restarts else "")
    )
    console.print(f"capabilities: {json.dumps(report.capabilities)}")
    for era, facts in report.eras.items():
        if facts.get("served"):
            console.print(
                f"{era}: served, {facts.get('messagesValidated', 0)} messages validated against its schema"
            )
        else:
            console.print(f"{era}: not served ({facts.get('error', 'no answer')})")
    if report.auth:
        console.print(f"auth: required; metadata {report.auth.get('metadata', '-')}")
    _context_table(report, console)
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
            place = (f.tool or "") + f.pointer + (f" [{f.profile}]" if f.profile else "")
            where = (f"{f.era} " if f.era else "") + (place or f.area)
            table.add_row(f.rule, where, f.message, f.hint)
        console.print(table)
    console.print(
        f"{report.count('error')} errors, {report.count('warning')} warnings, {report.count('info')} notes"
    )


def _context_table(report: CheckReport, console: Console) -> None:
    """What the tool list costs each client: tools against its limit, estimated tokens."""
    if not report.context:
        return
    table = Table(title="context cost per client (tokens estimated)")
    for column in ("client", "profile", "tools", "limit", "tokens", "largest tool"):
        table.add_column(
            column, justify="right" if column in ("tools", "limit", "tokens", "largest tool") else "left"
        )
    for row in report.context:
        over = row["limit"] is not None and row["tools"] > row["limit"]
        limit = "-" if row["limit"] is None else str(row["limit"])
        table.add_row(
            row["client"],
            row["profile"] or "-",
            f"[bold red]{row['tools']}[/]" if over else str(row["tools"]),
            limit,
            f"{row['tokens']:,}",
            f"{row['largest']:,}",
        )
    console.print(table)


def render_json(report: CheckReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)


def render_sarif(report: CheckReport) -> str:
    """SARIF 2.1.0 for code-scanning UIs (GitHub accepts it as is).

    Each result has a physical location (the config file and line of the server with
    ``--server``, else a stable synthetic artifact named after the server), a logical location
    (server/tool/pointer), a ``partialFingerprints`` entry that stays the same across runs,
    and a rule with full metadata from the rule catalog. Nothing from the command line or the
    environment goes in.
    """
    server = str(report.server_info.get("name") or report.target or "server")
    artifact = _artifact(report, server)
    ids = sorted({f.rule for f in report.findings})
    rules = [_rule(rule_id) for rule_id in ids]
    results = []
    for f in report.findings:
        logical = f"{server}/{f.tool}{f.pointer}" if f.tool else f"{server}{f.pointer or '/' + f.area}"
        # The era joins the fingerprint only when there is one, so findings without one keep theirs.
        fingerprint = "|".join(
            [server, f.rule, f.tool or "", f.pointer, f.profile or "", *([f.era] if f.era else [])]
        )
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": ids.index(f.rule),
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message + (f" Fix: {f.hint}" if f.hint else "")},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": artifact},
                        "region": {"startLine": report.line or 1},
                    },
                    "logicalLocations": [
                        {
                            "name": f.tool or f.area,
                            "fullyQualifiedName": logical,
                            "kind": "function" if f.tool else "module",
                        }
                    ],
                }
            ],
            "partialFingerprints": {
                "mcpkitFinding/v1": hashlib.sha256(fingerprint.encode("utf-8")).hexdigest()
            },
        }
        properties = {key: value for key, value in (("profile", f.profile), ("era", f.era)) if value}
        if properties:
            result["properties"] = properties
        results.append(result)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mcpkit-check",
                        "version": __version__,
                        "informationUri": "https://modelcontextprotocol.io/specification/2025-11-25",
                        "rules": rules,
                    }
                },
                "automationDetails": {"id": f"mcpkit-check/{_slug(server)}/"},
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False)


def _rule(rule_id: str) -> dict[str, Any]:
    meta = info(rule_id)
    full = meta.evidence or meta.short
    if meta.unconfirmed:
        full += " (Evidence unconfirmed: reported as a warning.)"
    return {
        "id": rule_id,
        "name": "".join(part.capitalize() for part in rule_id.split("-")),
        "shortDescription": {"text": meta.short},
        "fullDescription": {"text": full},
        "helpUri": meta.help_uri,
        "help": {"text": f"{full} More: {meta.help_uri}"},
        "defaultConfiguration": {"level": _SARIF_LEVEL[meta.level]},
    }


def _artifact(report: CheckReport, server: str) -> str:
    """The config file (relative to the working directory when inside it), else a synthetic name."""
    if report.source:
        path = Path(report.source).resolve()
        try:
            return path.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return path.as_uri()
    return f"mcp-servers/{_slug(server)}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "server"


def _title(count: int, severity: str) -> str:
    noun = {"error": "error", "warning": "warning", "info": "note"}[severity]
    return f"{count} {noun}{'' if count == 1 else 's'}"
