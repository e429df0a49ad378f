"""The client address behind a reverse proxy (issue 14, docs/deploy.md).

Behind nginx every request arrives from nginx's address. The real client's
address is taken from ``X-Real-IP`` only when the peer (``REMOTE_ADDR``) is
one of ``HERMES_OPS_TRUSTED_PROXIES``: nginx overwrites that header with the
address it saw, so a caller can never choose the address the app checks (the
``/internal/`` and ``/metrics`` client lists, log-in throttling). Without
trusted proxies (the default) no header is read at all.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings

from project.networks import address_allowed

#: The header nginx sets from ``$remote_addr`` (``proxy_set_header X-Real-IP $remote_addr``).
REAL_IP_META_KEY = "HTTP_X_REAL_IP"


def client_address(*, peer: str | None, real_ip: str | None) -> str | None:
    """The address to treat as the client's: ``real_ip`` (``X-Real-IP``) when
    ``peer`` is a trusted proxy and ``real_ip`` is one valid IP address, else
    ``peer``. Pure apart from reading ``HERMES_OPS_TRUSTED_PROXY_NETWORKS``."""
    networks = settings.HERMES_OPS_TRUSTED_PROXY_NETWORKS
    if not networks or real_ip is None or not address_allowed(peer, networks):
        return peer
    candidate = real_ip.strip()
    try:
        ipaddress.ip_address(candidate.split("%", 1)[0])
    except ValueError:
        return peer
    return candidate


class TrustedProxyMiddleware:
    """Put the client's address in ``REMOTE_ADDR`` (see :func:`client_address`);
    first in the stack, so every later check and log sees the same address.
    The peer's own address stays in ``request.META["HERMES_PEER_ADDR"]``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        peer = request.META.get("REMOTE_ADDR")
        request.META["HERMES_PEER_ADDR"] = peer
        request.META["REMOTE_ADDR"] = client_address(peer=peer, real_ip=request.META.get(REAL_IP_META_KEY))
        return self.get_response(request)


def request_client_address(request) -> str | None:
    """django-axes' ``AXES_CLIENT_IP_CALLABLE``: the address :class:`TrustedProxyMiddleware` settled on."""
    return request.META.get("REMOTE_ADDR")
