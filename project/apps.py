"""The project's app and the names the admin shows for the third-party apps it uses."""

from axes.apps import AppConfig as AxesAppConfig
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProjectConfig(AppConfig):
    """Project-wide pieces: API conventions, API tokens in the admin, commands such as create_api_token."""

    # project/apps.py holds three AppConfig classes (this one, django-axes' and ours for it): without
    # ``default`` Django picks none and the admin titles the app "Project", untranslated.
    default = True
    name = "project"
    verbose_name = _("Hermes Ops")

    def ready(self):
        from django.db.backends.signals import connection_created

        from project.wal import on_connection_created

        # SQLite's WAL checkpoints run beside the requests, not inside one (issue 14).
        connection_created.connect(on_connection_created, dispatch_uid="project.wal")


class AxesConfig(AxesAppConfig):
    """django-axes (log-in throttling) under a name ops read in their language."""

    verbose_name = _("Log-in throttling")


# The names django-axes gives its models, in our catalogue: it ships no Chinese one.
THIRD_PARTY_NAMES = (
    _("access attempt"),
    _("access attempts"),
    _("access failure"),
    _("access failures"),
    _("access log"),
    _("access logs"),
)
