"""The archive's WebSocket face: JSON-RPC 2.0 server and client with upstream's streaming extension.

Names load on first use (see :mod:`mcpkit._lazy`): the CLI reads a constant of one module
without loading the server, the client and websockets for ``--help``. The imports below are
the one list of them.
"""

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol as ArchiveAPIProtocol
    from mcpkit.archive.rpc.api_protocol import open_stream as open_stream
    from mcpkit.archive.rpc.client import DEFAULT_URL as DEFAULT_URL
    from mcpkit.archive.rpc.client import RpcClient as RpcClient
    from mcpkit.archive.rpc.security import AccessPolicy as AccessPolicy
    from mcpkit.archive.rpc.security import SecurityConfigError as SecurityConfigError
    from mcpkit.archive.rpc.security import is_loopback as is_loopback
    from mcpkit.archive.rpc.server import RpcServer as RpcServer
    from mcpkit.archive.rpc.server import RpcServerOptions as RpcServerOptions
    from mcpkit.archive.rpc.server import run_server as run_server

__getattr__, __dir__, __all__ = lazy_exports(__name__)
