"""The archive's WebSocket face: JSON-RPC 2.0 server and client with upstream's streaming extension."""

from mcpkit.archive.rpc.api_port import ArchivePort, open_stream
from mcpkit.archive.rpc.client import RpcClient, default_url
from mcpkit.archive.rpc.security import AccessPolicy, SecurityConfigError, is_loopback
from mcpkit.archive.rpc.server import RpcServer, ServerOptions, run_server

__all__ = [
    "AccessPolicy",
    "ArchivePort",
    "RpcClient",
    "RpcServer",
    "SecurityConfigError",
    "ServerOptions",
    "default_url",
    "is_loopback",
    "open_stream",
    "run_server",
]
