"""``manage.py ensure_admin``: create an admin user when none exists (SPEC §6).

The password comes from ``HERMES_OPS_ADMIN_PASSWORD``; without it one is
generated and printed once. With a superuser already present nothing changes.
"""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the 'admin' superuser if no superuser exists, and say how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("HERMES_OPS_ADMIN_USERNAME", "admin"))

    def handle(self, *args, username, **options):
        user_model = get_user_model()
        if user_model.objects.filter(is_superuser=True).exists():
            self.stdout.write("An admin user exists already; log in at http://127.0.0.1:8000/accounts/login/")
            return
        password = os.environ.get("HERMES_OPS_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(self.style.SUCCESS(f"Created admin user {username!r}."))
        if os.environ.get("HERMES_OPS_ADMIN_PASSWORD"):
            self.stdout.write("Its password is the value of HERMES_OPS_ADMIN_PASSWORD.")
        else:
            self.stdout.write(f"Its generated password (shown once, change it in the admin): {password}")
        self.stdout.write("Log in at http://127.0.0.1:8000/accounts/login/")
