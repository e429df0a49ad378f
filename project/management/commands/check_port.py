"""``manage.py check_port HOST PORT``: stop ``make run`` at once, with one clear
line, when its port is taken; otherwise record the address it will serve on,
which the printed hints use (issue 13, :mod:`project.serving`)."""

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from project import serving


class Command(BaseCommand):
    help = "Check that HOST:PORT is free and record it as the address this installation serves on."

    def add_arguments(self, parser):
        parser.add_argument("host")
        parser.add_argument("port", type=int)

    def handle(self, *args, host, port, **options):
        if not serving.port_free(host, port):
            raise CommandError(
                _(
                    "Port %(port)d on %(host)s is in use already; stop what listens there or choose another port, "
                    "e.g. PORT=%(next)d make run."
                )
                % {"port": port, "host": host or "*", "next": port + 1}
            )
        serving.record_base_url(serving.listen_url(host, port))
