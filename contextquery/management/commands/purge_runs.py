"""``manage.py purge_runs --older-than 30d``: delete old finished runs (SPEC §6).

Also ``12h`` or ``90m``. Deletes in batches (``--batch-size``, default 200
runs), each in a short transaction, with the runs' visits, logs, tokens and
reads; running runs are kept. Prints what it deleted.
"""

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from contextquery.retention import duration_parse, runs_purge
from project.errors import Invalid


class Command(BaseCommand):
    help = "Delete finished runs older than --older-than (30d, 12h, 90m) with their visits, logs, tokens and reads."

    def add_arguments(self, parser):
        parser.add_argument("--older-than", required=True, help="Age of the finish: a number with d, h or m, e.g. 30d.")
        parser.add_argument("--batch-size", type=int, default=200, help="Runs deleted per transaction (default 200).")

    def handle(self, *args, older_than, batch_size, **options):
        try:
            report = runs_purge(older_than=duration_parse(older_than), batch_size=batch_size)
        except Invalid as exc:
            raise CommandError(
                f"--{next(iter(exc.errors)).replace('_', '-')}: {next(iter(exc.errors.values()))[0]}"
            ) from None
        self.stdout.write(
            _(
                "Deleted %(runs)d run(s), %(visits)d visit(s), %(logs)d log(s), %(tokens)d token(s) and "
                "%(reads)d read(s) in %(batches)d batch(es)."
            )
            % {
                "runs": report.runs,
                "visits": report.visits,
                "logs": report.logs,
                "tokens": report.tokens,
                "reads": report.reads,
                "batches": report.batches,
            }
        )
