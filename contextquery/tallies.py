"""What purges deleted, counted, so the ``/metrics`` counters never go down (SPEC §8).

``/metrics`` reads its counters from the database: every worker, command and
restart then agrees (see :mod:`contextquery.metrics`). Rows do not live for
ever, though — tokens are purged a day after they die, runs by ``purge_runs``
— and Prometheus reads a counter that goes down as a restart. So each purge
adds what it is about to delete to :class:`~contextquery.models.MetricTally`,
and a counter is *rows stored + rows purged*. Only purges write here; the
hot paths (registration, logs, queries) never do.

Sample names and the latency buckets are defined here, once, for the purges
and for the collector.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, QuerySet, Sum

from contextquery.models import MetricTally, VisitStatus

#: Upper bounds (seconds) of the context-query latency histogram's buckets.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

VISITS_COMPLETED = "visits_completed"
QUERIES = "context_queries"
QUERY_SECONDS_SUM = "context_query_seconds_sum"
QUERY_BUCKET = "context_query_bucket"
TOKENS_ISSUED = "tokens_issued"

#: A sample's labels as stored: sorted ``(name, value)`` pairs.
Labels = tuple[tuple[str, str], ...]


def labels_key(labels: Mapping[str, object]) -> Labels:
    """``{"status": "FAILED"}`` → ``(("status", "FAILED"),)``, the form samples are keyed by."""
    return tuple(sorted((str(k), str(v)) for k, v in labels.items()))


def tallies_add(*, samples: Iterable[tuple[str, Labels, float]]) -> None:
    """Add each ``(name, labels, amount)`` to its tally row (created on first use).

    Safe beside a concurrent purge: an increment is one UPDATE, and a row two
    purges create at once is retried as an increment. Zero amounts are skipped.
    """
    for name, labels, amount in samples:
        if not amount:
            continue
        key = json.dumps(labels)
        rows = MetricTally.objects.filter(name=name, labels=key)
        if rows.update(value=F("value") + amount):
            continue
        try:
            with transaction.atomic():
                MetricTally.objects.create(name=name, labels=key, value=amount)
        except IntegrityError:
            rows.update(value=F("value") + amount)


def tallies_read() -> dict[tuple[str, Labels], float]:
    """Every tally: ``{(name, labels): value}`` (one query)."""
    return {
        (name, tuple(tuple(pair) for pair in json.loads(labels))): value
        for name, labels, value in MetricTally.objects.values_list("name", "labels", "value")
    }


def visits_completed_counts(visits: QuerySet) -> list[tuple[str, Labels, float]]:
    """Ended visits of ``visits`` by status and category, as samples (one query)."""
    rows = (
        visits.exclude(status=VisitStatus.RUNNING)
        .values("status", "failure_category")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return [
        (VISITS_COMPLETED, labels_key({"status": r["status"], "category": r["failure_category"]}), r["n"]) for r in rows
    ]


def reads_counts(reads: QuerySet) -> list[tuple[str, Labels, float]]:
    """Context reads of ``reads`` by endpoint and HTTP status: count, seconds
    summed, and the cumulative count at or under each bucket (one query)."""
    buckets = {
        f"le{i}": Count("pk", filter=Q(duration_ms__lte=bound * 1000)) for i, bound in enumerate(LATENCY_BUCKETS)
    }
    rows = reads.values("endpoint", "status_code").annotate(n=Count("pk"), ms=Sum("duration_ms"), **buckets).order_by()
    samples = []
    for r in rows:
        labels = {"endpoint": r["endpoint"], "status": r["status_code"]}
        samples.append((QUERIES, labels_key(labels), r["n"]))
        samples.append((QUERY_SECONDS_SUM, labels_key(labels), (r["ms"] or 0) / 1000))
        for i, bound in enumerate(LATENCY_BUCKETS):
            samples.append((QUERY_BUCKET, labels_key({**labels, "le": bound}), r[f"le{i}"]))
    return samples


def tally_purged_visits(*, visits: QuerySet) -> None:
    """Keep the counts of ``visits`` before a purge deletes them."""
    tallies_add(samples=visits_completed_counts(visits))


def tally_purged_reads(*, reads: QuerySet) -> None:
    """Keep the counts and latencies of ``reads`` before a purge deletes them."""
    tallies_add(samples=reads_counts(reads))


def tally_purged_tokens(*, count: int) -> None:
    """Keep ``count`` deleted token rows in the tokens-issued counter."""
    tallies_add(samples=[(TOKENS_ISSUED, (), count)])
