"""Sealed state: what a gateway hands its client to bring back, readable by any replica.

A task handle or a 2026 ``requestState`` that only names an entry in one process's memory pins
the client to that process. Sealed, the state travels in the handle itself: any replica that
holds the key opens it, so no sticky routing is needed for it.

The seal is an HMAC-SHA256 tag (the standard library's :mod:`hmac`; the ``cryptography``
package is not a dependency of mcpkit) over a compact JSON body of the state, the gateway's
name and an expiry::

    s1.<base64url(body)>.<base64url(tag)>

It authenticates and does not encrypt: the client can read what is sealed, so only what the
client already sees goes in (a server name, the server's own task id, the caller's identity
digest), never a secret. Keys come from the ``gateway.state_keys`` list of the configuration
(``env:NAME`` or ``file:PATH``): the first key seals, every listed key opens, so a key is
rotated by adding the new one first and keeping the old one second until what it sealed has
expired. A tampered, expired or foreign state (sealed by a key this gateway does not hold, or
by a gateway of another name) is refused with -32602 in one line.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpkit.gateway.errors import GatewayConfigError
from mcpkit.jsonrpc import JsonRpcError

PREFIX = "s1."
"""Marks a sealed state and its format's version."""
MIN_KEY_BYTES = 32
"""The shortest key accepted (a 256-bit HMAC key; ``openssl rand -base64 32`` makes one)."""
SOURCES = ("env:", "file:")
"""How ``gateway.state_keys`` names a key: an environment variable or a file holding it."""
_CONTEXT = b"mcpkit sealed state v1\x00"
"""Bound into every tag, so a tag made with the same key for another purpose never fits."""


def check_key_source(source: Any, where: str) -> str:
    """``source`` as a valid ``state_keys`` entry, or a one-line :class:`GatewayConfigError`."""
    if not isinstance(source, str) or not source.startswith(SOURCES) or not source.split(":", 1)[1].strip():
        raise GatewayConfigError(f"{where}: each key must be 'env:NAME' or 'file:PATH', not {source!r}")
    return source


def read_keys(sources: Sequence[str], environ: Mapping[str, str]) -> tuple[bytes, ...]:
    """The keys ``sources`` name, in order (the first one seals). A missing or short key is a
    one-line :class:`GatewayConfigError` naming its source, never its value."""
    keys = []
    for source in sources:
        kind, _, name = source.partition(":")
        if kind == "env":
            if name not in environ:
                raise GatewayConfigError(f"state key {source}: the variable {name} is not set")
            key = environ[name].strip().encode("utf-8")
        else:
            try:
                key = Path(name).expanduser().read_bytes().strip()
            except OSError as exc:
                raise GatewayConfigError(f"state key {source}: cannot read it ({exc.strerror})") from None
        if len(key) < MIN_KEY_BYTES:
            raise GatewayConfigError(
                f"state key {source}: {len(key)} bytes, at least {MIN_KEY_BYTES} bytes needed"
                " (openssl rand -base64 32 makes one)"
            )
        keys.append(key)
    return tuple(keys)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text.isascii():
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Sealer:
    """Seals and opens state with ``keys`` (the first seals, all open) for the gateway ``name``."""

    keys: tuple[bytes, ...]
    name: str
    now: Callable[[], float] = field(default=time.time, compare=False)

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("a Sealer needs at least one key")

    def _tag(self, key: bytes, body: str) -> bytes:
        return hmac.new(key, _CONTEXT + body.encode("ascii"), hashlib.sha256).digest()

    def seal(self, data: Any, ttl: float) -> str:
        """``data`` (JSON values) sealed for ``ttl`` seconds from now."""
        expires = int(self.now() + ttl) + 1  # whole seconds, never shorter than asked
        payload = {"g": self.name, "e": expires, "d": data}
        body = _b64(json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode("ascii"))
        return f"{PREFIX}{body}.{_b64(self._tag(self.keys[0], body))}"

    def open(self, token: str, what: str) -> Any:
        """The data sealed in ``token``; a -32602 :class:`JsonRpcError` naming ``what`` (the
        parameter it came in) when it is not one of ours, was changed, or has expired."""
        refused = JsonRpcError.invalid_params(
            f"{what}: not sealed by this gateway (changed, or sealed with a key it does not hold)"
        )
        if not token.isascii() or not token.startswith(PREFIX) or token.count(".") != 2:
            raise refused
        body, _, tag_text = token[len(PREFIX) :].partition(".")
        try:
            tag = _unb64(tag_text)
        except (ValueError, binascii.Error):
            raise refused from None
        if _b64(tag) != tag_text:  # one spelling per tag: no second token for the same seal
            raise refused
        if not any(hmac.compare_digest(self._tag(key, body), tag) for key in self.keys):
            raise refused
        try:
            payload = json.loads(_unb64(body))
        except (ValueError, binascii.Error):
            raise refused from None
        if not isinstance(payload, dict) or not isinstance(payload.get("e"), int):
            raise refused
        if payload.get("g") != self.name:
            raise JsonRpcError.invalid_params(
                f"{what}: sealed by the gateway {payload.get('g')!r}, not by this one ({self.name!r})"
            )
        expires = payload["e"]
        if self.now() >= expires:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires))
            raise JsonRpcError.invalid_params(f"{what}: expired at {stamp}; start again")
        return payload.get("d")
