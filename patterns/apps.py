from django.apps import AppConfig


class PatternsConfig(AppConfig):
    """Error patterns: model, detection engine, API, admin and pages (SPEC §3)."""

    name = "patterns"
    verbose_name = "Error patterns"
