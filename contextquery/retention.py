"""Retention of recorded runs (SPEC §6): delete finished runs older than a cutoff.

Runs are deleted in batches, each in its own short transaction, children
first (reads, tokens, logs, visits, then the runs), so no statement holds
locks on more than ``batch_size`` runs' rows and engines keep recording
while a purge runs. Running runs are never deleted, whatever their age. What
is deleted stays counted in the ``/metrics`` counters (``contextquery.tallies``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from contextquery import tallies
from contextquery.models import ContextRead, ContextToken, RunStatus, Visit, VisitLog, WorkflowRun
from project.errors import Invalid

_DURATION = re.compile(r"^\s*(\d{1,6})\s*([dhm])\s*$", re.IGNORECASE)
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def duration_parse(text: str) -> timedelta:
    """``"30d"``, ``"12h"`` or ``"90m"`` → a positive ``timedelta``.

    Raises ``Invalid`` (field ``older_than``) for anything else, naming the
    accepted forms.
    """
    found = _DURATION.match(text or "")
    if not found or int(found.group(1)) == 0:
        raise Invalid.field(
            "older_than",
            _("%(value)r is not a duration; use a positive number followed by d, h or m (30d, 12h, 90m).")
            % {"value": text},
        )
    return timedelta(**{_UNITS[found.group(2).lower()]: int(found.group(1))})


@dataclass
class PurgeReport:
    """What ``runs_purge`` deleted, row counts per model, and how many batches it took."""

    runs: int = 0
    visits: int = 0
    logs: int = 0
    tokens: int = 0
    reads: int = 0
    batches: int = 0
    batch_runs: list[int] = field(default_factory=list)


def runs_purge(*, older_than: timedelta, batch_size: int = 200, now=None) -> PurgeReport:
    """Delete finished runs whose ``finishedAt`` is more than ``older_than`` ago,
    with their visits, logs, tokens and reads (SPEC §6 retention).

    ``batch_size`` runs per transaction (at least 1). Returns a ``PurgeReport``.
    Raises ``Invalid`` for a non-positive ``older_than`` or ``batch_size``.
    """
    if older_than <= timedelta(0):
        raise Invalid.field("older_than", _("The age must be positive."))
    if batch_size < 1:
        raise Invalid.field("batch_size", _("The batch size must be at least 1."))
    try:
        cutoff = (now or timezone.now()) - older_than
    except OverflowError:  # a cutoff before the year 1: nothing is that old
        return PurgeReport()
    candidates = WorkflowRun.objects.exclude(status=RunStatus.RUNNING).filter(finished_at__lt=cutoff)
    report = PurgeReport()
    last_pk = 0
    while True:
        ids = list(candidates.filter(pk__gt=last_pk).order_by("pk").values_list("pk", flat=True)[:batch_size])
        if not ids:
            return report
        last_pk = ids[-1]
        with transaction.atomic():
            # Re-checked inside the transaction: a run is never deleted on a stale read.
            locked = list(
                candidates.filter(pk__in=ids).select_for_update(skip_locked=True).values_list("pk", flat=True)
            )
            # The /metrics counters keep what is deleted here (contextquery.tallies).
            reads = ContextRead.objects.filter(visit__run_id__in=locked)
            tallies.tally_purged_reads(reads=reads)
            report.reads += reads.delete()[0]
            deleted_tokens = ContextToken.objects.filter(run_id__in=locked).delete()[0]
            tallies.tally_purged_tokens(count=deleted_tokens)
            report.tokens += deleted_tokens
            report.logs += VisitLog.objects.filter(visit__run_id__in=locked).delete()[0]
            visits = Visit.objects.filter(run_id__in=locked)
            tallies.tally_purged_visits(visits=visits)
            report.visits += visits.delete()[0]
            report.runs += WorkflowRun.objects.filter(pk__in=locked).delete()[0]
        report.batches += 1
        report.batch_runs.append(len(locked))
