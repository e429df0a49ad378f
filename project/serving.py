"""Where this server listens, for the addresses it hands out and prints (SPEC §4.5, issue 13).

``HERMES_CONTEXT_QUERY_BASE_URL`` wins when it is set. Unset, the address is
the one the server was started on:

* in a request, the WSGI ``SERVER_NAME`` and ``SERVER_PORT`` — gunicorn and
  runserver fill them from the socket they listen on, not from the client's
  ``Host`` header — so ``contextQuery.base_url`` always names the instance that
  issued the token, on whatever port it was started;
* outside a request (``loaddemo``, ``ensure_admin``), the address ``make run``
  recorded in ``var/server-url`` when it checked that its port was free.

A wildcard bind (``0.0.0.0``, ``::``) is reached on loopback, where the agent
side and the internal endpoints expect it.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

from django.conf import settings

#: Where ``make run`` records the address it serves on (inside ``HERMES_OPS_VAR_DIR``).
SERVER_URL_FILE = "server-url"
#: The address when nothing better is known.
FALLBACK_URL = "http://127.0.0.1:8000"

_WILDCARDS = {"", "0.0.0.0", "::", "[::]", "*"}


def listen_url(host: str, port: int | str, scheme: str = "http") -> str:
    """``http://host:port`` for a server bound to ``host``/``port``; a wildcard host
    becomes the loopback address of its family and an IPv6 literal gets brackets."""
    host = (host or "").strip()
    if host in _WILDCARDS:
        host = "[::1]" if host in ("::", "[::]") else "127.0.0.1"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def request_base_url(meta: dict) -> str:
    """The address of the server that answers the request whose WSGI environ is ``meta``."""
    port = meta.get("SERVER_PORT") or ""
    if not str(port).isdigit():
        return recorded_base_url() or FALLBACK_URL
    return listen_url(str(meta.get("SERVER_NAME") or ""), port, meta.get("wsgi.url_scheme") or "http")


def server_url_path() -> Path:
    return Path(settings.VAR_DIR) / SERVER_URL_FILE


def recorded_base_url() -> str | None:
    """The address ``make run`` recorded, or None."""
    try:
        text = server_url_path().read_text().strip()
    except OSError:
        return None
    return text or None


def record_base_url(url: str) -> None:
    """Record ``url`` as the address this installation serves on (``make run``)."""
    path = server_url_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(url + "\n")


def base_url(meta: dict | None = None) -> str:
    """The address the agent side and every printed hint use: ``BASE_URL`` when set,
    else the serving request's own address (``meta``), else the recorded one."""
    configured = settings.HERMES_CONTEXT_QUERY.get("BASE_URL")
    if configured:
        return configured
    if meta is not None:
        return request_base_url(meta)
    return recorded_base_url() or FALLBACK_URL


def port_free(host: str, port: int) -> bool:
    """Whether a server could bind ``host``/``port`` now (nothing listens there)."""
    try:
        family = socket.AF_INET6 if ipaddress.ip_address(host.strip("[]")).version == 6 else socket.AF_INET
    except ValueError:
        family = socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]") or "0.0.0.0", int(port)))
        except OSError:
            return False
    return True
