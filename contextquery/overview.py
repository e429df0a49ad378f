"""What ops look at first: the overview's panels (SPEC §8).

Over a window of the last 24 hours or 7 days (:func:`window_get`), each panel
is **one** aggregate query, whatever the number of rows it shows:

* :func:`overview_runs` — runs started in the window by status, and the runs
  RUNNING and stale now;
* :func:`overview_failures` — failed visits by category per hour (24 hours)
  or per 6 hours (7 days), laid out as a chart;
* :func:`overview_patterns` — the patterns that failed most visits, with the
  number of those verdicts ops marked as false positives;
* :func:`overview_nodes` and :func:`overview_workflows` — where failures
  happen most;
* :func:`overview_approvals` — tool calls waiting for a person (None until
  the tool gateway exists).

Every number comes with ``href``, the list that shows the rows behind it
(``/runs/`` and ``/visits/`` filtered with ``contextquery.filters``), so a
count on the overview and the list it opens always agree.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.db.models import Count, Exists, Max, OuterRef, Q
from django.db.models.functions import TruncHour
from django.urls import reverse
from django.utils import timezone

from contextquery import charts, liveness
from contextquery.filters import NO_CATEGORY, NO_CATEGORY_LABEL
from contextquery.models import RunStatus, Visit, VisitStatus, WorkflowRun
from patterns.models import Category, JudgedReply

#: Window key → (span, chart bucket).
WINDOWS = {
    "24h": (timedelta(hours=24), timedelta(hours=1)),
    "7d": (timedelta(days=7), timedelta(hours=6)),
}
DEFAULT_WINDOW = "24h"
#: Rows shown in each "most" table.
TOP_ROWS = 8
#: The list filters' date-time format: what a ``datetime-local`` input holds (UTC).
LINK_TIME_FORMAT = "%Y-%m-%dT%H:%M"


@dataclass(frozen=True)
class Window:
    """``[start, end)``, cut into chart buckets of ``bucket``: ``start`` is the
    start of the bucket holding "now minus the span" and ``end`` the end of
    the bucket holding now, so the window covers at least the whole span and
    the current hour is the last bar."""

    key: str
    start: datetime
    end: datetime
    bucket: timedelta

    def buckets(self) -> list[tuple[datetime, datetime]]:
        count = int((self.end - self.start) / self.bucket)
        return [(self.start + i * self.bucket, self.start + (i + 1) * self.bucket) for i in range(count)]


def window_get(*, key: str | None, now: datetime | None = None) -> Window:
    """The window named ``key`` (``24h`` or ``7d``; anything else is the default, 24h) ending now."""
    key = key if key in WINDOWS else DEFAULT_WINDOW
    span, bucket = WINDOWS[key]
    now = (now or timezone.now()).astimezone(dt.UTC)
    hours = int(bucket.total_seconds() // 3600)

    def floor(moment: datetime) -> datetime:
        return moment.replace(minute=0, second=0, microsecond=0, hour=moment.hour - moment.hour % hours)

    return Window(key=key, start=floor(now - span), end=floor(now) + bucket, bucket=bucket)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(dt.UTC).strftime(LINK_TIME_FORMAT)


def runs_href(**params) -> str:
    """``/runs/`` filtered by ``params`` (RunFilter names; datetimes formatted)."""
    return _href("contextquery:list", params)


def visits_href(**params) -> str:
    """``/visits/`` filtered by ``params`` (VisitFilter names; datetimes formatted)."""
    return _href("overview:visits", params)


def _href(name: str, params: dict) -> str:
    shown = {k: (_stamp(v) if isinstance(v, datetime) else v) for k, v in params.items() if v is not None}
    return reverse(name) + ("?" + urlencode(shown) if shown else "")


# --------------------------------------------------------------------------- panels


def overview_runs(*, window: Window, now: datetime | None = None) -> dict:
    """Runs started in the window by status, and runs RUNNING / stale now (one query).

    Returns ``{"started": {count, href}, "by_status": [{status, label, count,
    href}], "running": {count, href}, "stale": {count, href}}``.
    """
    in_window = Q(started_at__gte=window.start)
    found = WorkflowRun.objects.aggregate(
        started=Count("pk", filter=in_window),
        **{status: Count("pk", filter=in_window & Q(status=status)) for status in RunStatus.values},
        running_now=Count("pk", filter=Q(status=RunStatus.RUNNING)),
        stale_now=Count("pk", filter=liveness.run_stale_q(now=now)),
    )
    return {
        "started": {"count": found["started"], "href": runs_href(startedAfter=window.start)},
        "by_status": [
            {
                "status": status,
                "label": label,
                "count": found[status],
                "href": runs_href(status=status, startedAfter=window.start),
            }
            for status, label in RunStatus.choices
        ],
        "running": {"count": found["running_now"], "href": runs_href(status=RunStatus.RUNNING)},
        "stale": {"count": found["stale_now"], "href": runs_href(stale="true")},
    }


def category_label(category: str) -> str:
    """The translated label of a failure category; none ("" or ``none``) is a category of its own."""
    return Category.label_of(category) if category and category != NO_CATEGORY else str(NO_CATEGORY_LABEL)


def overview_failures(*, window: Window) -> dict:
    """Failed visits per category and time bucket (one query, grouped by hour).

    Returns ``{"chart": charts.Chart, "total": {count, href}, "categories":
    [{category, label, count, href}]}``, categories by total, most first
    (the bottom of each bar).
    """
    rows = (
        Visit.objects.filter(status=VisitStatus.FAILED, ended_at__gte=window.start, ended_at__lt=window.end)
        .annotate(hour=TruncHour("ended_at", tzinfo=dt.UTC))
        .values("hour", "failure_category")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts: dict[tuple[int, str], int] = {}
    totals: dict[str, int] = {}
    for row in rows:
        index = int((row["hour"] - window.start) / window.bucket)
        category = row["failure_category"] or NO_CATEGORY
        counts[(index, category)] = counts.get((index, category), 0) + row["n"]
        totals[category] = totals.get(category, 0) + row["n"]
    order = sorted(totals, key=lambda c: (-totals[c], c))

    def href(category, start=window.start, end=None):
        return visits_href(status=VisitStatus.FAILED, category=category, endedAfter=start, endedBefore=end)

    chart = charts.stacked_bars(
        buckets=window.buckets(),
        counts=counts,
        categories=order,
        href=href,
        label=category_label,
        time_label=_time_labeller(window),
    )
    return {
        "chart": chart,
        "total": {
            "count": sum(totals.values()),
            "href": visits_href(status=VisitStatus.FAILED, endedAfter=window.start),
        },
        "categories": [{"category": c, "label": category_label(c), "count": totals[c], "href": href(c)} for c in order],
    }


def _time_labeller(window: Window):
    """The date at each midnight; for 24 hours also the hour every 3 hours (UTC)."""
    if window.bucket < timedelta(hours=6):
        return lambda i, start: start.strftime("%m-%d" if start.hour == 0 else "%H:%M") if start.hour % 3 == 0 else None
    return lambda i, start: start.strftime("%m-%d") if start.hour == 0 else None


def overview_patterns(*, window: Window, limit: int = TOP_ROWS) -> list[dict]:
    """The patterns that failed most visits in the window, with how many of those
    verdicts ops marked as false positives (one query, grouped by pattern).

    Each row: ``{pattern_id, name, key, category, hits, hits_href,
    false_positives, false_positives_href, href}`` (``href`` the pattern page).
    """
    marked = JudgedReply.objects.filter(subject=OuterRef("visit_uuid"), mark=JudgedReply.Mark.FALSE_POSITIVE)
    rows = (
        Visit.objects.filter(ended_at__gte=window.start, matched_pattern__isnull=False, status=VisitStatus.FAILED)
        .values("matched_pattern_id", "matched_pattern__name", "matched_pattern__key", "matched_pattern__category")
        .annotate(hits=Count("pk"), false_positives=Count("pk", filter=Q(Exists(marked))))
        .order_by("-hits", "matched_pattern_id")[:limit]
    )
    return [
        {
            "pattern_id": r["matched_pattern_id"],
            "name": r["matched_pattern__name"],
            "key": r["matched_pattern__key"],
            "category": r["matched_pattern__category"],
            "category_label": category_label(r["matched_pattern__category"]),
            "hits": r["hits"],
            "hits_href": visits_href(
                status=VisitStatus.FAILED, patternId=r["matched_pattern_id"], endedAfter=window.start
            ),
            "false_positives": r["false_positives"],
            "false_positives_href": visits_href(
                status=VisitStatus.FAILED,
                patternId=r["matched_pattern_id"],
                falsePositive="true",
                endedAfter=window.start,
            ),
            "href": reverse("patterns:detail", args=[r["matched_pattern_id"]]),
        }
        for r in rows
    ]


def overview_nodes(*, window: Window, limit: int = TOP_ROWS) -> list[dict]:
    """The nodes (of a workflow) with the most failed visits ended in the window,
    with all their visits ended in it (one query, grouped by workflow and node).
    Runs without a workflow id are left out: their nodes cannot be told apart.

    Each row: ``{workflow_id, workflow_name, node_id, node_name, failed,
    failed_href, visits, visits_href}``.
    """
    rows = (
        Visit.objects.filter(ended_at__gte=window.start)
        .exclude(run__workflow_id="")
        .values("run__workflow_id", "node_id")
        .annotate(
            visits=Count("pk"),
            failed=Count("pk", filter=Q(status=VisitStatus.FAILED)),
            node_name=Max("node_name"),
            workflow_name=Max("run__workflow_name"),
        )
        .filter(failed__gt=0)
        .order_by("-failed", "-visits", "run__workflow_id", "node_id")[:limit]
    )
    return [
        {
            "workflow_id": r["run__workflow_id"],
            "workflow_name": r["workflow_name"],
            "node_id": r["node_id"],
            "node_name": r["node_name"],
            "failed": r["failed"],
            "failed_href": visits_href(
                status=VisitStatus.FAILED,
                workflowId=r["run__workflow_id"],
                nodeId=r["node_id"],
                endedAfter=window.start,
            ),
            "visits": r["visits"],
            "visits_href": visits_href(workflowId=r["run__workflow_id"], nodeId=r["node_id"], endedAfter=window.start),
        }
        for r in rows
    ]


def overview_workflows(*, window: Window, limit: int = TOP_ROWS) -> list[dict]:
    """The workflows whose runs started in the window failed most: FAILED runs,
    and runs with at least one failed visit (a run may succeed past a failure
    under ``skip``, or after a retry), out of all their runs (one query,
    grouped by workflow). Runs without a workflow id are left out.

    Each row: ``{workflow_id, workflow_name, runs, runs_href, failed_runs,
    failed_runs_href, with_failed_visits, with_failed_visits_href}``.
    """
    failed_visit = Visit.objects.filter(run=OuterRef("pk"), status=VisitStatus.FAILED)
    rows = (
        WorkflowRun.objects.filter(started_at__gte=window.start)
        .exclude(workflow_id="")
        .values("workflow_id")
        .annotate(
            runs=Count("pk"),
            failed_runs=Count("pk", filter=Q(status=RunStatus.FAILED)),
            with_failed_visits=Count("pk", filter=Q(Exists(failed_visit))),
            workflow_name=Max("workflow_name"),
        )
        .filter(Q(failed_runs__gt=0) | Q(with_failed_visits__gt=0))
        .order_by("-failed_runs", "-with_failed_visits", "-runs", "workflow_id")[:limit]
    )
    return [
        {
            "workflow_id": r["workflow_id"],
            "workflow_name": r["workflow_name"],
            "runs": r["runs"],
            "runs_href": runs_href(workflowId=r["workflow_id"], startedAfter=window.start),
            "failed_runs": r["failed_runs"],
            "failed_runs_href": runs_href(
                workflowId=r["workflow_id"], status=RunStatus.FAILED, startedAfter=window.start
            ),
            "with_failed_visits": r["with_failed_visits"],
            "with_failed_visits_href": runs_href(
                workflowId=r["workflow_id"], hasFailedVisits="true", startedAfter=window.start
            ),
        }
        for r in rows
    ]


def overview_approvals() -> dict:
    """Tool calls waiting for a person (SPEC §7.3): ``{count, href}`` (one query)."""
    return {"count": liveness.tool_calls_pending().count(), "href": reverse("tools:approvals")}
