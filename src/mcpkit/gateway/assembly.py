"""The SDK assembly: the gateway as the SDK's low-level server, with exactly what is served.

One job: register a handler for each request some server backs (tools always; prompts,
resources, completions only when a server serves them; subscriptions and logging when a
server serves them and the gateway has a client to send their notifications to: stdio), each
converted once from mcpkit's errors to the SDK's (:func:`mcpkit.server.relay.sdk_errors`) and
counted while it runs, so the end of stdin can wait for the answers still due.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

from mcpkit import __version__
from mcpkit.gateway.tasks import relay_tasks
from mcpkit.server.relay import LIST_METHODS, InFlight, SdkServer, sdk_errors

if TYPE_CHECKING:
    from mcpkit.gateway.core import Gateway

Ctx = ServerRequestContext[Any, Any]
Handler = Callable[[Ctx, Any], Awaitable[Any]]


def assemble(gateway: Gateway, in_flight: InFlight) -> SdkServer:
    """The SDK server with exactly the handlers some downstream backs."""
    # Tools always: a downstream that failed to start may come back, and listChanged tells
    # the client when its tools arrive. Prompts and resources only when some are served.
    router, relay = gateway.router, gateway.relay
    handlers: dict[str, Any] = {"on_list_tools": gateway.list_tools, "on_call_tool": gateway.call_tool}
    if "prompts" in router.offered:
        handlers["on_list_prompts"] = router.list_prompts
        handlers["on_get_prompt"] = router.get_prompt
    if "resources" in router.offered:
        handlers["on_list_resources"] = router.list_resources
        handlers["on_read_resource"] = router.read_resource
        handlers["on_list_resource_templates"] = router.list_resource_templates
    if "completions" in router.offered:
        handlers["on_completion"] = router.complete
    # Resource updates and log messages reach a client only where the gateway has one to send
    # them to (stdio); over stateless HTTP declaring them promised what never comes.
    notifies = relay.relay_client_requests
    if "subscribe" in router.offered and notifies:
        handlers["on_subscribe_resource"] = router.subscribe
        handlers["on_unsubscribe_resource"] = router.unsubscribe
    handlers = {key: in_flight.counted(sdk_errors(relay.met(h))) for key, h in handlers.items()}
    # Tools change (a downstream crash-loops, restarts, or changes its own list): listChanged on
    # both eras, delivered by notification (2025) and subscriptions/listen (2026). Every list
    # depends on the client's profile and on which servers are up, so none may be shared or kept.
    server = SdkServer(
        gateway.config.name,
        version=__version__,
        changing={"tools"},
        hints={method: (0, "private") for method in LIST_METHODS},
        **handlers,
    )
    # Not the constructor's on_roots_list_changed, which warns that roots leave the spec in
    # 2026-07-28: today's clients use them, and a server behind the gateway asks for them.
    # A parked call's requestState is sealed: bound to the tool, its arguments and the caller,
    # expiring (mcpkit.gateway.asking). Once, where the toolkit's server has not done it already.
    if not any(isinstance(layer, RequestStateBoundary) for layer in server.middleware):
        security = RequestStateSecurity.ephemeral(ttl=gateway.asking.answer_seconds)
        server.middleware.append(RequestStateBoundary(security, default_audience=gateway.config.name))
    relay_tasks(gateway, server, in_flight.counted)  # tasks pass through: mcpkit.gateway.tasks
    server.add_notification_handler(
        "notifications/roots/list_changed", mcp_types.NotificationParams, relay.roots_changed
    )
    # Likewise not on_set_logging_level; the SDK declares logging.
    if "logging" in router.offered and notifies:
        server.add_request_handler(
            "logging/setLevel",
            mcp_types.SetLevelRequestParams,
            in_flight.counted(sdk_errors(relay.set_level)),
        )
    return server
