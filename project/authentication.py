"""API authentication: hashed API tokens (django-rest-knox), ``Authorization: Token …``.

Kept apart from ``project.api`` because DRF imports authentication classes
while it loads its own views."""

from knox.auth import TokenAuthentication as KnoxTokenAuthentication


class TokenAuthentication(KnoxTokenAuthentication):
    """Knox token authentication; listed first so an anonymous call gets 401 (SPEC §2)."""
