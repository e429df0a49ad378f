"""Client address checks for the endpoints only the instance's own host may call
(``/metrics``, SPEC §8; the same rule as ``/internal/``, SPEC §4.5)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable


def address_allowed(address: str | None, networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    """Whether ``address`` (``REMOTE_ADDR``) lies inside one of ``networks``.

    An IPv6 zone (``fe80::1%eth0``) is ignored and an IPv4-mapped IPv6
    address (``::ffff:127.0.0.1``) counts as its IPv4 address. A missing or
    malformed address is never allowed.
    """
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return any(ip in network for network in networks)
