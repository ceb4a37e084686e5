"""Every way a person installs mcpkit's servers, written from one description of each server.

A registry entry, a Claude Desktop extension, an Agent Plugin, an install link and a README line
used to be five hand-written copies of the same command and variables, free to disagree. Here
each server is declared once (:data:`SERVERS` in :mod:`mcpkit.channels.servers`) and
:mod:`mcpkit.channels.render` derives every channel from it; ``mcpkit package`` writes them.
"""

from __future__ import annotations

from mcpkit.channels.render import channel_files, install_lines
from mcpkit.channels.servers import DISTRIBUTION, SERVERS, ServerEntry, Setting

__all__ = ["DISTRIBUTION", "SERVERS", "ServerEntry", "Setting", "channel_files", "install_lines"]
