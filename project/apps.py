from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """Project-wide pieces: API conventions, commands such as create_api_token."""

    name = "project"
    verbose_name = "Hermes Ops"
