"""``manage.py finish_stale_runs [--dry-run]``: end runs whose engine went silent (SPEC §8).

A stale run is RUNNING with no sign of life for ``HERMES_STALE_RUN_MINUTES``
(default 30) and no tool call waiting for a person. Each is finished as
CANCELLED through the same rule as ``POST /api/runs/{runId}/finish``: its
running visits become CANCELLED and its context tokens are revoked.
``--dry-run`` lists them and changes nothing. Run it from cron, e.g. every
10 minutes.
"""

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils.translation import gettext as _

from contextquery.recording import runs_finish_stale


class Command(BaseCommand):
    help = (
        "Finish as CANCELLED the RUNNING runs with no sign of life for HERMES_STALE_RUN_MINUTES "
        "(and no tool call waiting for a person); --dry-run only lists them."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="List the stale runs; finish none.")

    def handle(self, *args, dry_run, **options):
        results = runs_finish_stale(dry_run=dry_run)
        for result in results:
            run = result.run
            facts = {
                "run": run.run_id,
                "workflow": run.workflow_name or run.workflow_id or "—",
                "seen": run.last_seen_at.strftime("%Y-%m-%d %H:%M:%S"),
                "visits": result.cancelled_visits,
            }
            if dry_run:
                line = _("Would finish run %(run)s (%(workflow)s): last sign of life %(seen)s UTC.")
            elif result.finished:
                line = _(
                    "Finished run %(run)s (%(workflow)s) as CANCELLED: last sign of life %(seen)s UTC; "
                    "%(visits)d running visit(s) cancelled, its tokens revoked."
                )
            else:
                line = _("Left run %(run)s (%(workflow)s): it showed a sign of life or finished meanwhile.")
            self.stdout.write(line % facts)
        finished = sum(1 for r in results if r.finished)
        minutes = settings.HERMES_STALE_RUN_MINUTES
        if dry_run:
            summary = _("%(count)d stale run(s) (silent for %(minutes)d minutes or more); none finished (dry run).")
            self.stdout.write(summary % {"count": len(results), "minutes": minutes})
        else:
            summary = _("%(count)d stale run(s) finished as CANCELLED (silent for %(minutes)d minutes or more).")
            self.stdout.write(summary % {"count": finished, "minutes": minutes})
