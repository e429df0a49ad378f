"""API authentication: hashed API tokens (django-rest-knox), ``Authorization: Token …``.

Kept apart from ``project.api`` because DRF imports authentication classes
while it loads its own views."""

from django.utils.translation import gettext as _
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from rest_framework import exceptions
from rest_framework.authentication import get_authorization_header


class TokenAuthentication(KnoxTokenAuthentication):
    """Knox token authentication; listed first so an anonymous call gets 401 (SPEC §2).

    An ``Authorization`` header of another scheme (``Bearer …``, ``Basic …``) is
    refused saying that the scheme is ``Token``, rather than DRF's "credentials
    were not provided", which sends a client with a valid token looking elsewhere.
    """

    def authenticate(self, request):
        header = get_authorization_header(request).split()
        if header and header[0].lower() != self.authenticate_header(request).lower().encode():
            scheme = header[0].decode("latin-1")[:20]
            raise exceptions.AuthenticationFailed(
                _("The Authorization scheme is Token: send 'Authorization: Token <token>', not %(scheme)s.")
                % {"scheme": scheme}
            )
        return super().authenticate(request)
