"""An HTTP face as an OAuth 2.1 protected resource, against a real authorization server.

The authorization server is the npm package oidc-provider (tests/fixtures/oauth/), started here
with a signing key these tests make, so they can also sign tokens it must refuse (expired,
another key). Tokens come from its token endpoint (client credentials, RFC 8707 resource
indicators): a JWT whose audience is the resource asked for, or an opaque one checked by
introspection. Skipped without node and oidc-provider on a developer machine; a failure in CI.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from mcpkit.client import connect
from mcpkit.errors import HttpError
from mcpkit.server import OAuthOptions, ServerOptions, build_server
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p
from tests.support.env import REPO, THIRD_PARTY, require

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

LAUNCHER = REPO / "tests" / "fixtures" / "oauth" / "authorization_server.mjs"
NODE_DIR = THIRD_PARTY / "node"
CLIENT_ID, CLIENT_SECRET = "mcpkit-tests", "not-a-real-secret"


@dataclass
class AuthServer:
    issuer: str
    key: Any
    """The private key the server signs with (kid ``k1``)."""

    def token(self, resource: str, scope: str = "mcp:tools") -> str:
        answer = httpx2.post(
            f"{self.issuer}/token",
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(CLIENT_ID, CLIENT_SECRET),
        )
        assert answer.status_code == 200, answer.text
        return str(answer.json()["access_token"])

    def signed(self, claims: dict[str, Any], key: Any = None, kid: str = "k1") -> str:
        """A JWT access token signed here, with the server's key unless another is given."""
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": kid, "typ": "at+jwt"})


def _rsa_key() -> Any:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    node = shutil.which("node")
    require(node is not None, "node is not installed")
    require(
        (NODE_DIR / "node_modules" / "oidc-provider").is_dir(),
        "oidc-provider is not installed (scripts/third-party.sh)",
    )
    key = _rsa_key()
    jwk = {**json.loads(RSAAlgorithm.to_jwk(key)), "kid": "k1", "alg": "RS256", "use": "sig"}
    process = subprocess.Popen(
        [str(node), str(LAUNCHER), str(NODE_DIR)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(
        json.dumps({"jwks": {"keys": [jwk]}, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}) + "\n"
    )
    process.stdin.flush()
    issuer = process.stdout.readline().strip()
    try:
        assert issuer.startswith("http://127.0.0.1:"), f"the authorization server did not start ({issuer!r})"
        yield AuthServer(issuer, key)
    finally:
        process.terminate()
        process.wait(timeout=10)


async def _whoami(args: dict[str, Any]) -> str:
    return "served"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _wait_listening(port: int) -> None:
    with anyio.fail_after(20):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
                continue
            await stream.aclose()
            return


@asynccontextmanager
async def protected(auth: AuthServer, *, path: str = "/mcp", **oauth: Any) -> AsyncIterator[str]:
    """A toolkit server on HTTP whose OAuth resource is its own URL; yields that URL."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}{path}"
    options = ServerOptions().with_http(
        port=port, path=path, stateless=True, oauth=OAuthOptions(issuer=auth.issuer, resource=url, **oauth)
    )
    tools = [ToolSpec("whoami", "Say the call was served.", p.object_schema({}), _whoami)]
    server = build_server("guarded", "1", tools, options=options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run_http)
        await _wait_listening(port)
        yield url
        tg.cancel_scope.cancel()


async def _list(url: str, token: str | None) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(url, json=body, headers=headers)


def _one_line(response: httpx2.Response) -> str:
    text = response.text
    assert text.endswith("\n") and text.count("\n") == 1, text
    return text.strip()


async def test_metadata_is_served_where_the_challenge_points(auth_server: AuthServer) -> None:
    async with protected(auth_server) as url:
        refused = await _list(url, None)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and "error=" not in challenge  # no token, no error code
        metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
        base = url.removesuffix("/mcp")
        assert metadata_url == f"{base}/.well-known/oauth-protected-resource/mcp"
        async with httpx2.AsyncClient() as http:
            for where in (metadata_url, f"{base}/.well-known/oauth-protected-resource"):
                got = await http.get(where, headers={"origin": "https://elsewhere.example"})
                assert got.status_code == 200 and got.headers["access-control-allow-origin"] == "*"
                document = got.json()
                assert document["resource"] == url
                assert document["authorization_servers"] == [auth_server.issuer]
                assert document["bearer_methods_supported"] == ["header"]
        assert metadata_url in _one_line(refused)


async def test_a_token_for_another_audience_is_refused_and_the_right_one_accepted(
    auth_server: AuthServer,
) -> None:
    async with protected(auth_server) as url:
        elsewhere = auth_server.token("https://other.example/mcp")
        refused = await _list(url, elsewhere)
        assert refused.status_code == 401
        line = _one_line(refused)
        assert "https://other.example/mcp" in line and url in line
        assert 'error="invalid_token"' in refused.headers["www-authenticate"]

        with pytest.raises(HttpError, match="401"):
            async with connect(url, headers={"Authorization": f"Bearer {elsewhere}"}) as session:
                await session.list_tools()

        mine = auth_server.token(url)
        async with connect(url, headers={"Authorization": f"Bearer {mine}"}) as session:
            assert [t["name"] for t in await session.list_tools()] == ["whoami"]
            result = await session.call("whoami", {})
            assert not result.is_error and result.text == "served"


async def test_expired_foreign_and_garbage_tokens_are_refused_in_one_line(auth_server: AuthServer) -> None:
    async with protected(auth_server) as url:
        now = int(time.time())
        good = {
            "iss": auth_server.issuer,
            "aud": url,
            "iat": now - 7200,
            "client_id": CLIENT_ID,
            "scope": "mcp:tools",
        }
        cases = {
            auth_server.signed({**good, "exp": now - 3600}): "expired",
            auth_server.signed({**good, "exp": now + 600}, key=_rsa_key()): "signature",
            auth_server.signed({**good, "exp": now + 600}, key=_rsa_key(), kid="k9"): "k9",
            auth_server.signed({**good, "exp": now + 600, "iss": "https://as.example"}): "not issued by",
            "not-a-token": "no JWT",
            "eyJhbGciOi.garbage.x": "no readable JWT",
            jwt.encode(
                {**good, "exp": now + 600}, "a-shared-secret-of-thirty-two-bytes", algorithm="HS256"
            ): "HS256",
        }
        for token, why in cases.items():
            refused = await _list(url, token)
            assert refused.status_code == 401, (why, refused.text)
            assert why in _one_line(refused)
        assert (await _list(url, auth_server.signed({**good, "exp": now + 600}))).status_code == 200


async def test_opaque_tokens_are_checked_by_introspection(auth_server: AuthServer) -> None:
    async with protected(
        auth_server, path="/opaque/mcp", client_id=CLIENT_ID, client_secret=CLIENT_SECRET
    ) as url:
        opaque = auth_server.token(url)
        assert opaque.count(".") != 2  # the authorization server issued an opaque token for this resource
        assert (await _list(url, opaque)).status_code == 200
        other = auth_server.token("https://other.example/opaque")
        refused = await _list(url, other)
        assert refused.status_code == 401 and "https://other.example/opaque" in _one_line(refused)
        unknown = await _list(url, "made-up-opaque-token")
        assert unknown.status_code == 401 and "not active" in _one_line(unknown)


async def test_a_required_scope_missing_is_403(auth_server: AuthServer) -> None:
    async with protected(auth_server, scopes=("mcp:admin",)) as url:
        refused = await _list(url, auth_server.token(url, scope="mcp:tools"))
        assert refused.status_code == 403
        assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
        assert "mcp:admin" in _one_line(refused)
        assert (await _list(url, auth_server.token(url, scope="mcp:tools mcp:admin"))).status_code == 200


async def test_the_archive_mcp_cli_serves_as_a_protected_resource(
    auth_server: AuthServer, tmp_path: Any
) -> None:
    """The ``--oauth-*`` flags end to end: ``mcpkit archive mcp`` over HTTP, its resource the bind's URL."""
    import sys

    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [sys.executable, "-m", "mcpkit", "archive", "mcp", "--db", str(tmp_path / "a.db"), "--create"]
    argv += ["--transport", "http", "--port", str(port), "--oauth-issuer", auth_server.issuer]
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        await _wait_listening(port)
        refused = await _list(url, auth_server.token("https://other.example/mcp"))
        assert refused.status_code == 401 and "https://other.example/mcp" in _one_line(refused)
        async with connect(url, headers={"Authorization": f"Bearer {auth_server.token(url)}"}) as session:
            assert await session.list_tools()
    finally:
        process.terminate()
        process.wait(timeout=20)
