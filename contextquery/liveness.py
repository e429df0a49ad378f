"""Signs of life and stale runs (SPEC §8).

A visit's last sign of life — its registration, a log, a heartbeat, a context
or tool query, its completion — is kept on the visit row (``last_seen_at``)
and written at most every :data:`SEEN_EVERY` (10 s) by :func:`visit_seen`, the
one place that rule lives. Registration and completion set it in the row they
write anyway; :func:`contextquery.tokens.tokens_touch` (logs, heartbeats,
context queries) calls :func:`visit_seen`; the tool gateway calls it for tool
queries.

A run is **stale** when it is RUNNING, nothing in it showed a sign of life for
``HERMES_STALE_RUN_MINUTES`` (its own start counts, for a run with no visit
yet), and no tool call of it waits for a person. :func:`run_stale_q` says so
in SQL, so lists, filters, the API and ``finish_stale_runs`` agree.

This module imports only models: ``tokens`` and ``recording`` import it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from contextquery.models import RunStatus, ToolCall, ToolCallStatus, Visit, WorkflowRun

#: A sign of life within this long of the stored one is not written again.
SEEN_EVERY = timedelta(seconds=10)


def visit_seen(*, visit_id: int, now: datetime | None = None) -> bool:
    """Record a sign of life of visit ``visit_id`` at ``now`` (default: now).

    One conditional UPDATE: the row is written only when its ``last_seen_at``
    is more than :data:`SEEN_EVERY` older than ``now``, so a burst of logs or
    queries costs one write per 10 s, and the time never moves back. Returns
    True when the row was written.
    """
    now = now or timezone.now()
    return bool(Visit.objects.filter(pk=visit_id, last_seen_at__lt=now - SEEN_EVERY).update(last_seen_at=now))


def stale_after() -> timedelta:
    """How long a RUNNING run may stay silent: ``HERMES_STALE_RUN_MINUTES``."""
    return timedelta(minutes=settings.HERMES_STALE_RUN_MINUTES)


def stale_cutoff(*, now: datetime | None = None) -> datetime:
    """The instant before which silence makes a run stale."""
    return (now or timezone.now()) - stale_after()


# --------------------------------------------------------------------------- tool calls


def tool_calls_pending() -> QuerySet:
    """Tool calls waiting for a person (``PENDING_APPROVAL``, SPEC §7.3): a run
    with one is never stale, and the overview counts them."""
    return ToolCall.objects.filter(status=ToolCallStatus.PENDING_APPROVAL)


# --------------------------------------------------------------------------- stale runs


def run_stale_q(*, now: datetime | None = None) -> Q:
    """A ``Q`` on ``WorkflowRun``: RUNNING, no sign of life since the cutoff, no
    tool call waiting for a person (one EXISTS per condition, no join)."""
    cutoff = stale_cutoff(now=now)
    q = Q(status=RunStatus.RUNNING, started_at__lt=cutoff) & ~Q(
        Exists(Visit.objects.filter(run=OuterRef("pk"), last_seen_at__gte=cutoff))
    )
    return q & ~Q(Exists(tool_calls_pending().filter(visit__run=OuterRef("pk"))))


def runs_with_liveness(runs: QuerySet, *, now: datetime | None = None) -> QuerySet:
    """``runs`` annotated with ``last_seen_at`` (the latest sign of life of any
    of its visits, else its start) and ``stale`` (bool), in the same query."""
    latest = Visit.objects.filter(run=OuterRef("pk")).order_by("-last_seen_at").values("last_seen_at")[:1]
    return runs.annotate(
        last_seen_at=Coalesce(Subquery(latest), "started_at"),
        stale=ExpressionWrapper(run_stale_q(now=now), output_field=BooleanField()),
    )


def runs_stale(*, now: datetime | None = None) -> QuerySet:
    """The stale runs, oldest sign of life first, annotated as :func:`runs_with_liveness`."""
    return runs_with_liveness(WorkflowRun.objects.filter(run_stale_q(now=now)), now=now).order_by("last_seen_at", "pk")


def runs_attach_liveness(*, runs, now: datetime | None = None) -> list[WorkflowRun]:
    """Set ``last_seen_at`` and ``stale`` on each of ``runs`` (a page of a list)
    with one query over their keys, by the same SQL as the filter. Returns
    the runs as a list. Lists annotate their page this way rather than the
    whole filtered set, so a list of 10,000 runs costs what a page costs."""
    runs = list(runs)
    if runs:
        found = {
            row["pk"]: row
            for row in runs_with_liveness(WorkflowRun.objects.filter(pk__in=[r.pk for r in runs]), now=now).values(
                "pk", "last_seen_at", "stale"
            )
        }
        for run in runs:
            row = found.get(run.pk, {"last_seen_at": run.started_at, "stale": False})
            run.last_seen_at, run.stale = row["last_seen_at"], bool(row["stale"])
    return runs


def run_liveness(*, run: WorkflowRun, now: datetime | None = None) -> WorkflowRun:
    """``run`` with ``last_seen_at`` and ``stale`` set (one query, unless they already are)."""
    if not hasattr(run, "stale"):
        runs_attach_liveness(runs=[run], now=now)
    return run
