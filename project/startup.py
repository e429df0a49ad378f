"""Start-up guard of the entry points (``manage.py``, ``project.wsgi``,
``project.asgi``): a bad environment value stops the process with one line
naming the variable, not a traceback (SPEC §1)."""

import sys

from django.core.exceptions import ImproperlyConfigured


def settings_load_or_exit(*, exit_status: int) -> None:
    """Import the settings module now (``project.settings`` validates every
    environment value). On ``ImproperlyConfigured`` write ``Configuration
    error: <message>`` to stderr and exit with ``exit_status``."""
    from django.conf import settings

    try:
        _ = settings.INSTALLED_APPS  # the access imports and validates the settings
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"Configuration error: {exc}\n")
        sys.stderr.flush()
        raise SystemExit(exit_status) from None
