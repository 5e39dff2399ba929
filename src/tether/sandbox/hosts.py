"""Which network hosts a sandboxed run may reach: parsing and matching.

A host entry is ``name``, ``name:port``, ``*.domain`` or ``*.domain:port``
(IPv6 literals in brackets: ``[::1]:8080``). Without a port an entry allows
every port of that host. Model endpoints come from base URLs (``https://host``
is ``host:443``), so they allow exactly the port the harness talks to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_NAME = re.compile(rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*\.?")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]+")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


class HostError(ValueError):
    """An entry that is not a host, ``host:port`` or ``*.domain``."""


@dataclass(frozen=True, order=True)
class Host:
    """One allowed host; ``port`` None allows every port."""

    name: str
    port: int | None = None

    @property
    def wildcard(self) -> bool:
        return self.name.startswith("*.")

    @property
    def loopback(self) -> bool:
        return is_loopback(self.name)

    def allows(self, name: str, port: int) -> bool:
        name = name.lower().rstrip(".")
        if self.port is not None and self.port != port:
            return False
        if self.wildcard:
            return name.endswith(self.name[1:])
        return name == self.name

    def __str__(self) -> str:
        shown = f"[{self.name}]" if ":" in self.name else self.name
        return shown if self.port is None else f"{shown}:{self.port}"


def is_loopback(name: str) -> bool:
    return name in LOOPBACK_NAMES or name.startswith("127.")


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise HostError(f"{entry!r} has no valid port ({text!r}: want 1-65535)")
    return int(text)


def parse_host(entry: str) -> Host:
    """``entry`` as a ``Host``; ``HostError`` saying what is wrong otherwise."""
    text = entry.strip()
    if not text or "/" in text or "@" in text or any(c.isspace() for c in text):
        raise HostError(f"{entry!r} is not a host name (want host, host:port or *.domain)")
    if text.startswith("["):
        inner, bracket, rest = text[1:].partition("]")
        if not bracket or not _IPV6.fullmatch(inner) or (rest and not rest.startswith(":")):
            raise HostError(f"{entry!r} is not a valid [IPv6]:port entry")
        return Host(inner.lower(), _port(rest[1:], entry) if rest else None)
    name, colon, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    if not colon:
        name, port = text, ""
    if ":" in name:
        if _IPV6.fullmatch(name):
            return Host(name.lower())
        raise HostError(f"{entry!r}: write an IPv6 address in brackets, [addr]:port")
    if not _NAME.fullmatch(name):
        raise HostError(f"{entry!r} is not a host name (want host, host:port or *.domain)")
    return Host(name.lower().rstrip("."), _port(port, entry) if colon else None)


def host_of_url(url: str) -> Host | None:
    """The host and port a base URL talks to; None when it is no http(s) URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = 443 if parts.scheme == "https" else 80
    return Host(parts.hostname.lower().rstrip("."), port or default)


def allowed(hosts: tuple[Host, ...], name: str, port: int) -> bool:
    return any(host.allows(name, port) for host in hosts)
