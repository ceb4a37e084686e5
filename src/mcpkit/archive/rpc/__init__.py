"""The archive's WebSocket face: JSON-RPC 2.0 server and client with upstream's streaming extension."""

from mcpkit.archive.rpc.api_port import ArchivePort, open_stream
from mcpkit.archive.rpc.client import (
    ArchiveConnectionError,
    ConnectionLostError,
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
    "ArchiveConnectionError",
    "ArchivePort",
    "ConnectionLostError",
    "HandshakeRefusedError",
    "RpcClient",
    "RpcServer",
    "SecurityConfigError",
    "ServerDownError",
    "ServerOptions",
    "ServerTimeoutError",
    "default_url",
    "is_loopback",
    "open_stream",
    "run_server",
]
