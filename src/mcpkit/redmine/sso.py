"""Single sign-on: an OAuth access token's holder acts in Redmine as their own Redmine user.

Over HTTP with ``--oauth-issuer`` the server is an OAuth 2.1 protected resource of the team's
OpenID Connect provider: the toolkit's HTTP guard checks each token (signature, issuer, audience,
scopes; see :mod:`mcpkit.server`) and hands its claims to :meth:`SingleSignOn.admit`. One claim
(``preferred_username`` or ``sub``: the Redmine login; ``email``: the active user with that
address) names the person's Redmine user, and every request of theirs is sent with the
administrator key in ``REDMINE_ADMIN_API_KEY`` and Redmine's ``X-Redmine-Switch-User`` header, so
Redmine applies that user's own permissions.

Two traps shape this module. Redmine answers 412 for a switch to an unknown or locked login,
which is refused in one line. And Redmine *ignores* the switch header when the key's owner is no
administrator, acting as the key's owner instead: so the user Redmine says it acts as
(``/users/current.json``) must be the mapped login, or the token is refused. The administrator
key therefore never acts as itself for a token holder (unless the holder is that administrator).

A tool call finds its user by its token (indexed by the token's SHA-256, never the token itself),
which :meth:`admit` recorded for it just before; a token that was not admitted is refused, never
served as anyone else.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from mcpkit.redmine.api import KeyRefusedError, RedmineClient, RedmineError
from mcpkit.redmine.config import USER_CLAIMS
from mcpkit.redmine.tools import RedmineContext
from mcpkit.redmine.xml import Formatter
from mcpkit.server import HttpRefusal

logger = logging.getLogger("mcpkit.redmine")

MAX_TOKENS = 1024
MAX_USERS = 256


class SignOnError(RedmineError):
    """A token's holder cannot act in Redmine: one line saying why."""


def token_of(headers: Mapping[str, str]) -> str | None:
    """The bearer token of a request, if it carries one."""
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SingleSignOn:
    """Token holders mapped to Redmine users, each acting through ``admin`` and the switch header."""

    def __init__(self, admin: RedmineClient, fmt: Formatter, claim: str = USER_CLAIMS[0]) -> None:
        if claim not in USER_CLAIMS:
            raise ValueError(f"the user claim must be one of {', '.join(USER_CLAIMS)}, not {claim!r}")
        self.admin = admin
        self.fmt = fmt
        self.claim = claim
        self._by_login: OrderedDict[str, RedmineContext] = OrderedDict()
        self._by_token: OrderedDict[str, RedmineContext] = OrderedDict()

    def identity(self, claims: Mapping[str, Any]) -> str:
        """The value of the configured claim, or :class:`SignOnError` naming it."""
        value = claims.get(self.claim)
        if not isinstance(value, str) or not value.strip():
            raise SignOnError(
                f"The token carries no {self.claim} claim, which this server maps to a Redmine user; "
                f"ask the identity provider's administrator to add it to access tokens for this server"
            )
        return value.strip()

    async def login_for(self, value: str) -> str:
        """The Redmine login the claim's value names: itself, or for ``email`` the active user with that address."""
        if self.claim != "email":
            return value
        found = await self.admin.get("users.json", what="the users", params={"name": value, "limit": 100})
        users = found.get("users") if isinstance(found, dict) else None
        wanted = value.casefold()
        logins = [
            str(u["login"])
            for u in users or []
            if isinstance(u, dict) and str(u.get("mail", "")).casefold() == wanted and u.get("login")
        ]
        if len(logins) != 1:
            raise SignOnError(
                f"No active Redmine user has the mail address {value} from the token's email claim"
                if not logins
                else f"Several Redmine users have the mail address {value}; map users by login instead"
            )
        return logins[0]

    def _context(self, login: str) -> RedmineContext:
        found = self._by_login.get(login)
        if found is None:
            found = RedmineContext(self.admin.as_user(login), self.fmt)
            self._by_login[login] = found
            while len(self._by_login) > MAX_USERS:
                self._by_login.popitem(last=False)
        else:
            self._by_login.move_to_end(login)
        return found

    async def admit(self, headers: Mapping[str, str], claims: Mapping[str, Any]) -> HttpRefusal | None:
        """The HTTP guard's check of a request whose token was accepted: ``None`` once its holder
        is known to act as their own active Redmine user, else the refusal (403 for the person,
        503 for this server's own set-up, 502 when Redmine fails)."""
        token = token_of(headers) or ""
        login = ""
        try:
            login = await self.login_for(self.identity(claims))
            context = self._context(login)
            user = await context.client.check_key()
        except SignOnError as exc:
            logger.info("refused a token: %s", exc)
            return HttpRefusal(403, f"{exc}.")
        except KeyRefusedError:
            logger.error("Redmine refuses REDMINE_ADMIN_API_KEY: single sign-on cannot act for anyone")
            return HttpRefusal(
                503,
                "Redmine refuses this server's administrator key (REDMINE_ADMIN_API_KEY); tell its operator.",
            )
        except RedmineError as exc:
            if exc.status == 412:
                logger.info("refused a token: no active Redmine user for it")
                return HttpRefusal(
                    403,
                    f"No active Redmine user has the login {login!r} named by the token's {self.claim} claim: "
                    "the account is unknown or locked; ask a Redmine administrator.",
                )
            return HttpRefusal(502, str(exc))
        if str(user.get("login", "")).casefold() != login.casefold():  # Redmine finds logins in any case
            logger.error(
                "REDMINE_ADMIN_API_KEY does not belong to a Redmine administrator: Redmine ignored "
                "X-Redmine-Switch-User, so no token holder is served"
            )
            return HttpRefusal(
                503,
                "This server's REDMINE_ADMIN_API_KEY does not belong to a Redmine administrator, so it "
                "cannot act as you; nothing was done. Tell its operator.",
            )
        digest = _digest(token)
        self._by_token[digest] = context
        self._by_token.move_to_end(digest)
        while len(self._by_token) > MAX_TOKENS:
            self._by_token.popitem(last=False)
        return None

    def for_token(self, token: str) -> RedmineContext:
        """The context :meth:`admit` found for ``token``; a token it did not admit is refused."""
        found = self._by_token.get(_digest(token))
        if found is None:
            raise SignOnError(
                "This request's token was not admitted by single sign-on; send the request again"
            )
        return found
