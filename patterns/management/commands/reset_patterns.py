"""``manage.py reset_patterns``: reset error patterns to defaults (SPEC §3.2)."""

import getpass

from django.core.management.base import BaseCommand

from patterns.changes import patterns_reset


class Command(BaseCommand):
    help = (
        "Reset error patterns to defaults: delete every custom pattern and restore each built-in "
        "to its shipped text and enabled state, in one transaction. History is kept."
    )

    def handle(self, *args, **options):
        try:
            who = getpass.getuser()
        except Exception:  # no login name in some containers
            who = "manage.py"
        result = patterns_reset(actor=None, actor_label=f"{who} (reset_patterns)", via="command")
        self.stdout.write(
            self.style.SUCCESS(
                f"Reset to defaults: {result.deleted} custom patterns deleted, {result.restored} built-ins "
                f"restored, {result.inserted} re-installed."
            )
        )
