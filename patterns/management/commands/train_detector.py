"""``manage.py train_detector [--default] [--output PATH] [--no-store]``: train the detection model (SPEC §3.3a).

Trains on the shipped labelled corpus (``tests/data/corpus/folds.jsonl`` and the
later batches' ``folds-N.jsonl``: ``patterns.corpus.BATCHES``), the ordinary answers'
folds (``ordinary-folds.jsonl``, ``ordinary-folds-N.jsonl``) and the older
labelled sets (``tests/data/agent-replies-*.jsonl``), plus ops' marks (false
positives, missed failures) unless ``--default``; the threshold is chosen
leave-source-out on the corpus and ordinary folds together (pooled precision at
least 0.98, at most 0.5% of ordinary answers flagged, on the replies the model
may judge). The held-out parts are
never read. Stores the weights as the
newest model (every worker picks it up) unless ``--no-store``; ``--output``
also writes them as JSON. ``--default`` rewrites the shipped default weights
(``patterns/data/detector-default.json``), trained without marks and not stored.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from patterns.corpus import FOLDS_PATH, extra_rows_load, training_fold_rows_load
from patterns.detector import DEFAULT_WEIGHTS_PATH, detector_store
from patterns.marks import marked_rows
from patterns.training import detector_train, weights_dump


class Command(BaseCommand):
    help = "Train the detection model on the labelled corpus and ops' marks, and store it."

    def add_arguments(self, parser):
        parser.add_argument("--default", action="store_true", help="rewrite the shipped default weights file")
        parser.add_argument("--output", help="also write the weights to this JSON file")
        parser.add_argument("--no-store", action="store_true", help="do not store the model in the database")

    def handle(self, *args, default=False, output=None, no_store=False, **options):
        if not FOLDS_PATH.exists():
            raise CommandError(f"The labelled corpus is missing ({FOLDS_PATH}); run from a checkout.")
        fold_rows = training_fold_rows_load()
        extra = extra_rows_load()
        marks = [] if default else marked_rows()
        try:
            weights, report = detector_train(
                fold_rows=fold_rows, extra_rows=extra + marks, version_prefix="default" if default else "trained"
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        text = weights_dump(weights)
        targets = ([DEFAULT_WEIGHTS_PATH] if default else []) + ([Path(output)] if output else [])
        for path in targets:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            self.stdout.write(f"Wrote {path} ({len(text.encode()) // 1024} KiB).")
        if not default and not no_store:
            detector_store(weights=weights, note=f"{len(marks)} marks")
        self.stdout.write(
            f"Model {weights['version']}: {report.fold_rows - report.ordinary_rows} corpus rows, "
            f"{report.ordinary_rows} ordinary answers, {len(extra)} older rows, {len(marks)} marks; "
            f"threshold {report.threshold:.4f} (leave-source-out precision {report.precision:.3f}, "
            f"recall {report.recall:.3f}, ordinary answers flagged {report.ordinary_fp_rate:.3f})"
            + ("" if default or no_store else "; stored as the newest model.")
        )
