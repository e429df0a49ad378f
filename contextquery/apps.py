from django.apps import AppConfig


class ContextqueryConfig(AppConfig):
    """Runs, visits, logs, tokens and the internal context endpoints (SPEC §4)."""

    name = "contextquery"
    verbose_name = "Runs and context query"
