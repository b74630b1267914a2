"""Outbound requests in live mode reach only public addresses: checked on the address actually connected to."""

from __future__ import annotations

import errno
import ipaddress
import socket

from yarl import URL

_LOCAL_NAMES = ("localhost", ".localhost", ".local", ".internal", ".home.arpa")


class BlockedAddress(OSError):
    """Raised instead of connecting; aiohttp reports it as a connection error, recorded on the attempt."""


def public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1 on the wire
    return ip.is_global and not ip.is_multicast


def guarded_socket(addr_info: tuple) -> socket.socket:
    """aiohttp's socket factory for live mode: it sees every resolved address just before connecting,
    so a DNS answer that changes between a check and the connection (rebinding) is still caught."""
    family, type_, proto, _, sockaddr = addr_info
    if not public(sockaddr[0]):
        # errno and strerror, so aiohttp's connection error carries the reason into the attempt log.
        raise BlockedAddress(errno.EACCES, f"{sockaddr[0]} is not a public address; live mode never connects to it")
    return socket.socket(family=family, type=type_, proto=proto)


def refusal(url: str, livemode: bool) -> tuple[str, str] | None:
    """Why an endpoint URL is refused at registration, as (code, message), or None.

    The connection-time guard is the real protection; this only tells the merchant early."""
    try:
        parsed = URL(url)
    except ValueError:  # a host name IDNA cannot encode (UnicodeError), a port out of range
        return "invalid_url", "`url` must be an absolute http(s) URL with a valid host name."
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return "invalid_url", "`url` must be an absolute http(s) URL."
    if parsed.user is not None or parsed.password is not None:
        return "invalid_url", "`url` must not carry credentials."
    if not livemode:
        return None
    if parsed.scheme != "https":
        return "url_https_required", "Live-mode endpoints must use https."
    host = parsed.host.lower().rstrip(".")
    try:
        is_public = public(host)
    except ValueError:  # a name, not an address literal
        is_public = not (host == "localhost" or host.endswith(_LOCAL_NAMES))
    if not is_public:
        return "url_not_public", "Live-mode endpoints must be on a public address."
    return None
