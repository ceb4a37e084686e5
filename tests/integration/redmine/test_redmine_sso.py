"""Single sign-on (issue 39 point 1): OAuth tokens from a real OpenID Connect provider, each holder
acting in a real Redmine as their own user through an administrator key and X-Redmine-Switch-User.

The provider is oidc-provider (npm, tests/fixtures/oauth/), whose login page accepts any login
name: the name typed becomes the token's ``sub``, which the server maps to a Redmine login
(``REDMINE_OAUTH_USER_CLAIM=sub``). The people are Redmine users this module creates, one a
Developer and one a Reporter, each a member of a private project of their own and of one shared
project holding an issue with a private note. The server is ``mcpkit redmine mcp --transport
http --oauth-issuer ...`` as a child process, and the clients are the SDK's streamable HTTP client
and the MCP Inspector's CLI, which sends nothing but the token it got from the provider.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.client.procs import free_port
from tests.integration.redmine.redmine_session import RedmineEnv, rest
from tests.server.test_inspector_oauth import (
    INSPECTOR_CLIENT,
    authorization_server,
    form,
    inspector,
)
from tests.server.test_oauth import AuthServer
from tests.support.env import REPO

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SCOPE = "mcp:tools"
PRIVATE_NOTE = "private note for developers only"


@dataclass
class Person:
    login: str
    user_id: int
    mail: str
    project: str


@dataclass
class Place:
    developer: Person
    reporter: Person
    locked: Person
    shared: str
    issue_id: int
    admins_only: str


def _user(redmine: RedmineEnv, login: str, *, status: int = 1) -> int:
    body = {
        "user": {
            "login": login,
            "firstname": login.split("-")[1].title(),
            "lastname": "Sso",
            "mail": f"{login}@example.com",
            "password": secrets.token_urlsafe(12),
            "status": status,
        }
    }
    return int(rest(redmine, "POST", "users.json", body)["user"]["id"])


def _project(redmine: RedmineEnv, ident: str) -> None:
    rest(
        redmine,
        "POST",
        "projects.json",
        {"project": {"name": ident, "identifier": ident, "is_public": False}},
    )


def _member(redmine: RedmineEnv, ident: str, user_id: int, role_id: int) -> None:
    body = {"membership": {"user_id": user_id, "role_ids": [role_id]}}
    rest(redmine, "POST", f"projects/{ident}/memberships.json", body)


@pytest.fixture(scope="module")
def place(redmine: RedmineEnv) -> Iterator[Place]:
    tag = uuid.uuid4().hex[:8]
    roles = {r["name"]: int(r["id"]) for r in rest(redmine, "GET", "roles.json")["roles"]}
    people: dict[str, Person] = {}
    projects: list[str] = []
    try:
        for kind in ("dev", "rep", "locked"):
            login = f"sso-{kind}-{tag}"
            user_id = _user(redmine, login, status=3 if kind == "locked" else 1)
            people[kind] = Person(login, user_id, f"{login}@example.com", f"sso-{kind}-{tag}")
            _project(redmine, people[kind].project)
            projects.append(people[kind].project)
        shared, admins_only = f"sso-shared-{tag}", f"sso-admins-{tag}"
        for ident in (shared, admins_only):
            _project(redmine, ident)
            projects.append(ident)
        _member(redmine, people["dev"].project, people["dev"].user_id, roles["Developer"])
        _member(redmine, people["rep"].project, people["rep"].user_id, roles["Reporter"])
        _member(redmine, people["locked"].project, people["locked"].user_id, roles["Developer"])
        _member(redmine, shared, people["dev"].user_id, roles["Developer"])
        _member(redmine, shared, people["rep"].user_id, roles["Reporter"])
        issue = rest(redmine, "POST", "issues.json", {"issue": {"project_id": shared, "subject": "Shared"}})
        issue_id = int(issue["issue"]["id"])
        note = {"issue": {"notes": PRIVATE_NOTE, "private_notes": True}}
        rest(redmine, "PUT", f"issues/{issue_id}.json", note)
        yield Place(people["dev"], people["rep"], people["locked"], shared, issue_id, admins_only)
    finally:
        for ident in projects:
            rest(redmine, "DELETE", f"projects/{ident}.json")
        for person in people.values():
            rest(redmine, "DELETE", f"users/{person.user_id}.json")


@dataclass
class Served:
    url: str
    auth: AuthServer
    callback: str
    log: Path


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def sso_server(
    redmine: RedmineEnv, issuer: str, log: Path, *, admin_key: str | None, claim: str = "sub"
) -> Iterator[str]:
    """``mcpkit redmine mcp`` over HTTP with single sign-on; yields its URL."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("REDMINE_", "MCPKIT_"))},
        "REDMINE_URL": redmine.url,
        "REDMINE_OAUTH_USER_CLAIM": claim,
        "MCPKIT_LOG": "debug",
        **({"REDMINE_ADMIN_API_KEY": admin_key} if admin_key else {}),
    }
    command = [sys.executable, "-m", "mcpkit", "redmine", "mcp", "--transport", "http", "--port", str(port)]
    command += ["--oauth-issuer", issuer, "--oauth-scope", SCOPE]
    with log.open("ab") as sink:
        process = subprocess.Popen(command, env=env, cwd=REPO, stdout=sink, stderr=sink)
    try:
        deadline = time.monotonic() + 60
        while not _listening(port):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the server did not listen within 60 s"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def served(redmine: RedmineEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    log = tmp_path_factory.mktemp("sso") / "server.log"
    callback = f"http://127.0.0.1:{free_port()}/oauth/callback"
    with (
        authorization_server(callback) as auth,
        sso_server(redmine, auth.issuer, log, admin_key=redmine.admin_key) as url,
    ):
        yield Served(url, auth, callback, log)


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def sign_in(served: Served, login: str) -> str:
    """A person's access token for the server, got as a browser-based client gets one from the
    provider: authorization code with PKCE, the login and consent pages filled in as ``login``."""
    verifier, challenge = _pkce()
    query = {
        "response_type": "code",
        "client_id": INSPECTOR_CLIENT,
        "redirect_uri": served.callback,
        "scope": SCOPE,
        "resource": served.url,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": secrets.token_urlsafe(8),
    }
    async with httpx2.AsyncClient(timeout=30) as browser:

        async def follow(page: httpx2.Response) -> httpx2.Response:
            while page.status_code in (302, 303) and not page.headers["location"].startswith(served.callback):
                page = await browser.get(urljoin(str(page.url), page.headers["location"]))
            return page

        page = await follow(await browser.get(f"{served.auth.issuer}/auth", params=query))
        action, fields = form(page)
        page = await follow(await browser.post(action, data={**fields, "login": login, "password": "any"}))
        action, fields = form(page)
        back = await follow(await browser.post(action, data=fields))
        code = parse_qs(urlsplit(back.headers["location"]).query)["code"][0]
        answer = await browser.post(
            f"{served.auth.issuer}/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": served.callback,
                "code_verifier": verifier,
                "client_id": INSPECTOR_CLIENT,
                "resource": served.url,
            },
        )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


@asynccontextmanager
async def session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    async with http, streamable_http_client(url, http_client=http) as (read, write, *_):  # noqa: SIM117
        async with ClientSession(read, write) as client:
            await client.initialize()
            yield client


async def call(client: ClientSession, name: str, args: dict[str, object]) -> tuple[bool, str]:
    result = await client.call_tool(name, args)
    return bool(result.is_error), "".join(getattr(c, "text", "") for c in result.content)


def _post(url: str, headers: dict[str, str]) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    return httpx2.post(url, json=body, headers={**accept, **headers}, timeout=60)


async def test_two_people_each_act_as_themselves_and_never_as_the_administrator(
    place: Place, served: Served
) -> None:
    dev, rep = place.developer, place.reporter
    tokens = {dev.login: await sign_in(served, dev.login), rep.login: await sign_in(served, rep.login)}
    for person, other in ((dev, rep), (rep, dev)):
        async with session(served.url, {"authorization": f"Bearer {tokens[person.login]}"}) as client:
            failed, text = await call(client, "get_my_account", {})
            assert not failed and ET.fromstring(text).findtext("login") == person.login, text
            failed, text = await call(client, "get_project", {"project": person.project})
            assert not failed and person.project in text, text
            for hidden in (other.project, place.admins_only):  # the administrator sees both
                failed, text = await call(client, "get_project", {"project": hidden})
                assert failed and ("403" in text or "404" in text) and "\n" not in text.strip(), text
            failed, text = await call(client, "list_users", {})  # the administrator may list users
            assert failed and "403" in text, text
            failed, text = await call(client, "get_issue", {"id": place.issue_id})
            assert not failed, text
            assert (PRIVATE_NOTE in text) is (person is dev), "only the Developer may read private notes"


async def test_an_unknown_or_locked_person_is_refused_in_one_line(place: Place, served: Served) -> None:
    for login in (f"nobody-{uuid.uuid4().hex[:8]}", place.locked.login):
        token = await sign_in(served, login)
        answer = _post(served.url, {"authorization": f"Bearer {token}"})
        assert answer.status_code == 403, answer.text
        assert answer.text.count("\n") == 1 and login in answer.text and "locked" in answer.text


def test_a_redmine_key_alone_still_works_and_no_credential_points_at_the_provider(
    redmine: RedmineEnv, served: Served
) -> None:
    keyed = _post(served.url, {"x-redmine-api-key": redmine.user_key})
    assert keyed.status_code == 200 and "get_issue" in keyed.text
    bare = _post(served.url, {})
    assert bare.status_code == 401 and "X-Redmine-API-Key" in bare.text
    metadata_url = bare.headers["www-authenticate"].split('resource_metadata="')[1].split('"')[0]
    metadata = httpx2.get(metadata_url).json()
    assert metadata["resource"] == served.url and metadata["authorization_servers"] == [served.auth.issuer]
    assert _post(served.url, {"x-redmine-api-key": "0" * 40}).status_code == 401


async def test_the_token_claim_may_be_the_login_or_the_mail(
    redmine: RedmineEnv, place: Place, served: Served, tmp_path: Path
) -> None:
    """Tokens signed with the provider's own key (checked against its published keys), carrying
    the claims an OpenID Connect provider such as Keycloak puts in its access tokens."""
    dev = place.developer
    for claim, value in (("preferred_username", dev.login.upper()), ("email", dev.mail.upper())):
        with sso_server(
            redmine, served.auth.issuer, tmp_path / f"{claim}.log", admin_key=redmine.admin_key, claim=claim
        ) as url:
            now = int(time.time())
            claims = {"iss": served.auth.issuer, "aud": url, "exp": now + 300, "iat": now, "scope": SCOPE}
            token = served.auth.signed({**claims, "sub": "f81d4fae-7dec", claim: value})
            async with session(url, {"authorization": f"Bearer {token}"}) as client:
                failed, text = await call(client, "get_my_account", {})
                assert not failed and ET.fromstring(text).findtext("login") == dev.login, text
            missing = served.auth.signed({**claims, "sub": dev.login})
            answer = _post(url, {"authorization": f"Bearer {missing}"})
            assert answer.status_code == 403 and f"no {claim} claim" in answer.text


async def test_a_key_that_is_no_administrators_is_never_used_as_itself(
    redmine: RedmineEnv, place: Place, served: Served, tmp_path: Path
) -> None:
    """Redmine ignores X-Redmine-Switch-User for a key whose owner is no administrator and acts as
    that owner: such a server must refuse every token holder, not serve them as the key's owner."""
    with sso_server(
        redmine, served.auth.issuer, tmp_path / "member-key.log", admin_key=redmine.user_key
    ) as url:
        now = int(time.time())
        token = served.auth.signed(
            {
                "iss": served.auth.issuer,
                "aud": url,
                "exp": now + 300,
                "scope": SCOPE,
                "sub": place.developer.login,
            }
        )
        answer = _post(url, {"authorization": f"Bearer {token}"})
        assert answer.status_code == 503 and "REDMINE_ADMIN_API_KEY" in answer.text
        assert answer.text.count("\n") == 1


async def test_an_oauth_only_client_works_through_the_inspector(
    place: Place, served: Served, tmp_path: Path
) -> None:
    """The MCP Inspector's CLI with nothing but the OAuth flow: refused, it finds the provider from
    the server's metadata, the person signs in, and the tool runs as that person."""
    args = ["--server-url", served.url, "--transport", "http", "--callback-url", served.callback]
    args += ["--client-id", INSPECTOR_CLIENT, "--method", "tools/call", "--tool-name", "get_my_account"]
    args += ["--format", "json"]
    with anyio.fail_after(120):
        async with inspector(tmp_path, *args) as run:
            await run.asked.wait()
            async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as browser:
                login = await browser.get(run.authorization_url())
                action, fields = form(login)
                consent = await browser.post(
                    action, data={**fields, "login": place.developer.login, "password": "any"}
                )
                action, fields = form(consent)
                back = await browser.post(action, data=fields)
            assert back.status_code == 200 and str(back.url).startswith(served.callback), back.text
            assert run.process.stdout is not None
            out = b"".join([chunk async for chunk in run.process.stdout])
            assert await run.process.wait() == 0, run.said
    result = json.loads(out)["result"]
    text = "".join(c.get("text", "") for c in result["content"])
    assert not result.get("isError") and ET.fromstring(text).findtext("login") == place.developer.login


def test_where_redmine_is_the_authorization_server_its_tokens_go_to_redmine(
    redmine: RedmineEnv, tmp_path: Path
) -> None:
    """Redmine 6.1's own OAuth: the metadata names Redmine, and a bearer token is Redmine's to
    judge (sent on as its bearer token, no administrator key needed). Debian's Redmine is 5, which
    issues no tokens, so only the refusal and the key path can be checked here."""
    with sso_server(redmine, redmine.url, tmp_path / "redmine-as.log", admin_key=None) as url:
        refused = _post(url, {"authorization": "Bearer " + "t" * 43})
        assert refused.status_code == 401 and "access token" in refused.text, refused.text
        metadata_url = refused.headers["www-authenticate"].split('resource_metadata="')[1].split('"')[0]
        assert httpx2.get(metadata_url).json()["authorization_servers"] == [redmine.url]
        keyed = _post(url, {"x-redmine-api-key": redmine.user_key})
        assert keyed.status_code == 200 and "get_issue" in keyed.text
        assert _post(url, {}).status_code == 401
    assert "t" * 43 not in (tmp_path / "redmine-as.log").read_text()


def test_no_key_or_token_in_the_server_log(redmine: RedmineEnv, served: Served) -> None:
    text = served.log.read_text(errors="replace")
    assert "DEBUG" in text or "debug" in text.lower()
    assert redmine.admin_key not in text and redmine.user_key not in text
    assert "eyJ" not in text, "an access token reached the log"
