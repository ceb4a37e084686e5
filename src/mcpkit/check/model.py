"""What a check produces: findings with rule ids and hints, gathered in a report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from mcpkit.check.rules import CheckSeverity, info
from mcpkit.compat import DEFAULT_PROFILES

__all__ = ["SEVERITY_RANK", "CheckFinding", "CheckOptions", "CheckReport", "CheckSeverity"]

SEVERITY_RANK: dict[str, int] = {"error": 2, "warning": 1, "info": 0}


@dataclass(frozen=True)
class CheckFinding:
    """One thing the checker found. ``area`` is handshake, capabilities, tools, results or security.

    ``evidence`` is what the rule enforces: the spec text or the client-rules fact it cites
    (filled from the rule catalog when the report is built).
    """

    rule: str
    severity: CheckSeverity
    area: str
    message: str
    hint: str = ""
    tool: str | None = None
    pointer: str = ""
    profile: str | None = None
    evidence: str = ""
    era: str | None = None
    """The protocol revision the finding is about (2025-11-25, 2026-07-28); None for what is the
    same on every revision (tool definitions, secrets, rebinding)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CheckOptions:
    """What to check: client profiles, whether to call tools, per-call timeout, a baseline."""

    profiles: tuple[str, ...] = tuple(DEFAULT_PROFILES)
    """Profiles to lint against (``profiles_in_use()`` is what ``--profile all`` gives)."""
    probe: bool = False
    probe_all: bool = False
    call_timeout: float = 30.0
    connect_timeout: float = 30.0
    baseline: str | None = None
    """Path of a tool-definition baseline: recorded when missing, compared otherwise."""
    update_baseline: bool = False
    max_restarts: int = 3
    """How often probing may restart a server that hung or crashed."""
    client_name: str | None = None
    """``clientInfo.name`` to present (default mcpkit): a gateway adapts its tools to the client."""
    protocols: tuple[str, ...] | None = None
    """Revisions to check (``HANDSHAKE_ERA``, ``STATELESS_ERA``); None: both on HTTP, the
    handshake on stdio (see :func:`mcpkit.check.run.eras_for`)."""
    foreign_token: str | None = None
    """An access token the authorization server issued for another resource: it must be refused."""


HANDSHAKE_ERA = "2025-11-25"
"""The initialize handshake (every revision up to 2025-11-25)."""
STATELESS_ERA = "2026-07-28"
"""The stateless wire: server/discover, the envelope in every request's _meta."""


@dataclass
class CheckReport:
    """Everything one check run learned about one server."""

    target: str
    server_info: dict[str, Any] = field(default_factory=dict)
    protocol_version: str | None = None
    init_seconds: float | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    probed: list[str] = field(default_factory=list)
    findings: list[CheckFinding] = field(default_factory=list)
    error: str | None = None
    """Why the server could not be checked at all (it did not start or initialize)."""
    source: str | None = None
    """The config file the server came from (``--server``), for SARIF locations."""
    line: int | None = None
    restarts: int = 0
    baseline: dict[str, Any] = field(default_factory=dict)
    context: list[dict[str, Any]] = field(default_factory=list)
    """What the tool list costs each client: tools against its limit, estimated tokens."""
    eras: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per revision checked: whether it was served, its version, capabilities, messages validated."""
    auth: dict[str, Any] = field(default_factory=dict)
    """What the auth checks saw: whether auth is required, the metadata URL, its servers."""
    era: str | None = field(default=None, repr=False)
    """The revision being checked now: findings added meanwhile are filed under it."""

    def add(self, finding: CheckFinding) -> None:
        """Keep ``finding``, with the evidence of its rule filled in from the catalog and the
        era being checked."""
        if not finding.evidence:
            finding = replace(finding, evidence=info(finding.rule).evidence)
        if finding.era is None and self.era is not None:
            finding = replace(finding, era=self.era)
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
        out: dict[str, Any] = {
            "target": self.target,
            "error": self.error,
            "serverInfo": self.server_info,
            "protocolVersion": self.protocol_version,
            "initSeconds": self.init_seconds,
            "capabilities": self.capabilities,
            "tools": self.tools,
            "probed": self.probed,
            "restarts": self.restarts,
            "summary": {s: self.count(s) for s in ("error", "warning", "info")},
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.eras:
            out["eras"] = {
                era: {
                    **facts,
                    "summary": {
                        s: sum(1 for f in self.findings if f.era == era and f.severity == s)
                        for s in ("error", "warning", "info")
                    },
                }
                for era, facts in self.eras.items()
            }
        if self.auth:
            out["auth"] = self.auth
        if self.context:
            out["context"] = self.context
        if self.baseline:
            out["baseline"] = self.baseline
        return out
