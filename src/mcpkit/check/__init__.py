"""``mcpkit check``: grade any MCP server (handshake, capabilities, tools, results, security).

:func:`check` connects to a target and returns a :class:`CheckReport` of :class:`CheckFinding`
items with rule ids, fix hints and the evidence each rule enforces; :mod:`mcpkit.check.render`
prints it as a table, JSON or SARIF. Nothing here is specific to mcpkit servers: it grades what
goes over the wire.
"""

from mcpkit.check.model import CheckFinding, CheckOptions, CheckReport, CheckSeverity
from mcpkit.check.rules import RuleInfo
from mcpkit.check.run import check, check_session

__all__ = [
    "CheckFinding",
    "CheckOptions",
    "CheckReport",
    "CheckSeverity",
    "RuleInfo",
    "check",
    "check_session",
]
