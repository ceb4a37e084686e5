"""The address checks of uploads from a URL: what may be fetched, for any input.

IP literals resolve without a network, so every private, loopback, link-local, shared and
multicast address is tried for real through the same resolver the tool uses."""

from __future__ import annotations

import ipaddress

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.from_url import checked, parsed

NOT_GLOBAL = [
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "100.64.0.0/10",
    "0.0.0.0/8",
    "224.0.0.0/4",
    "240.0.0.0/4",
]


def _check(url: str, hosts: frozenset[str] = frozenset()) -> tuple[str, ...]:
    return anyio.run(checked, url, hosts).ips


@given(
    st.sampled_from(NOT_GLOBAL).flatmap(
        lambda net: st.integers(0, ipaddress.ip_network(net).num_addresses - 1).map(
            lambda i: ipaddress.ip_network(net)[i]
        )
    )
)
def test_every_non_global_ipv4_address_is_refused(ip: ipaddress.IPv4Address) -> None:
    with pytest.raises(ValidationError, match="private, loopback or link-local"):
        _check(f"http://{ip}/file.txt")


@pytest.mark.parametrize(
    "host", ["[::1]", "[fe80::1]", "[fd00::5]", "[::ffff:127.0.0.1]", "[::ffff:10.1.2.3]", "[::]"]
)
def test_non_global_ipv6_addresses_are_refused(host: str) -> None:
    with pytest.raises(ValidationError, match="private, loopback or link-local"):
        _check(f"https://{host}:8443/x")


def test_a_named_host_is_allowed_and_a_public_address_passes() -> None:
    assert _check("http://127.0.0.1:9/x", frozenset({"127.0.0.1"})) == ("127.0.0.1",)
    assert _check("https://93.184.215.14/report.pdf") == ("93.184.215.14",)


@given(st.text(max_size=60))
def test_any_text_is_an_address_or_refused_in_one_line(text: str) -> None:
    try:
        host, port = parsed(text)
    except ValidationError as exc:
        assert "\n" not in str(exc)
        return
    assert host and 0 <= port <= 65535
    assert "http" in text.lower()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "http://u:p@example.com/",
        "http://a@example.com/",
        "//example.com/x",
        "http://example.com:99999/",
    ],
)
def test_other_schemes_credentials_and_bad_ports_are_refused(url: str) -> None:
    with pytest.raises(ValidationError):
        parsed(url)
