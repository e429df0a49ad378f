"""The one reading of a ``host[:port]`` allow-list (``HERMES_TOOL_ALLOWED_HOSTS``,
SPEC §7.1): settings validate it at start-up, the tool gateway matches against it.

Pure, standard library only (settings import it before Django is set up).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class HostRule:
    """One entry: ``host`` lower-cased (an IPv6 address without brackets),
    ``port`` or None for any port, and whether ``host`` is an IP literal."""

    host: str
    port: int | None

    @property
    def is_address(self) -> bool:
        return ip_literal(self.host) is not None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address when it is one (brackets and a zone allowed), else None."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def parse_host_rule(entry: str) -> HostRule:
    """``"orders.internal"``, ``"127.0.0.1:9000"`` or ``"[::1]:8080"`` → a :class:`HostRule`.

    Raises ``ValueError`` naming the entry when it is not a host with an optional port.
    """
    text = entry.strip()
    try:
        parts = urlsplit("//" + text)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError(f"{entry!r} is not host[:port]") from None
    if not host or parts.username or parts.password or parts.path or parts.query or parts.fragment:
        raise ValueError(f"{entry!r} is not host[:port]")
    address = ip_literal(host)
    return HostRule(host=str(address) if address is not None else host.lower().rstrip("."), port=port)


def parse_host_list(entries) -> list[HostRule]:
    """Every entry of ``entries`` (an iterable of strings) parsed; ``ValueError`` names the first bad one."""
    return [parse_host_rule(entry) for entry in entries if entry.strip()]
