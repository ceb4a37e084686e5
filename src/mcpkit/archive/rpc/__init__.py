"""The archive's WebSocket face: JSON-RPC 2.0 server and client with upstream's streaming extension.

Names load on first use (see :mod:`mcpkit._lazy`): the CLI reads a constant of one module
without loading the server, the client and websockets for ``--help``.
"""

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_root

if TYPE_CHECKING:
    from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol, open_stream
    from mcpkit.archive.rpc.client import DEFAULT_URL, RpcClient
    from mcpkit.archive.rpc.security import AccessPolicy, SecurityConfigError, is_loopback
    from mcpkit.archive.rpc.server import RpcServer, RpcServerOptions, run_server

__all__ = [
    "DEFAULT_URL",
    "AccessPolicy",
    "ArchiveAPIProtocol",
    "RpcClient",
    "RpcServer",
    "RpcServerOptions",
    "SecurityConfigError",
    "is_loopback",
    "open_stream",
    "run_server",
]

__getattr__, __dir__ = lazy_root(
    __name__,
    {
        "ArchiveAPIProtocol": ".api_protocol",
        "open_stream": ".api_protocol",
        "DEFAULT_URL": ".client",
        "RpcClient": ".client",
        "AccessPolicy": ".security",
        "SecurityConfigError": ".security",
        "is_loopback": ".security",
        "RpcServer": ".server",
        "RpcServerOptions": ".server",
        "run_server": ".server",
    },
)
