"""Auth checks for an HTTP server that answers 401: what a client needs to get in, and who is kept out.

MCP's authorization spec makes such a server an OAuth 2.1 protected resource. A client that
gets the 401 follows ``WWW-Authenticate: Bearer resource_metadata="..."`` (RFC 9728 §5.1) to the
protected-resource metadata, reads which authorization servers issue its tokens, and asks one
for a token whose audience is this server (RFC 8707). So, checked here:

- the first request without credentials gets 401 with a Bearer challenge naming the metadata
  (without it a client can only guess the well-known address, and older ones stop there);
- the metadata answers JSON whose ``resource`` is this server and whose
  ``authorization_servers`` is a non-empty list of URLs, and each authorization server's own
  metadata (RFC 8414, or OpenID discovery) is reachable;
- with the user's token (``--header 'Authorization: Bearer ...'``): it is accepted, the same
  token with its signature altered is refused, and a token the user got for another resource
  (``--foreign-token-env``) is refused: a server that takes it lets any service of the same
  authorization server replay its users' tokens here (the confused deputy).

A server that does not answer 401 is not judged here: auth is optional in MCP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

from mcpkit.check.model import CheckFinding, CheckReport, CheckSeverity
from mcpkit.check.origin import post_initialize
from mcpkit.client import ServerConfig

_PARAM = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')
_WELL_KNOWN = "/.well-known/oauth-protected-resource"


@dataclass
class AuthOutcome:
    """What the auth checks learned: ``blocked`` when the server needs a token the user did not give."""

    required: bool = False
    blocked: bool = False
    facts: dict[str, Any] = field(default_factory=dict)


def challenge_params(header: str) -> tuple[str, dict[str, str]]:
    """The scheme of a ``WWW-Authenticate`` value and its ``key="value"`` parameters."""
    scheme, _, rest = header.strip().partition(" ")
    params = {
        m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
        for m in _PARAM.finditer(rest)
    }
    return scheme, {k: v.replace('\\"', '"') for k, v in params.items()}


def well_known_url(resource: str) -> str:
    """RFC 9728 §3.1: the well-known path inserted between the host and the resource's path."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, _WELL_KNOWN + path, "", ""))


def same_resource(a: str, b: str) -> bool:
    """Whether two resource URLs name the same thing (case of scheme and host, default ports, a trailing slash)."""

    def norm(url: str) -> tuple[str, str, int | None, str]:
        p = urlsplit(url)
        port = p.port or {"http": 80, "https": 443}.get(p.scheme.lower())
        return p.scheme.lower(), (p.hostname or "").lower(), port, p.path.rstrip("/") or "/"

    return norm(a) == norm(b)


def _bearer(server: ServerConfig) -> str | None:
    for key, value in server.headers.items():
        if key.lower() == "authorization" and value.lower().startswith("bearer "):
            return value[7:].strip()
    return None


def altered(token: str) -> str:
    """The same token with its signature (a JWT's third part) or its end changed."""
    head, dot, signature = token.rpartition(".")
    if dot and signature:
        flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
        return f"{head}.{flipped}"
    return token[:-1] + ("A" if not token.endswith("A") else "B") if token else "x"


async def check_auth(
    server: ServerConfig, report: CheckReport, timeout: float, *, foreign_token: str | None = None
) -> AuthOutcome:
    """Run the auth checks when the server refuses an anonymous request with 401."""
    url = server.url
    outcome = AuthOutcome()
    if url is None or server.kind == "sse":
        return outcome
    anonymous = await post_initialize(server, url, {}, timeout, without=("authorization",))
    if anonymous is None or anonymous.status != 401:
        return outcome
    outcome.required = True
    report.auth = outcome.facts
    outcome.facts["required"] = True
    metadata_url = _challenge(anonymous.www_authenticate, report)
    async with httpx2.AsyncClient(timeout=timeout) as http:
        metadata = await _metadata(http, url, metadata_url, report, outcome.facts)
        if metadata is not None:
            await _authorization_servers(http, metadata, report)
    token = _bearer(server)
    if token is None:
        outcome.blocked = True
        _add(
            report,
            "auth-no-token",
            "info",
            "the server requires authorization and no token was given, so only its auth was checked",
            "Give a token (--header 'Authorization: Bearer TOKEN') to check the rest.",
        )
        return outcome
    given = await post_initialize(server, url, {}, timeout)
    if given is not None and given.status in (401, 403):
        outcome.blocked = True
        _add(
            report,
            "auth-token-refused",
            "error",
            f"the token given was refused (HTTP {given.status}): {given.www_authenticate or 'no reason given'}",
            "Give a token the authorization server issued for this server's URL (its resource).",
        )
        return outcome
    await _must_refuse(
        server,
        url,
        altered(token),
        timeout,
        report,
        "auth-altered-token-accepted",
        "the given token with its signature altered",
    )
    if foreign_token:
        outcome.facts["foreignTokenChecked"] = True
        await _must_refuse(
            server,
            url,
            foreign_token,
            timeout,
            report,
            "auth-audience-not-checked",
            "a token issued for another resource",
        )
    return outcome


def _challenge(header: str, report: CheckReport) -> str | None:
    scheme, params = challenge_params(header)
    report.auth["challenge"] = header
    if scheme.lower() != "bearer":
        _add(
            report,
            "auth-challenge",
            "error",
            f"HTTP 401 without a Bearer challenge (WWW-Authenticate: {header or 'absent'})",
            'Answer 401 with WWW-Authenticate: Bearer resource_metadata="<metadata URL>".',
        )
        return None
    metadata_url = params.get("resource_metadata")
    if not metadata_url:
        _add(
            report,
            "auth-challenge",
            "warning",
            "the 401's Bearer challenge has no resource_metadata: clients must guess the well-known address",
            'Add resource_metadata="<protected-resource metadata URL>" to the challenge (RFC 9728 §5.1).',
        )
    return metadata_url


async def _metadata(
    http: httpx2.AsyncClient, url: str, pointed: str | None, report: CheckReport, facts: dict[str, Any]
) -> dict[str, Any] | None:
    where = pointed or well_known_url(url)
    facts["metadata"] = where
    document: Any = None
    try:
        response = await http.get(where)
        problem = f"answered HTTP {response.status_code}"
        if response.status_code == 200:
            problem = "is not a JSON object"
            document = response.json()
    except (httpx2.HTTPError, ValueError) as exc:
        problem = f"could not be read ({exc.__class__.__name__})"
    if not isinstance(document, dict):
        _add(
            report,
            "auth-metadata",
            "error",
            f"the protected-resource metadata at {where} {problem}",
            "Serve RFC 9728 metadata ({resource, authorization_servers}) where the challenge points.",
        )
        return None
    problems = []
    resource = document.get("resource")
    if not isinstance(resource, str) or not same_resource(resource, url):
        problems.append(f"resource is {resource!r}, not this server ({url})")
    servers = document.get("authorization_servers")
    if not (
        isinstance(servers, list)
        and servers
        and all(isinstance(s, str) and s.startswith(("https://", "http://")) for s in servers)
    ):
        problems.append(f"authorization_servers is {servers!r}, not a non-empty list of URLs")
    else:
        facts["authorizationServers"] = servers
    for problem in problems:
        _add(
            report,
            "auth-metadata",
            "error",
            f"protected-resource metadata at {where}: {problem}",
            "MCP clients ask an authorization server for a token whose audience is resource: make "
            "resource this server's URL and list where tokens come from.",
        )
    return document


async def _authorization_servers(
    http: httpx2.AsyncClient, metadata: dict[str, Any], report: CheckReport
) -> None:
    servers = metadata.get("authorization_servers")
    for issuer in servers if isinstance(servers, list) else []:
        if not isinstance(issuer, str):
            continue
        parts = urlsplit(issuer)
        path = parts.path.rstrip("/")
        candidates = [
            urlunsplit(
                (parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", "")
            ),
            urlunsplit((parts.scheme, parts.netloc, f"/.well-known/openid-configuration{path}", "", "")),
            f"{issuer.rstrip('/')}/.well-known/openid-configuration",
        ]
        if not await _any_json(http, candidates):
            _add(
                report,
                "auth-server-unreachable",
                "warning",
                f"authorization server {issuer}: no metadata at RFC 8414 or OpenID discovery addresses",
                "Point authorization_servers at an issuer that publishes its metadata.",
            )


async def _any_json(http: httpx2.AsyncClient, urls: list[str]) -> bool:
    for candidate in urls:
        try:
            response = await http.get(candidate)
            if response.status_code == 200 and isinstance(response.json(), dict):
                return True
        except (httpx2.HTTPError, ValueError):
            continue
    return False


async def _must_refuse(
    server: ServerConfig, url: str, token: str, timeout: float, report: CheckReport, rule: str, what: str
) -> None:
    answer = await post_initialize(
        server, url, {"Authorization": f"Bearer {token}"}, timeout, without=("authorization",)
    )
    if answer is not None and answer.status not in (401, 403):
        _add(
            report,
            rule,
            "error",
            f"{what} was accepted (HTTP {answer.status})",
            "Check every token's signature and that its audience (aud) is this server's URL (RFC 8707).",
        )


def _add(report: CheckReport, rule: str, severity: CheckSeverity, message: str, hint: str) -> None:
    report.add(CheckFinding(rule, severity, "security", message, hint))
