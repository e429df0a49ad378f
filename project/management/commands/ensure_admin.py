"""``manage.py ensure_admin``: create an admin user when none exists, and say how to log in (SPEC §6).

The password comes from ``HERMES_OPS_ADMIN_PASSWORD`` (checked by the password
validators); without it one is generated and printed once, framed, as the
last thing ``make run`` says before serving. The address is where the server
serves (:func:`project.serving.base_url`).
"""

import os
import secrets
import unicodedata

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from project import serving


class Command(BaseCommand):
    help = "Create the 'admin' superuser if no superuser exists, and say how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("HERMES_OPS_ADMIN_USERNAME", "admin"))

    def handle(self, *args, username, **options):
        user_model = get_user_model()
        login_url = f"{serving.base_url()}/accounts/login/"
        admins = list(
            user_model.objects.filter(is_superuser=True)
            .order_by("date_joined", "pk")
            .values_list("username", flat=True)
        )
        if admins:
            # Named, with the way back in: a second `make run` is where a newcomer who lost the password looks.
            self.frame(
                [
                    _("Hermes Ops serves on %(url)s (Ctrl-C stops it).") % {"url": serving.base_url()},
                    _("Log in at %(url)s as %(user)s.") % {"url": login_url, "user": admins[0]},
                    _("Lost its password? .venv/bin/python manage.py changepassword %(user)s") % {"user": admins[0]},
                ]
            )
            return
        given = os.environ.get("HERMES_OPS_ADMIN_PASSWORD")
        password = given or secrets.token_urlsafe(12)
        candidate = user_model(username=username)
        try:
            validate_password(password, user=candidate)
        except ValidationError as refused:
            raise CommandError(
                _("HERMES_OPS_ADMIN_PASSWORD is not accepted: %(why)s") % {"why": " ".join(refused.messages)}
            ) from None
        user_model.objects.create_superuser(username=username, email="", password=password)
        lines = [
            _("Hermes Ops serves on %(url)s (Ctrl-C stops it).") % {"url": serving.base_url()},
            _("Log in at %(url)s as %(user)s.") % {"url": login_url, "user": username},
        ]
        if given:
            lines.append(_("Its password is the value of HERMES_OPS_ADMIN_PASSWORD."))
        else:
            lines.append(
                _("Its password (shown this once; change it in the admin): %(password)s") % {"password": password}
            )
        self.frame(lines)

    def frame(self, lines: list[str]) -> None:
        """Print ``lines`` in a box, so they stand out from the server's log
        (wide characters, such as Chinese, count two columns)."""
        width = max(_columns(line) for line in lines)
        self.stdout.write("+" + "-" * (width + 2) + "+")
        for line in lines:
            self.stdout.write(f"| {line}{' ' * (width - _columns(line))} |")
        self.stdout.write("+" + "-" * (width + 2) + "+")


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)
