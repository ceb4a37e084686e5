"""Single sign-on's input handling without a network: the claim setting, the claim read from a token,
what a request may send, and the set-ups the server refuses to start with.

The whole flow (a real OpenID Connect provider, the real Redmine, the MCP Inspector) runs in
tests/integration/redmine/test_redmine_sso.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.config import USER_CLAIMS, RedmineConfig, RedmineConfigError
from mcpkit.redmine.keys import KeyedClients, request_key
from mcpkit.redmine.server import build
from mcpkit.redmine.sso import SignOnError, SingleSignOn
from mcpkit.redmine.xml import Formatter
from mcpkit.server import OAuthOptions, ServerOptions

URL = "http://redmine.invalid"
KEY = "a" * 40


@given(st.text(max_size=40))
def test_the_user_claim_setting_is_one_of_the_known_claims_or_refused_in_one_line(raw: str) -> None:
    env = {"REDMINE_URL": URL, "REDMINE_API_KEY": KEY, "REDMINE_OAUTH_USER_CLAIM": raw}
    try:
        claim = RedmineConfig.from_environ(env).user_claim
    except RedmineConfigError as exc:
        assert raw.strip() not in USER_CLAIMS and raw.strip()
        assert "REDMINE_OAUTH_USER_CLAIM" in str(exc) and "\n" not in str(exc)
        return
    assert claim == (raw.strip() or "preferred_username")


def test_the_admin_key_is_checked_for_shape_and_never_shown() -> None:
    env = {"REDMINE_URL": URL, "REDMINE_API_KEY": KEY}
    config = RedmineConfig.from_environ({**env, "REDMINE_ADMIN_API_KEY": "b" * 40})
    assert config.admin_api_key == "b" * 40 and "b" * 40 not in repr(config)
    with pytest.raises(RedmineConfigError, match="REDMINE_ADMIN_API_KEY is malformed"):
        RedmineConfig.from_environ({**env, "REDMINE_ADMIN_API_KEY": "not a key"})


claim_values = st.one_of(st.none(), st.text(max_size=20), st.integers(), st.lists(st.text(max_size=5)))


@given(st.sampled_from(USER_CLAIMS), st.dictionaries(st.sampled_from([*USER_CLAIMS, "aud"]), claim_values))
def test_a_token_names_its_user_by_the_configured_claim_or_is_refused_naming_it(
    claim: str, claims: dict[str, Any]
) -> None:
    sso = SingleSignOn(RedmineClient(RedmineConfig(url=URL, api_key=KEY)), Formatter(), claim)
    value = claims.get(claim)
    try:
        found = sso.identity(claims)
    except SignOnError as exc:
        assert not (isinstance(value, str) and value.strip())
        assert f"no {claim} claim" in str(exc) and "\n" not in str(exc)
        return
    assert isinstance(value, str) and found == value.strip() and found


def test_with_oauth_tokens_a_bearer_is_never_taken_for_a_key() -> None:
    headers = {"authorization": "Bearer eyJ.a.b"}
    assert request_key(headers) == "eyJ.a.b"  # the key-only team mode
    assert request_key(headers, bearer=False) is None
    assert request_key({**headers, "x-redmine-api-key": "k1"}, bearer=False) == "k1"
    base = RedmineClient(RedmineConfig(url=URL, api_key=KEY))
    sso = KeyedClients(base, Formatter(), SingleSignOn(base.for_key("b" * 40), Formatter()))
    with pytest.raises(SignOnError, match="not admitted"):  # never the configured key's user
        sso.for_request(headers)
    with pytest.raises(SignOnError, match="OAuth access token or your Redmine API key"):
        sso.for_request({})
    redmine_tokens = KeyedClients(base, Formatter(), redmine_tokens=True)
    client = redmine_tokens.for_request(headers).client
    assert (
        client.bearer and client.api_key == "eyJ.a.b" and client._auth()["Authorization"] == "Bearer eyJ.a.b"
    )
    assert "X-Redmine-API-Key" not in client._auth()


def _options(issuer: str) -> ServerOptions:
    oauth = OAuthOptions(issuer=issuer, resource="http://127.0.0.1:8000/mcp")
    return ServerOptions().with_http(stateless=True, oauth=oauth)


def test_single_sign_on_needs_an_admin_key_unless_redmine_issues_the_tokens() -> None:
    config = RedmineConfig(url=URL, api_key="")
    with pytest.raises(RedmineConfigError, match="REDMINE_ADMIN_API_KEY"):
        build(config, options=_options("https://sso.example.com/realms/team"), team=True)
    build(
        RedmineConfig(url=URL, api_key="", admin_api_key=KEY),
        options=_options("https://sso.example.com"),
        team=True,
    )
    build(config, options=_options(URL + "/"), team=True)  # Redmine's own OAuth: no admin key
