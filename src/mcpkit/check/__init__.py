"""``mcpkit check``: grade any MCP server (handshake, capabilities, tools, results).

:func:`check` connects to a target and returns a :class:`Report` of :class:`CheckFinding`
items with rule ids and fix hints; :mod:`mcpkit.check.render` prints it as a table, JSON or
SARIF. Nothing here is specific to mcpkit servers: it grades what goes over the wire.
"""

from mcpkit.check.model import CheckFinding, CheckOptions, Report, Severity
from mcpkit.check.run import check, check_session

__all__ = ["CheckFinding", "CheckOptions", "Report", "Severity", "check", "check_session"]
