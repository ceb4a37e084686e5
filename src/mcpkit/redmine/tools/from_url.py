"""Files fetched from a web address for an upload: size-limited, and never from a private address.

A model that says "attach https://example.com/report.pdf" should not have to download the file
itself and send it back as base64. But a server that fetches any address it is given lets whoever
writes a prompt read what only the server can reach: ``http://127.0.0.1:8080/admin``, a cloud's
metadata service at ``169.254.169.254``, a database on the office network. So, as the fetch-style
tools of other MCP servers do (jztan/redmine-mcp-server's ``source_url``, for one):

- only ``http`` and ``https``, and no user name or password in the address;
- the host is resolved here and refused when any of its addresses is not a global one (private,
  loopback, link-local, shared, reserved, multicast, unspecified); the request then goes to the
  address that was checked (the TLS name stays the host's), so a second DNS answer cannot swap in
  a private address between the check and the connection;
- redirects are followed by hand, each hop checked the same way, at most :data:`MAX_REDIRECTS`;
- a declared ``Content-Length`` over the limit is refused before the body is read, and the body
  is streamed and dropped as soon as it passes the limit;
- no proxy from the environment and no Redmine key: the request carries nothing of the server's.

``REDMINE_PRIVATE_URL_HOSTS`` names hosts whose private addresses may be fetched all the same (a
file server on the office network, the tests' own local server); off by default, and a redirect
from such a host to another private one is still refused.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Collection
from dataclasses import dataclass
from email.message import Message
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit

import anyio

from mcpkit import __version__
from mcpkit.errors import ValidationError
from mcpkit.redmine.api import read_capped
from mcpkit.redmine.config import PRIVATE_HOSTS_SETTING

if TYPE_CHECKING:
    import httpx2

MAX_REDIRECTS = 5
"""Redirects followed for one address, each checked like the first."""
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class _Address:
    """One hop: the address as given, its host, and the checked IPs the request may go to."""

    url: str
    host: str
    port: int
    ips: tuple[str, ...]


def _global(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``ip`` is reachable from the internet: not private, loopback, link-local, ... ."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def parsed(url: str) -> tuple[str, int]:
    """Host and port of an address an upload may fetch; anything else refused in one line."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ValidationError(f"url is not a web address: {url[:80]!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("url must be an http or https address such as https://example.com/report.pdf")
    if parts.username is not None or parts.password is not None:
        raise ValidationError("url must not carry a user name or password")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


async def checked(url: str, private_hosts: Collection[str]) -> _Address:
    """Resolve the address's host and pick the IP to connect to; refuse a non-global one."""
    host, port = parsed(url)
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise ValidationError(f"url: the host {host} cannot be resolved") from None
    ips = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not ips:
        raise ValidationError(f"url: the host {host} has no address")
    if host.lower() not in private_hosts and not all(_global(ip) for ip in ips):
        raise ValidationError(
            f"url: {host} is a private, loopback or link-local address, which uploads may not fetch "
            f"from; an operator can allow the host in {PRIVATE_HOSTS_SETTING}"
        )
    return _Address(url, host, port, tuple(dict.fromkeys(str(ip) for ip in ips)))


def _pinned_request(client: httpx2.AsyncClient, hop: _Address, ip: str) -> httpx2.Request:
    """A GET sent to the checked IP, with the host's name in ``Host`` and in TLS (SNI and certificate)."""
    import httpx2

    url = httpx2.URL(hop.url.strip())
    netloc = url.netloc.decode("ascii")
    request = client.build_request(
        "GET",
        url.copy_with(host=ip),
        headers={"Host": netloc, "User-Agent": f"mcpkit-redmine/{__version__}", "Accept": "*/*"},
    )
    if url.scheme == "https":
        request.extensions["sni_hostname"] = hop.host
    return request


async def _send(client: httpx2.AsyncClient, hop: _Address) -> httpx2.Response:
    """The answer of the first checked address that takes the connection (``localhost`` may be
    ``::1`` and ``127.0.0.1``, a server listening on one of them)."""
    import httpx2

    for ip in hop.ips[:-1]:
        try:
            return await client.send(_pinned_request(client, hop, ip), stream=True)
        except httpx2.ConnectError:
            continue
    return await client.send(_pinned_request(client, hop, hop.ips[-1]), stream=True)


def _name_from(url: str, disposition: str | None) -> str:
    """A file name from the last part of the address's path, else from ``Content-Disposition``."""
    tail = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if tail.strip("._"):
        return tail
    if disposition:
        message = Message()
        message["content-disposition"] = disposition
        name = message.get_filename()
        if name:
            return name
    return "download"


async def fetch(
    url: str, *, max_bytes: int, private_hosts: Collection[str] = (), timeout: float = 30.0
) -> tuple[bytes, str]:
    """The bytes at ``url`` and a file name for them, or a one-line :class:`ValidationError`.

    ``timeout`` bounds the whole fetch, redirects and body together, so a server that drips
    its answer is cut at it too."""
    import httpx2

    limit = f"{max_bytes // (1024 * 1024)} MB" if max_bytes >= 1024 * 1024 else f"{max_bytes} bytes"
    allowed = frozenset(h.lower() for h in private_hosts)
    current = url.strip()
    try:
        with anyio.fail_after(timeout):
            async with httpx2.AsyncClient(follow_redirects=False, trust_env=False, timeout=timeout) as client:
                for _ in range(MAX_REDIRECTS + 1):
                    hop = await checked(current, allowed)
                    response = await _send(client, hop)
                    try:
                        if response.status_code in _REDIRECTS and response.headers.get("location"):
                            current = urljoin(current, response.headers["location"])
                            continue
                        if response.status_code >= 400:
                            raise ValidationError(
                                f"url: {hop.host} answered {response.status_code} "
                                f"{response.reason_phrase}".rstrip()
                            )
                        declared = response.headers.get("content-length", "")
                        if declared.isdigit() and int(declared) > max_bytes:
                            raise ValidationError(
                                f"url: the file has {int(declared)} bytes, more than the {limit} "
                                "an upload may carry; nothing was read"
                            )
                        too_large = ValidationError(
                            f"url: the file is larger than the {limit} an upload may carry; "
                            "reading stopped there and nothing was uploaded"
                        )
                        body = await read_capped(response, max_bytes, too_large)
                        return body, _name_from(current, response.headers.get("content-disposition"))
                    finally:
                        await response.aclose()
                raise ValidationError(
                    f"url: more than {MAX_REDIRECTS} redirects; give the file's own address"
                )
    except TimeoutError:
        raise ValidationError(f"url: no complete answer within {timeout:g} seconds") from None
    except httpx2.HTTPError as exc:
        reason = re.sub(r"\s+", " ", str(exc) or type(exc).__name__)[:200]
        raise ValidationError(f"url: the file could not be fetched: {reason}") from None
