"""What a server that relays other servers needs beyond an app author's API: the gateway's import path.

:mod:`mcpkit.server` lists what an app author uses (``build_server``, ``serve``, options, specs,
``ask``, ``start_task``). A relay in front of other servers (``mcpkit gateway``) builds its
serving side on the SDK's low-level server itself and needs more, all of it here:

* the SDK's internals it relies on (``connection_of``, ``request_outbound_of``, the HTTP app's
  Accept rule and body limit, the handshake versions), each checked by
  ``tests/test_sdk_assumptions.py``;
* ``SdkServer``, ``LIST_METHODS`` and ``sdk_errors`` (mcpkit's errors converted to the SDK's once);
* plain calls beside the SDK's sessions (``plain_request``, ``answer_line`` and the line helpers);
* the task plumbing a relay of task calls needs (``declare_tasks``, ``task_owner`` ...);
* ``claimed_stdin``, the server's own non-blocking stdin, and ``InFlight`` and ``drain``, the
  counting of requests in flight and the wait for them at the end of stdin (the toolkit's
  servers use the same).

Names load on first use, as in :mod:`mcpkit.server`: the gateway starts its servers before the
SDK loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit._sdk import SDK_DEFAULT_VERSION as SDK_DEFAULT_VERSION
    from mcpkit._sdk import SDK_HANDSHAKE_VERSIONS as SDK_HANDSHAKE_VERSIONS
    from mcpkit._sdk import SDK_MAX_REQUEST_BODY as SDK_MAX_REQUEST_BODY
    from mcpkit._sdk import accepts_json_and_events as accepts_json_and_events
    from mcpkit._sdk import connection_of as connection_of
    from mcpkit._sdk import request_outbound_of as request_outbound_of
    from mcpkit.server._build import SdkServer as SdkServer
    from mcpkit.server._errors import sdk_errors as sdk_errors
    from mcpkit.server._inflight import InFlight as InFlight
    from mcpkit.server._inflight import drain as drain
    from mcpkit.server._options import LIST_METHODS as LIST_METHODS
    from mcpkit.server._plain_calls import answer_line as answer_line
    from mcpkit.server._plain_calls import is_request_id as is_request_id
    from mcpkit.server._plain_calls import json_object as json_object
    from mcpkit.server._plain_calls import plain_request as plain_request
    from mcpkit.server._plain_calls import response as response
    from mcpkit.server._signals import stop_signal_received as stop_signal_received
    from mcpkit.server._stdin import claimed_stdin as claimed_stdin
    from mcpkit.server._tasks import TaskUpdateParams as TaskUpdateParams
    from mcpkit.server._tasks import check_task_request as check_task_request
    from mcpkit.server._tasks import declare_tasks as declare_tasks
    from mcpkit.server._tasks import inlined_result as inlined_result
    from mcpkit.server._tasks import modern_task as modern_task
    from mcpkit.server._tasks import only_on_2025 as only_on_2025
    from mcpkit.server._tasks import refuse_untasked as refuse_untasked
    from mcpkit.server._tasks import task_answer as task_answer
    from mcpkit.server._tasks import task_owner as task_owner
    from mcpkit.server._tasks import task_requested as task_requested

__getattr__, __dir__, __all__ = lazy_exports(__name__)
