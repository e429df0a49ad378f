"""``manage.py expire_tool_calls``: apply the tool gateway's expiry now (SPEC §7.3).

Pending calls older than ``HERMES_TOOL_APPROVAL_TTL_SECONDS``, or whose visit
or run has ended, become EXPIRED and are never executed; a call cut off while
executing becomes FAILED. Reads and decisions apply the same expiry on their
own; run this from cron or a systemd timer so lists stay true when nobody looks.
"""

from django.core.management.base import BaseCommand

from contextquery.tool_gateway import toolcalls_expire


class Command(BaseCommand):
    help = "Expire tool calls nobody approved in time or whose visit or run has ended (never executed)."

    def handle(self, *args, **options):
        ended = toolcalls_expire()
        self.stdout.write(
            f"Ended {ended} tool call(s): expired while waiting for approval, or cut off while executing."
        )
