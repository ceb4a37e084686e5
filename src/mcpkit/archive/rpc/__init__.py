"""The archive's WebSocket face: JSON-RPC 2.0 server and client with upstream's streaming extension."""

from mcpkit.archive.rpc.api_port import ArchivePort, RpcError, error_fields, open_stream
from mcpkit.archive.rpc.client import (
    ConnectionLostError,
    ConnectionProblem,
    HandshakeRefusedError,
    RpcClient,
    ServerDownError,
    ServerTimeoutError,
    default_url,
)
from mcpkit.archive.rpc.security import AccessPolicy, SecurityConfigError, is_loopback
from mcpkit.archive.rpc.server import RpcServer, ServerOptions, run_server

__all__ = [
    "AccessPolicy",
    "ArchivePort",
    "ConnectionLostError",
    "ConnectionProblem",
    "HandshakeRefusedError",
    "RpcClient",
    "RpcError",
    "RpcServer",
    "SecurityConfigError",
    "ServerDownError",
    "ServerOptions",
    "ServerTimeoutError",
    "default_url",
    "error_fields",
    "is_loopback",
    "open_stream",
    "run_server",
]
