"""WSGI entry point (gunicorn project.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

from project.startup import settings_load_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
# 4 is gunicorn's "App failed to load": its master stops at once instead of
# respawning workers that would each fail the same way.
settings_load_or_exit(exit_status=4)
application = get_wsgi_application()
