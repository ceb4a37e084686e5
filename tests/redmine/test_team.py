"""The team mode's pieces without a network: where a key comes from, one client per key, the 401s.

The Redmine here is ``httpx2.MockTransport`` (see tests/redmine/support.py for why); the whole
deployment runs against the real Redmine behind a real nginx in tests/integration/redmine.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.config import RedmineConfig, RedmineConfigError
from mcpkit.redmine.keys import MAX_KEYS, KeyedClients, request_key
from mcpkit.redmine.team import key_check
from mcpkit.redmine.xml import Formatter
from mcpkit.server import HttpOptions
from mcpkit.server._http import guard

GOOD = "a" * 40


def redmine(request: httpx2.Request) -> httpx2.Response:
    if request.headers.get("x-redmine-api-key") == GOOD:
        return httpx2.Response(200, json={"user": {"id": 3, "login": "alice"}})
    return httpx2.Response(401)


def clients(api_key: str = "") -> KeyedClients:
    config = RedmineConfig(url="http://redmine.invalid", api_key=api_key)
    return KeyedClients(RedmineClient(config, transport=httpx2.MockTransport(redmine)), Formatter())


def test_the_key_comes_from_the_redmine_header_or_a_bearer_token() -> None:
    assert request_key({"x-redmine-api-key": " k1 "}) == "k1"
    assert request_key({"authorization": "Bearer k2"}) == "k2"
    assert request_key({"authorization": "bearer   k3 "}) == "k3"
    assert request_key({"x-redmine-api-key": "k1", "authorization": "Bearer k2"}) == "k1"
    assert request_key({"authorization": "Basic abc"}) is None
    assert request_key({}) is None


@given(
    st.dictionaries(st.sampled_from(["x-redmine-api-key", "authorization", "other"]), st.text(max_size=30))
)
def test_any_headers_give_a_stripped_key_or_none(headers: dict[str, str]) -> None:
    key = request_key(headers)
    assert key is None or (key == key.strip() and key)


def test_one_client_per_key_on_one_pool_bounded() -> None:
    keyed = clients("configured-key")
    assert keyed.for_key(None) is keyed.default and keyed.for_key("configured-key") is keyed.default
    first = keyed.for_key("k" * 20)
    assert keyed.for_key("k" * 20) is first and first.client.api_key == "k" * 20
    assert first.client._pool is keyed.base._pool  # one connection pool for every key
    for n in range(MAX_KEYS + 5):
        keyed.for_key(f"key-{n:04d}")
    assert len(keyed._by_key) == MAX_KEYS
    assert all("key-" not in digest for digest in keyed._by_key), "indexed by digest, not by the key"


async def _status(app: Any, headers: dict[str, str]) -> tuple[int, bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    scope = {"type": "http", "headers": [(k.encode(), v.encode()) for k, v in headers.items()]}
    await app(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return int(sent[0]["status"]), body


def test_the_http_guard_answers_401_without_a_usable_key() -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def run() -> None:
        app = guard(inner, HttpOptions(authorize=key_check(clients())))
        assert (await _status(app, {}))[0] == 401
        status, body = await _status(app, {"authorization": "Bearer " + "b" * 40})
        assert status == 401 and b"b" * 40 not in body
        assert await _status(app, {"x-redmine-api-key": GOOD}) == (200, b"ok")
        assert await _status(guard(inner, HttpOptions(authorize=key_check(clients(GOOD)))), {}) == (
            200,
            b"ok",
        )

    anyio.run(run)


def test_the_team_mode_may_start_without_a_key_but_a_given_key_is_still_checked() -> None:
    env = {"REDMINE_URL": "http://redmine.invalid"}
    assert RedmineConfig.from_environ(env, require_key=False).api_key == ""
    with pytest.raises(RedmineConfigError):
        RedmineConfig.from_environ(env)
    with pytest.raises(RedmineConfigError, match="8 to 128"):
        RedmineConfig.from_environ({**env, "REDMINE_API_KEY": "bad key!"}, require_key=False)


def test_with_the_servers_own_token_a_bearer_is_that_token_and_the_key_comes_in_its_header() -> None:
    """``mcpkit redmine mcp --token-env``: every request carries the server's token as its bearer,
    so the bearer is never taken for a Redmine key (it used to be, and every request was refused)."""
    from mcpkit.redmine.server import build
    from mcpkit.server import ServerOptions

    token = "t" * 32

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def served(api_key: str) -> Any:
        config = RedmineConfig(url="http://redmine.invalid", api_key=api_key)
        options = ServerOptions().with_http(bearer_token=token, stateless=True)
        server = build(config, options=options, transport=httpx2.MockTransport(redmine), team=True)
        return guard(inner, server.options.http)

    async def run() -> None:
        bearer = {"authorization": f"Bearer {token}"}
        assert (await _status(served(GOOD), {"x-redmine-api-key": GOOD}))[0] == 401  # no token
        assert await _status(served(""), {**bearer, "x-redmine-api-key": GOOD}) == (200, b"ok")
        assert await _status(served(GOOD), bearer) == (200, b"ok")  # acts as the configured key's user
        status, body = await _status(served(""), bearer)  # no key at all: refused, the token not echoed
        assert status == 401 and token.encode() not in body

    anyio.run(run)
