"""The OAuth pieces that need no authorization server: the challenge header, audience comparison
and the options' own checks (the flows themselves are in test_oauth.py, against a real one)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.server import HttpOptions, OAuthOptions, TokenRefusedError
from mcpkit.server._oauth import _same_resource, challenge, metadata_paths

OPTIONS = OAuthOptions(
    issuer="https://as.example", resource="https://mcp.example/team/mcp", scopes=("mcp:tools",)
)


@given(st.text())
def test_any_refusal_reason_makes_one_latin1_header_whose_description_reads_back(reason: str) -> None:
    header = challenge(OPTIONS, TokenRefusedError(reason))
    header.encode("latin-1")
    assert "\n" not in header and "\r" not in header
    found = re.search(r'error_description="((?:[^"\\]|\\.)*)"', header)
    assert found is not None
    unescaped = re.sub(r"\\(.)", r"\1", found.group(1))
    assert unescaped == "".join(c if 0x20 <= ord(c) < 0x7F else "?" for c in reason)
    assert header.endswith(
        'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/team/mcp"'
    )


def test_without_a_token_the_challenge_has_no_error_code() -> None:
    assert challenge(OPTIONS) == (
        'Bearer scope="mcp:tools", '
        'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/team/mcp"'
    )
    assert metadata_paths(OPTIONS) == {
        "/.well-known/oauth-protected-resource/team/mcp",
        "/.well-known/oauth-protected-resource",
    }


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://mcp.example/mcp", "https://MCP.example:443/mcp/", True),
        ("http://127.0.0.1:80/mcp", "http://127.0.0.1/mcp", True),
        ("https://mcp.example/mcp", "http://mcp.example/mcp", False),
        ("https://mcp.example/mcp", "https://mcp.example/other", False),
        ("https://mcp.example/mcp", "https://mcp.example.evil/mcp", False),
        ("https://mcp.example:99999/mcp", "https://mcp.example/mcp", False),
    ],
)
def test_audiences_compare_as_urls(a: str, b: str, same: bool) -> None:
    assert _same_resource(a, b) is same


def test_options_refuse_what_cannot_work() -> None:
    with pytest.raises(ValueError, match="no http"):
        OAuthOptions(issuer="as.example", resource="https://mcp.example/mcp")
    with pytest.raises(ValueError, match="both"):
        OAuthOptions(issuer="https://as.example", resource="https://mcp.example/mcp", client_id="c")
    with pytest.raises(ValueError, match="not both"):
        HttpOptions(bearer_token="t", oauth=OPTIONS)


def test_cli_flags_become_options_or_one_line_naming_the_flag() -> None:
    bind = ("127.0.0.1", 8123, "/mcp")
    assert OAuthOptions.from_flags(None, None, None, None, None, served=bind) is None
    made = OAuthOptions.from_flags("https://as.example", None, ["mcp:tools"], None, None, served=bind)
    assert made is not None and made.resource == "http://127.0.0.1:8123/mcp" and made.scopes == ("mcp:tools",)
    made = OAuthOptions.from_flags(
        "https://as.example", "https://mcp.example/mcp", None, "rs", "s", served=("0.0.0.0", 1, "/mcp")
    )
    assert made is not None and (made.client_id, made.client_secret) == ("rs", "s")
    issuer = "https://as.example"
    refused: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        ((None, "https://mcp.example/mcp", None, None, None), {"served": bind}, "need --oauth-issuer"),
        ((issuer, None, None, None, None), {"served": None}, "--transport http"),
        ((issuer, None, None, None, None), {"served": ("0.0.0.0", 1, "/mcp")}, "--oauth-resource"),
        ((issuer, None, None, None, None), {"served": bind, "token": "t"}, "not both"),
        ((issuer, None, None, "rs", None), {"served": bind}, "MCPKIT_OAUTH_CLIENT_SECRET"),
        (("as.example", None, None, None, None), {"served": bind}, "no http"),
    ]
    for args, kwargs, why in refused:
        with pytest.raises(ValueError, match=re.escape(why)):
            OAuthOptions.from_flags(*args, **kwargs)
