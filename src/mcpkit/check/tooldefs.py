"""Tool-definition checks: unique names, valid JSON Schemas, and compat lint per client profile.

The client budgets (tool count, name length with the server-name prefix) come from the compat
profiles, linted with the server's name so prefixed-name limits are counted.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from mcpkit.check.model import CheckFinding, CheckReport
from mcpkit.check.rules import compat_rules
from mcpkit.compat import lint


def check_tool_definitions(
    tools: list[dict[str, Any]], report: CheckReport, profiles: tuple[str, ...]
) -> None:
    report.tools = [str(t.get("name")) for t in tools]
    for name, count in Counter(report.tools).items():
        if count > 1:
            report.add(
                CheckFinding(
                    "tool-name-duplicate",
                    "error",
                    "tools",
                    f"{count} tools are named {name!r}",
                    "Tool names must be unique; clients keep one of them or reject the list.",
                    tool=name,
                )
            )
    for tool in tools:
        for key in ("inputSchema", "outputSchema"):
            if key in tool:
                _schema_valid(tool, key, report)
    server = report.server_info.get("name")
    for finding in lint(tools, list(profiles), server_name=server if isinstance(server, str) else None):
        meta = compat_rules().get(finding.rule)
        severity = finding.severity
        message = f"{finding.message} ({finding.client})"
        if meta is not None and meta.unconfirmed and severity == "error":
            # Evidence not confirmed (client-rules fact, section D): never an error by default.
            severity = "warning"
            message += "; unconfirmed evidence, so a warning"
        report.add(
            CheckFinding(
                finding.rule,
                severity,
                "tools",
                message,
                finding.hint,
                tool=finding.tool,
                pointer=finding.pointer,
                profile=finding.profile,
            )
        )


def _schema_valid(tool: dict[str, Any], key: str, report: CheckReport) -> None:
    schema = tool[key]
    name = str(tool.get("name"))
    if not isinstance(schema, dict | bool):
        report.add(
            CheckFinding(
                "schema-invalid",
                "error",
                "tools",
                f"{key} is {type(schema).__name__}, not a JSON Schema object",
                "Send a JSON Schema object.",
                tool=name,
                pointer=f"/{key}",
            )
        )
        return
    if isinstance(schema, bool):
        return  # true/false are valid (if unusual) schemas
    try:
        cls = validator_for(
            schema, default=validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema"})
        )
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/" + "/".join(str(p) for p in exc.absolute_path) if exc.absolute_path else ""
        report.add(
            CheckFinding(
                "schema-invalid",
                "error",
                "tools",
                f"{key} is not valid JSON Schema: {exc.message}",
                "Fix the schema (it is checked against the JSON Schema 2020-12 metaschema unless $schema says otherwise).",
                tool=name,
                pointer=f"/{key}{where}",
            )
        )
