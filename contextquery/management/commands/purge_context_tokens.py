"""``manage.py purge_context_tokens``: delete context tokens that expired or were
revoked more than ``TOKEN_PURGE_GRACE`` (24 hours) ago (SPEC §4.5).

Run it periodically (cron, a systemd timer); issuing tokens also purges
opportunistically. Audit rows (``ContextRead``) belong to visits and stay.
"""

from django.core.management.base import BaseCommand

from contextquery.tokens import TOKEN_PURGE_GRACE, tokens_purge

GRACE_HOURS = int(TOKEN_PURGE_GRACE.total_seconds() // 3600)


class Command(BaseCommand):
    help = f"Delete context tokens dead (expired or revoked) for more than {GRACE_HOURS} hours; the read audit is kept."

    def handle(self, *args, **options):
        deleted = tokens_purge()
        self.stdout.write(f"Deleted {deleted} context token(s) expired or revoked more than {GRACE_HOURS} hours ago.")
