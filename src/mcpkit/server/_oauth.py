"""OAuth 2.1 protected resource: what lets an HTTP face accept tokens from an authorization server.

MCP's authorization spec makes an HTTP server a *protected resource*: it publishes where its
tokens come from (RFC 9728 metadata at ``/.well-known/oauth-protected-resource``), points a
client there from every 401 (``WWW-Authenticate: Bearer resource_metadata="..."``), and accepts
only access tokens the authorization server issued *for this server* (RFC 8707: the token's
audience is this server's URL). Without that last check a token a user gave any other service
of the same authorization server would open this one too (the confused deputy the MCP spec
names), so a token for another audience is refused even when its signature is good.

A token is checked where it can be read: a JWT access token (RFC 9068) against the authorization
server's published keys (JWKS, found from its metadata, cached, fetched again when a token names
a key the cache lacks), with a small clock skew allowed; any other token by asking the
authorization server (introspection, RFC 7662) when a client for that is configured. Every
refusal is one line saying why, in the 401's body and its ``error_description``.

The SDK pieces are reused where they fit: its ``AccessToken`` and ``TokenVerifier`` protocol, its
RFC 9728 metadata model and URL rule, its authorization-server discovery order, and its
``AuthenticatedUser`` in the request scope (which its session manager reads to bind a session
to its principal; see :mod:`mcpkit._sdk`). The SDK's own bearer middleware is not used: it
drops the reason a token was refused, and it would sit inside the gateway's fast path instead
of in front of it. This module loads the SDK, PyJWT and httpx2 only when a server serves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from mcpkit.errors import CallError

if TYPE_CHECKING:
    import httpx2
    from mcp.server.auth.provider import AccessToken

__all__ = ["OAuthOptions", "OAuthVerifier", "TokenRefusedError", "challenge", "metadata_paths"]

logger = logging.getLogger("mcpkit.server")

_ASYMMETRIC_ALGS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
"""Signature algorithms accepted: public-key ones only (an HS256 token signed with a public key
as the secret, or ``none``, must never pass)."""

_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_KEY_REFRESH_MIN_S = 10.0
"""A token naming an unknown key fetches the JWKS again at most this often, so garbage tokens
with made-up key ids cannot make the server hammer the authorization server."""


@dataclass(frozen=True)
class OAuthOptions:
    """How an HTTP face checks OAuth access tokens.

    - ``issuer``: the authorization server's issuer URL; its metadata is found from it.
    - ``resource``: this server's public URL (the MCP endpoint, e.g. ``https://mcp.example.com/mcp``):
      the audience every token must carry, and the ``resource`` of the published metadata.
    - ``scopes``: scopes every token must hold (none by default); a token without one gets 403.
    - ``client_id``/``client_secret``: this server's client at the authorization server, used
      only to introspect tokens that are no JWT (opaque tokens).
    - ``leeway``: seconds of clock skew allowed on ``exp``/``nbf``/``iat``.
    - ``checked_here``: whether this module checks the tokens (see the attribute).
    """

    issuer: str
    resource: str
    scopes: tuple[str, ...] = ()
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    leeway: float = 30.0
    resource_name: str | None = None
    checked_here: bool = True
    """``False``: the metadata and challenges are served, but each token is judged by the server's
    own check (``HttpOptions.authorize``), for a backend that is itself the authorization server
    and the only one that can read its tokens (Redmine's own OAuth)."""

    def __post_init__(self) -> None:
        for label, url in (("issuer", self.issuer), ("resource", self.resource)):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"OAuth {label} {url!r} is no http(s) URL")
            if parts.fragment:
                raise ValueError(f"OAuth {label} {url!r} must not have a fragment")
        if bool(self.client_id) != bool(self.client_secret):
            raise ValueError("OAuth introspection needs both a client id and its secret")

    @classmethod
    def from_flags(
        cls,
        issuer: str | None,
        resource: str | None,
        scopes: Sequence[str] | None,
        client_id: str | None,
        client_secret: str | None,
        *,
        served: tuple[str, int, str] | None,
        token: str | None = None,
    ) -> OAuthOptions | None:
        """The options a CLI's ``--oauth-*`` flags ask for, or ``None`` without ``--oauth-issuer``.

        ``served`` is the HTTP bind (host, port, path), ``None`` when the command serves stdio.
        The resource defaults to that bind's URL; a bind on every address has no such URL, so it
        must be named. Every inconsistency is a ``ValueError`` naming the flags, never a server
        that starts open.
        """
        if not issuer:
            if resource or scopes or client_id:
                raise ValueError("--oauth-resource, --oauth-scope and --oauth-client-id need --oauth-issuer")
            return None
        if served is None:
            raise ValueError(
                "--oauth-issuer is for --transport http (a stdio server is reached only by its parent)"
            )
        if token:
            raise ValueError("give --token-env or --oauth-issuer, not both")
        host, port, path = served
        if resource is None:
            if host in ("0.0.0.0", "::", "[::]", ""):
                raise ValueError(
                    f"--oauth-issuer with --host {host or '(any)'}: name this server's public URL with --oauth-resource"
                )
            shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
            resource = f"http://{shown}:{port}{path}"
        if client_id and not client_secret:
            raise ValueError("--oauth-client-id needs its secret in $MCPKIT_OAUTH_CLIENT_SECRET")
        return cls(
            issuer=issuer,
            resource=resource,
            scopes=tuple(scopes or ()),
            client_id=client_id,
            client_secret=client_secret if client_id else None,
        )

    @property
    def metadata_url(self) -> str:
        """Where this resource's RFC 9728 metadata is served: the well-known path inserted
        before the resource's own path (RFC 9728 section 3.1)."""
        parts = urlsplit(self.resource)
        path = parts.path if parts.path != "/" else ""
        return f"{parts.scheme}://{parts.netloc}{_WELL_KNOWN}{path}"


def metadata_paths(options: OAuthOptions) -> frozenset[str]:
    """The request paths that answer the metadata: the path-suffixed form the 401 points to, and
    the root form clients fall back to."""
    return frozenset({urlsplit(options.metadata_url).path, _WELL_KNOWN})


def metadata_document(options: OAuthOptions) -> bytes:
    """The RFC 9728 document, written through the SDK's model (so it is what SDK clients parse)."""
    from mcp.shared.auth import ProtectedResourceMetadata

    document = ProtectedResourceMetadata.model_validate(
        {
            "resource": options.resource,
            "authorization_servers": [options.issuer],
            "scopes_supported": list(options.scopes) or None,
            "bearer_methods_supported": ["header"],
            "resource_name": options.resource_name,
        }
    )
    return document.model_dump_json(exclude_none=True).encode()


class TokenRefusedError(CallError):
    """A request's token is not accepted: the HTTP status, the OAuth error code and one line."""

    def __init__(self, message: str, *, status: int = 401, error: str | None = "invalid_token") -> None:
        super().__init__(message)
        self.status = status
        self.error = error


def _quoted(text: str) -> str:
    """``text`` as an RFC 7230 quoted-string that a latin-1 header can carry."""
    safe = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(c if 0x20 <= ord(c) < 0x7F else "?" for c in safe)


def challenge(options: OAuthOptions, refused: TokenRefusedError | None = None) -> str:
    """The ``WWW-Authenticate`` value: where the metadata is, and why a token was refused.

    Without a token there is no error code (RFC 6750 section 3.1): the client was only told
    it needs one.
    """
    parts: list[str] = []
    if refused is not None and refused.error:
        parts += [f'error="{refused.error}"', f'error_description="{_quoted(str(refused))}"']
    if options.scopes:
        parts.append(f'scope="{_quoted(" ".join(options.scopes))}"')
    parts.append(f'resource_metadata="{options.metadata_url}"')
    return "Bearer " + ", ".join(parts)


def _same_resource(a: str, b: str) -> bool:
    """Whether two resource URLs name the same resource: scheme and host in any case, a default
    port written or not, a trailing slash aside (as the SDK's own audience check compares)."""

    def norm(url: str) -> tuple[str, str, int | None, str]:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        try:
            port = parts.port or {"http": 80, "https": 443}.get(scheme)
        except ValueError:
            port = -1
        return scheme, (parts.hostname or "").lower(), port, parts.path.rstrip("/") + "?" + parts.query

    try:
        return norm(a) == norm(b)
    except (ValueError, AttributeError):
        return False


def _scopes_of(claims: Mapping[str, Any]) -> list[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    scp = claims.get("scp")
    if isinstance(scp, list):
        return [str(s) for s in scp]
    return []


def _looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("eyJ")


class OAuthVerifier:
    """Checks bearer tokens for one resource against one authorization server.

    Also the SDK's ``TokenVerifier`` (:meth:`verify_token`), for code that wants the SDK's
    interface. The authorization server's metadata and keys are fetched on first use, not at
    start, so a server may start before its authorization server does.
    """

    def __init__(self, options: OAuthOptions, *, http: httpx2.AsyncClient | None = None) -> None:
        self.options = options
        self._http = http
        self._metadata: dict[str, Any] | None = None
        self._keys: dict[str, Any] = {}
        self._keys_fetched_at: float | None = None
        self._lock = anyio.Lock()

    # -- the authorization server -----------------------------------------------------------------

    def _client(self) -> httpx2.AsyncClient:
        import httpx2

        if self._http is None:
            self._http = httpx2.AsyncClient(timeout=httpx2.Timeout(10.0))
        return self._http

    async def _get_json(self, url: str) -> Any:
        import httpx2

        try:
            response = await self._client().get(url, headers={"accept": "application/json"})
        except httpx2.HTTPError as exc:
            raise TokenRefusedError(
                f"cannot reach the authorization server at {url}: {exc}", status=503, error=None
            ) from None
        if response.status_code != 200:
            raise LookupError(f"{url} answered HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            raise LookupError(f"{url} answered no JSON") from None

    async def metadata(self) -> dict[str, Any]:
        """The authorization server's metadata (RFC 8414, else OpenID discovery), found once."""
        if self._metadata is not None:
            return self._metadata
        from mcp.client.auth.utils import build_oauth_authorization_server_metadata_discovery_urls

        issuer = self.options.issuer
        tried: list[str] = []
        for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, issuer):
            try:
                found = await self._get_json(url)
            except LookupError as exc:
                tried.append(str(exc))
                continue
            if not isinstance(found, dict) or found.get("issuer", "").rstrip("/") != issuer.rstrip("/"):
                # RFC 8414 section 3.3: metadata naming another issuer must not be used.
                tried.append(
                    f"{url} names issuer {found.get('issuer') if isinstance(found, dict) else None!r}"
                )
                continue
            self._metadata = found
            return found
        raise TokenRefusedError(
            f"no authorization server metadata for {issuer} ({'; '.join(tried)})", status=503, error=None
        )

    async def _key(self, kid: str | None, alg: str) -> Any:
        """The published key a token names (PyJWT's ``PyJWK``); the JWKS is fetched again, at
        most every few seconds, when the cache lacks it (the server rotated its keys)."""
        async with self._lock:
            found = self._pick(kid, alg)
            fresh = (
                self._keys_fetched_at is not None
                and time.monotonic() - self._keys_fetched_at < _KEY_REFRESH_MIN_S
            )
            if found is None and not fresh:
                await self._fetch_keys()
                found = self._pick(kid, alg)
        if found is None:
            raise TokenRefusedError(
                f"the token is signed with key {kid!r}, which the authorization server does not publish"
            )
        return found

    def _pick(self, kid: str | None, alg: str) -> Any:
        if kid is not None:
            return self._keys.get(kid)
        fitting = [k for k in self._keys.values() if getattr(k, "algorithm_name", alg) == alg]
        return fitting[0] if len(fitting) == 1 else None

    async def _fetch_keys(self) -> None:
        import jwt

        uri = (await self.metadata()).get("jwks_uri")
        if not uri:
            raise TokenRefusedError(
                "the authorization server publishes no keys (jwks_uri), so JWTs cannot be checked"
            )
        try:
            document = await self._get_json(str(uri))
        except LookupError as exc:
            raise TokenRefusedError(
                f"cannot read the authorization server's keys: {exc}", status=503, error=None
            ) from None
        self._keys_fetched_at = time.monotonic()
        keys: dict[str, Any] = {}
        for index, entry in enumerate(document.get("keys", []) if isinstance(document, dict) else []):
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK(entry)
            except (jwt.PyJWKError, jwt.InvalidKeyError):
                continue  # a key type or algorithm this server cannot use; others still count
            keys[str(entry.get("kid", f"#{index}"))] = key
        self._keys = keys

    # -- tokens -----------------------------------------------------------------------------------

    async def check(self, token: str) -> AccessToken:
        """The token's grant when this resource accepts it; :class:`TokenRefusedError` saying why not."""
        token = token.strip()
        if not token:
            raise TokenRefusedError("the Authorization header carries no token")
        metadata = await self.metadata()
        if _looks_like_jwt(token) and metadata.get("jwks_uri"):
            access = await self._check_jwt(token)
        elif self.options.client_id and metadata.get("introspection_endpoint"):
            access = await self._introspect(token, str(metadata["introspection_endpoint"]))
        elif not _looks_like_jwt(token):
            raise TokenRefusedError(
                "the token is no JWT, and this server has no client to introspect it (--oauth-client-id)"
            )
        else:
            raise TokenRefusedError(
                "the authorization server publishes no keys (jwks_uri), so JWTs cannot be checked"
            )
        missing = [s for s in self.options.scopes if s not in access.scopes]
        if missing:
            raise TokenRefusedError(
                f"the token lacks the scope {' '.join(missing)}", status=403, error="insufficient_scope"
            )
        return access

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's ``TokenVerifier`` interface: the grant, or ``None`` when refused."""
        try:
            return await self.check(token)
        except TokenRefusedError as exc:
            logger.info("token refused: %s", exc)
            return None

    async def _check_jwt(self, token: str) -> AccessToken:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefusedError("the token is no readable JWT") from None
        alg = str(header.get("alg"))
        if alg not in _ASYMMETRIC_ALGS:
            raise TokenRefusedError(f"the token is signed with {alg}, which this server does not accept")
        key = await self._key(header.get("kid"), alg)
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                issuer=self.options.issuer,
                leeway=self.options.leeway,
                options={"verify_aud": False, "require": ["exp", "iss"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRefusedError("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise TokenRefusedError("the token is not valid yet") from None
        except jwt.InvalidIssuerError:
            raise TokenRefusedError(f"the token was not issued by {self.options.issuer}") from None
        except jwt.InvalidSignatureError:
            raise TokenRefusedError(
                "the token's signature does not match the authorization server's key"
            ) from None
        except jwt.PyJWTError as exc:
            raise TokenRefusedError(f"the token is not valid: {exc}") from None
        return self._grant(token, claims)

    async def _introspect(self, token: str, endpoint: str) -> AccessToken:
        import httpx2

        try:
            response = await self._client().post(
                endpoint,
                data={"token": token, "token_type_hint": "access_token"},
                auth=(self.options.client_id or "", self.options.client_secret or ""),
                headers={"accept": "application/json"},
            )
        except httpx2.HTTPError as exc:
            raise TokenRefusedError(
                f"cannot reach the introspection endpoint {endpoint}: {exc}", status=503, error=None
            ) from None
        if response.status_code != 200:
            raise TokenRefusedError(
                f"the introspection endpoint answered HTTP {response.status_code} (is the client id right?)",
                status=503,
                error=None,
            )
        try:
            claims = response.json()
        except ValueError:
            raise TokenRefusedError(
                "the introspection endpoint answered no JSON", status=503, error=None
            ) from None
        if not isinstance(claims, dict) or claims.get("active") is not True:
            raise TokenRefusedError(
                "the authorization server says the token is not active (expired, revoked or unknown)"
            )
        if "iss" in claims and str(claims["iss"]).rstrip("/") != self.options.issuer.rstrip("/"):
            raise TokenRefusedError(f"the token was not issued by {self.options.issuer}")
        exp = claims.get("exp")
        if isinstance(exp, (int, float)) and exp + self.options.leeway < time.time():
            raise TokenRefusedError("the token has expired")
        return self._grant(token, claims)

    def _grant(self, token: str, claims: Mapping[str, Any]) -> AccessToken:
        """The grant, once the token's audience is this resource (RFC 8707)."""
        from mcp.server.auth.provider import AccessToken

        aud = claims.get("aud")
        audiences = [str(a) for a in aud] if isinstance(aud, list) else [str(aud)] if aud else []
        mine = next((a for a in audiences if _same_resource(a, self.options.resource)), None)
        if mine is None:
            named = ", ".join(audiences) if audiences else "no audience"
            raise TokenRefusedError(
                f"the token is for {named}, not for this server ({self.options.resource})"
            )
        exp = claims.get("exp")
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims.get("sub") or ""),
            scopes=_scopes_of(claims),
            expires_at=int(exp) if isinstance(exp, (int, float)) else None,
            resource=mine,
            subject=str(claims["sub"]) if claims.get("sub") is not None else None,
            claims=dict(claims),
        )

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
