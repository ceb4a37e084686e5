"""Redmine server configuration, read once from the environment.

Every problem is found here, before any MCP traffic, and reported as one line naming the
variable to fix (the CLI turns it into exit code 2). The API key is validated for shape only;
whether Redmine accepts it is checked against ``/users/current.json`` on first use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from mcpkit.errors import ConfigError, ValidationError
from mcpkit.tools.coerce import as_bool, as_int

DEFAULT_TIMEOUT = 30.0
DEFAULT_TEXT_LIMIT = 500  # excerpt of each long text in a list; one entity shows its text in full
DEFAULT_ANSWER_LIMIT = 150_000  # bytes as sent of one entity's answer; read_text pages the rest
MIN_ANSWER_LIMIT = 4_000
USER_CLAIMS = ("preferred_username", "email", "sub")
"""The OAuth token claims that may name a Redmine user (single sign-on); the first is the default:
``preferred_username`` and ``sub`` carry the login, ``email`` the user's mail address."""
PRIVATE_HOSTS_SETTING = "REDMINE_PRIVATE_URL_HOSTS"
"""Hosts an upload from a web address may fetch from even at a private address (tools/from_url.py)."""
# Redmine generates 40 hex characters; pinned keys may differ, but a key must be header-safe.
_KEY_SHAPE = re.compile(r"^[A-Za-z0-9_-]{8,128}$")


class RedmineConfigError(ConfigError):
    """The environment does not describe a usable Redmine connection."""


@dataclass(frozen=True)
class RedmineConfig:
    """Connection and behaviour settings; ``repr`` never shows the key."""

    url: str
    api_key: str = field(repr=False)
    read_only: bool = False
    timeout: float = DEFAULT_TIMEOUT
    verify_ssl: bool = True
    ca_bundle: Path | None = None
    attachments_dir: Path | None = None
    text_limit: int = DEFAULT_TEXT_LIMIT
    answer_limit: int = DEFAULT_ANSWER_LIMIT
    tools: frozenset[str] = frozenset()
    private_url_hosts: frozenset[str] = frozenset()
    """``REDMINE_PRIVATE_URL_HOSTS``: hosts whose private addresses an upload from a URL may fetch."""
    admin_api_key: str = field(default="", repr=False)
    """``REDMINE_ADMIN_API_KEY``: an administrator's key that single sign-on acts through."""
    user_claim: str = USER_CLAIMS[0]
    """``REDMINE_OAUTH_USER_CLAIM``: the OAuth token claim that names its holder's Redmine user."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], *, require_key: bool = True) -> RedmineConfig:
        """Read ``REDMINE_*`` variables from ``environ``; raise :class:`RedmineConfigError` naming the bad one.

        For the CLI, the one reader of the process environment (``os.environ``); the library
        never reads it itself, so a server built in a test or another program is configured by
        the values it is given, not by whatever its process inherited.

        ``require_key=False`` is the team HTTP mode: each request may bring its own key, so
        ``REDMINE_API_KEY`` may be unset (``api_key`` is then empty); a key that is set is still checked.
        """
        env = environ
        key_given = bool(env.get("REDMINE_API_KEY", "").strip())
        return cls(
            url=_url(env),
            api_key=_api_key(env) if require_key or key_given else "",
            read_only=_flag(env, "REDMINE_READ_ONLY", False),
            timeout=_timeout(env),
            verify_ssl=_flag(env, "REDMINE_VERIFY_SSL", True),
            ca_bundle=_existing_path(env, "REDMINE_CA_BUNDLE", want_dir=False),
            attachments_dir=_existing_path(env, "REDMINE_ATTACHMENTS_DIR", want_dir=True),
            text_limit=_text_limit(env),
            answer_limit=_answer_limit(env),
            tools=frozenset(
                part.strip().lower() for part in env.get("REDMINE_TOOLS", "").split(",") if part.strip()
            ),
            private_url_hosts=frozenset(
                part.strip().lower() for part in env.get(PRIVATE_HOSTS_SETTING, "").split(",") if part.strip()
            ),
            user_claim=_user_claim(env),
            admin_api_key=(
                _api_key(env, "REDMINE_ADMIN_API_KEY") if env.get("REDMINE_ADMIN_API_KEY", "").strip() else ""
            ),
        )


def _url(env: Mapping[str, str]) -> str:
    name = "REDMINE_URL" if env.get("REDMINE_URL", "").strip() else "REDMINE_HOST"
    raw = env.get(name, "").strip()
    if not raw:
        raise RedmineConfigError(
            "REDMINE_URL is not set: set it to your Redmine address, for example https://redmine.example.com"
        )
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RedmineConfigError(
            f"{name} must be an http or https address such as https://redmine.example.com"
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise RedmineConfigError(
            f"{name} must not contain credentials, a query or a fragment; use REDMINE_API_KEY"
        )
    return raw.rstrip("/")


def _api_key(env: Mapping[str, str], name: str = "REDMINE_API_KEY") -> str:
    raw = env.get(name)
    if raw is None or not raw.strip():
        raise RedmineConfigError(
            f"{name} is not set: copy the key from My account, API access key, in Redmine"
        )
    key = raw.strip()
    if not _KEY_SHAPE.match(key):
        raise RedmineConfigError(
            f"{name} is malformed: expected the key from My account, API access key, "
            "8 to 128 characters of letters, digits, - or _"
        )
    return key


def _user_claim(env: Mapping[str, str]) -> str:
    raw = env.get("REDMINE_OAUTH_USER_CLAIM", "").strip()
    if not raw:
        return USER_CLAIMS[0]
    if raw not in USER_CLAIMS:
        raise RedmineConfigError(
            f"REDMINE_OAUTH_USER_CLAIM must be one of {', '.join(USER_CLAIMS)}, got {raw[:40]!r}"
        )
    return raw


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return as_bool(raw)
    except ValidationError:
        raise RedmineConfigError(f"{name} must be true or false, got {raw[:20]!r}") from None


def _timeout(env: Mapping[str, str]) -> float:
    raw = env.get("REDMINE_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise RedmineConfigError(
            f"REDMINE_TIMEOUT must be a number of seconds between 0 and 3600, got {raw[:20]!r}"
        )
    return value


def _text_limit(env: Mapping[str, str]) -> int:
    raw = env.get("REDMINE_TEXT_LIMIT", "").strip()
    if not raw:
        return DEFAULT_TEXT_LIMIT
    try:
        return as_int(raw, minimum=100, maximum=1_000_000)
    except ValidationError:
        raise RedmineConfigError(
            f"REDMINE_TEXT_LIMIT must be a whole number of characters from 100 to 1000000, got {raw[:20]!r}"
        ) from None


def _answer_limit(env: Mapping[str, str]) -> int:
    raw = env.get("REDMINE_ANSWER_LIMIT", "").strip()
    if not raw:
        return DEFAULT_ANSWER_LIMIT
    try:
        return as_int(raw, minimum=MIN_ANSWER_LIMIT, maximum=10_000_000)
    except ValidationError:
        raise RedmineConfigError(
            f"REDMINE_ANSWER_LIMIT must be a whole number of bytes from {MIN_ANSWER_LIMIT} to 10000000, "
            f"got {raw[:20]!r}"
        ) from None


def _existing_path(env: Mapping[str, str], name: str, *, want_dir: bool) -> Path | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    path = Path(raw).expanduser()
    if want_dir and not path.is_dir():
        raise RedmineConfigError(f"{name} must name an existing directory, {raw!r} is not one")
    if not want_dir and not path.is_file():
        raise RedmineConfigError(f"{name} must name an existing CA certificate file, {raw!r} is not one")
    return path.resolve()
