"""Checks of what is new in 2026-07-28: discover, caching hints, subscriptions, the envelope.

- ``server/discover`` must answer and list in ``supportedVersions`` the revision asked for; an
  endpoint that also answers the ``initialize`` handshake had better list that revision too, or a
  client that reads discover first never learns it may fall back (a gateway listed only
  2026-07-28 while it served 2025-11-25 on the same URL). That is a note, not a warning: the
  schema says a client picks from the list "for use in subsequent requests", which a reader may
  take to mean stateless requests only, and the SDK's own servers list 2026-07-28 alone.
- Every list result carries ``ttlMs`` and ``cacheScope`` (the schema makes them required, so the
  list checks catch a missing one). Here: whether they make sense. A list the server says never
  changes (no ``listChanged``) with ``ttlMs: 0`` makes clients fetch it again every time they
  need it (a note); a TTL longer than a day outlives any restart or upgrade (a warning).
- A server that declares ``listChanged`` must deliver those changes on ``subscriptions/listen``,
  the one place 2026 clients hear them: the stream's first message is
  ``notifications/subscriptions/acknowledged`` naming the notifications it agreed to send.
- A request without the envelope (``_meta`` with the protocol version and client capabilities)
  is refused: a server that guesses the version of an envelope-less request answers a 2025
  client as if it spoke 2026.

- One endpoint, two eras, one server: a list declared on one era and not the other, or whose
  changes reach 2025 clients (``listChanged``) but not 2026 ones, leaves one kind of client
  behind (a gateway declared ``tools.listChanged`` on the handshake only, so 2026 clients never
  heard that a crash-looping server's tools were withdrawn).

``ping`` and ``logging/setLevel`` are not asked for: the revision removed them.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpkit.check.model import CheckFinding, CheckReport, CheckSeverity
from mcpkit.check.stateless import StatelessSession, StatelessWire
from mcpkit.client import CallError, JsonRpcError

DAY_MS = 24 * 3600 * 1000
LISTS = {"tools": "tools/list", "resources": "resources/list", "prompts": "prompts/list"}
LISTEN_FILTER = {
    "tools": "toolsListChanged",
    "resources": "resourcesListChanged",
    "prompts": "promptsListChanged",
}
ACK = "notifications/subscriptions/acknowledged"


async def check_discover(wire: StatelessWire, report: CheckReport, *, handshake: str | None) -> bool:
    """Ask ``server/discover``; False when the server does not serve the stateless revision."""
    try:
        result = await wire.discover()
    except CallError as exc:
        report.eras[wire.protocol_version]["served"] = False
        report.eras[wire.protocol_version]["error"] = str(exc)
        return False
    facts = report.eras[wire.protocol_version]
    facts["served"] = True
    facts["capabilities"] = wire.capabilities
    versions = result.get("supportedVersions")
    versions = [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []
    facts["supportedVersions"] = versions
    meta = result.get("_meta")
    info = meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
    if isinstance(info, dict):
        facts["serverInfo"] = info
    if wire.protocol_version not in versions:
        _add(
            report,
            "discover-versions",
            "error",
            f"server/discover answered {wire.protocol_version} requests but its supportedVersions "
            f"{versions} does not list {wire.protocol_version}",
            "List every revision the endpoint serves in supportedVersions.",
        )
    if handshake is not None and not any(v in versions for v in HANDSHAKE_PROTOCOL_VERSIONS):
        _add(
            report,
            "discover-omits-handshake",
            "info",
            f"the same endpoint answers initialize with {handshake}, but supportedVersions {versions} "
            "lists no handshake revision",
            "List the handshake revisions you serve too, so a client that reads discover first may fall back.",
        )
    _hints(report, "server/discover", result, list_changed=None)
    return True


async def check_caching(wire: StatelessWire, report: CheckReport, timeout: float) -> None:
    """Whether the caching hints of each declared list make sense for what the server declares."""
    caps = wire.capabilities
    for name, method in LISTS.items():
        cap = caps.get(name)
        if not isinstance(cap, dict):
            continue
        try:
            result = await wire.request(method, None, timeout=timeout)
        except CallError:
            continue  # the capability checks report a declared list that fails
        _hints(report, method, result, list_changed=bool(cap.get("listChanged")))


def _hints(report: CheckReport, method: str, result: dict[str, Any], *, list_changed: bool | None) -> None:
    ttl, scope = result.get("ttlMs"), result.get("cacheScope")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or scope not in ("public", "private"):
        return  # missing or malformed: the schema check of the result reports it
    report.eras.setdefault(report.era or "", {}).setdefault("caching", {})[method] = {
        "ttlMs": ttl,
        "cacheScope": scope,
    }
    if ttl > DAY_MS:
        _add(
            report,
            "cache-ttl-long",
            "warning",
            f"{method} says ttlMs {ttl} ({ttl / DAY_MS:.1f} days): clients may keep it across restarts and upgrades",
            "Keep TTLs to minutes or hours; announce changes with listChanged and subscriptions/listen.",
        )
    if ttl == 0 and list_changed is False:
        _add(
            report,
            "cache-ttl-zero",
            "info",
            f"{method} says ttlMs 0 although the list is declared not to change (no listChanged): "
            "clients fetch it again every time",
            "Give a list that does not change a TTL (and cacheScope public when it is the same for every user).",
        )


async def check_listen(wire: StatelessSession, report: CheckReport, timeout: float) -> None:
    """When any list declares ``listChanged``, ``subscriptions/listen`` must acknowledge it."""
    caps = wire.capabilities
    wanted = {
        key: True
        for name, key in LISTEN_FILTER.items()
        if isinstance(caps.get(name), dict) and caps[name].get("listChanged") is True
    }
    if not wanted:
        return  # nothing declared to change: a server need not serve listen at all
    first: dict[str, Any] | None = None
    try:
        with anyio.fail_after(timeout):
            async with wire.stream("subscriptions/listen", {"notifications": wanted}) as messages:
                async for message in messages:
                    first = message
                    break
    except TimeoutError:
        problem = f"no message within {timeout:g} s"
    except JsonRpcError as exc:
        problem = f"JSON-RPC error {exc.code}: {exc.message}"
    except CallError as exc:
        problem = str(exc)
    else:
        problem = "" if first is not None else "the stream ended without a message"
    if not problem and first is not None and first.get("method") != ACK:
        problem = (
            f"the first message was {first.get('method') or first.get('error') or 'a result'}, not {ACK}"
        )
    if problem:
        _add(
            report,
            "listen-fails",
            "error",
            f"listChanged is declared ({', '.join(wanted)}) but subscriptions/listen failed: {problem}",
            "Serve subscriptions/listen: acknowledge with notifications/subscriptions/acknowledged, then "
            "send the list changes asked for (or stop declaring listChanged).",
        )
        return
    assert first is not None
    agreed = first.get("params", {}).get("notifications", {})
    missing = [k for k in wanted if not (isinstance(agreed, dict) and agreed.get(k) is True)]
    if missing:
        _add(
            report,
            "listen-not-honoured",
            "warning",
            f"subscriptions/listen acknowledged without {', '.join(missing)} although listChanged is declared",
            "Honour every list-change notification type your capabilities declare.",
        )


def check_agreement(handshake: dict[str, Any], stateless: dict[str, Any], report: CheckReport) -> None:
    """The lists and list-change promises of the two eras of one endpoint agree."""
    for name in LISTS:
        old, new = handshake.get(name), stateless.get(name)
        if (old is None) != (new is None):
            where = "2025-11-25" if old is not None else "2026-07-28"
            _add(
                report,
                "eras-disagree",
                "warning",
                f"{name} is declared on {where} only",
                "Serve the same lists on both eras of one endpoint.",
            )
        elif (
            isinstance(old, dict)
            and isinstance(new, dict)
            and old.get("listChanged") is True
            and new.get("listChanged") is not True
        ):
            _add(
                report,
                "eras-disagree",
                "warning",
                f"{name}.listChanged is declared on 2025-11-25 but not on 2026-07-28: "
                "2026 clients never hear that the list changed",
                "Declare listChanged on 2026-07-28 too and deliver the changes on subscriptions/listen.",
            )


async def check_envelope(wire: StatelessSession, report: CheckReport, timeout: float) -> None:
    """A request without ``_meta`` (no protocol version, no client capabilities) must be refused."""
    body, headers = wire.envelope("tools/list", None)
    del body["params"]
    try:
        await wire.post(body, headers, timeout=timeout)
    except JsonRpcError:
        return  # refused, as the revision asks
    except CallError:
        return  # an HTTP 400 without a JSON-RPC body refuses it too
    _add(
        report,
        "envelope-not-required",
        "warning",
        "tools/list without _meta (no protocol version, no client capabilities) was answered",
        "Refuse a request whose _meta lacks io.modelcontextprotocol/protocolVersion or clientCapabilities "
        "(-32602): the SDKs do this for you.",
    )


def _add(report: CheckReport, rule: str, severity: CheckSeverity, message: str, hint: str) -> None:
    report.add(CheckFinding(rule, severity, "protocol", message, hint))
