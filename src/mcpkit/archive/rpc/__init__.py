"""The archive's WebSocket face: JSON-RPC 2.0 server and client with upstream's streaming extension."""

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
