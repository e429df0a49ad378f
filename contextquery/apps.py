from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ContextqueryConfig(AppConfig):
    """Runs, visits, logs, tokens and the internal context endpoints (SPEC §4)."""

    name = "contextquery"
    verbose_name = _("Runs and context query")
