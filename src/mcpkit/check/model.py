"""What a check produces: findings with rule ids and hints, gathered in a report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from mcpkit.compat import DEFAULT_PROFILES

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"error": 2, "warning": 1, "info": 0}


@dataclass(frozen=True)
class CheckFinding:
    """One thing the checker found. ``area`` is handshake, capabilities, tools or results."""

    rule: str
    severity: Severity
    area: str
    message: str
    hint: str = ""
    tool: str | None = None
    pointer: str = ""
    profile: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CheckOptions:
    """What to check: client profiles, whether to call tools, per-call timeout."""

    profiles: tuple[str, ...] = tuple(DEFAULT_PROFILES)
    probe: bool = False
    probe_all: bool = False
    call_timeout: float = 30.0
    connect_timeout: float = 30.0
    client_name: str | None = None
    """``clientInfo.name`` to present (default mcpkit): a gateway adapts its tools to the client."""


@dataclass
class Report:
    """Everything one check run learned about one server."""

    target: str
    server_info: dict[str, Any] = field(default_factory=dict)
    protocol_version: str | None = None
    init_seconds: float | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    probed: list[str] = field(default_factory=list)
    findings: list[CheckFinding] = field(default_factory=list)

    def add(self, finding: CheckFinding) -> None:
        self.findings.append(finding)

    def rules(self) -> set[str]:
        return {f.rule for f in self.findings}

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def fails(self, fail_on: str) -> bool:
        """Whether any finding is at least as severe as ``fail_on`` (error or warning)."""
        floor = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK[f.severity] >= floor for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "serverInfo": self.server_info,
            "protocolVersion": self.protocol_version,
            "initSeconds": self.init_seconds,
            "capabilities": self.capabilities,
            "tools": self.tools,
            "probed": self.probed,
            "summary": {s: self.count(s) for s in ("error", "warning", "info")},
            "findings": [f.to_dict() for f in self.findings],
        }
