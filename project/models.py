"""API tokens as the admin shows them (SPEC §2): django-rest-knox's model under
a name of ours, so the admin can list and issue them without ever showing a
digest (:mod:`project.admin`)."""

from django.utils.translation import gettext_lazy as _
from knox.models import AuthToken


class ApiToken(AuthToken):
    """A knox API token (a proxy: no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self):
        return self.masked_key

    @property
    def masked_key(self) -> str:
        """The first 4 characters of the token and ``…``: enough to tell tokens apart."""
        return f"{self.token_key[:4]}…"
