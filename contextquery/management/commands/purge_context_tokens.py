"""``manage.py purge_context_tokens``: delete expired and revoked context tokens (SPEC §4.5).

Run it periodically (cron, a systemd timer); issuing tokens also purges
opportunistically. Audit rows (``ContextRead``) belong to visits and stay.
"""

from django.core.management.base import BaseCommand

from contextquery.tokens import tokens_purge


class Command(BaseCommand):
    help = "Delete expired and revoked context tokens; the read audit is kept."

    def handle(self, *args, **options):
        deleted = tokens_purge()
        self.stdout.write(f"Deleted {deleted} expired or revoked context token(s).")
