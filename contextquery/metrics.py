"""``GET /metrics``: Prometheus text format, read from the database (SPEC §8).

Why the database and not counters in memory: the facts are stored already
(visits and their verdicts, pattern hit counts, one audit row per context
query with its duration, one row per token), and every process that records
them — each gunicorn worker, ``loaddemo``, ``purge_runs`` — writes them to the
same database. So any worker answers a scrape with the same totals, a
restart loses nothing, and nothing has to be set up per start-up (no
multiprocess directory to share and clean). Purges keep what they delete in
``contextquery.tallies``, so a counter never goes down. A scrape costs a
handful of aggregate queries (:func:`metrics_text` names them).

Samples, all prefixed ``hermes_``:

* ``visits_completed_total{status, category}`` — ended visits (category ""
  when none);
* ``pattern_matches_total{key}`` — each pattern's hit count (``key`` its
  stable key; a custom pattern has none and shows as ``custom-<id>``);
* ``context_queries_total{endpoint, status}`` and the histogram
  ``context_query_duration_seconds{endpoint, status}`` — every audited query;
* ``context_tokens_issued_total``;
* ``runs_running`` and ``runs_stale`` — gauges, now;
* ``tool_calls_total{status}`` and ``tool_approvals_pending`` (SPEC §7).
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Q
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import choose_encoder

from contextquery import liveness, tallies
from contextquery.models import ContextRead, ContextToken, RunStatus, ToolCall, ToolCallStatus, Visit, WorkflowRun
from patterns.models import HermesErrorPattern

PREFIX = "hermes_"


def _with_tallies(stored, name, purged) -> dict:
    """``{labels: value}`` of ``stored`` samples named ``name`` plus the purged tallies of that name."""
    totals: dict = defaultdict(float)
    for sample_name, labels, value in stored:
        if sample_name == name:
            totals[labels] += value
    for (sample_name, labels), value in purged.items():
        if sample_name == name:
            totals[labels] += value
    return totals


def _label_values(labels: tallies.Labels, names: tuple[str, ...]) -> list[str]:
    found = dict(labels)
    return [found.get(name, "") for name in names]


class DatabaseCollector:
    """A prometheus-client collector whose every sample is read from the database."""

    def collect(self):
        # Query 1: the purged tallies.
        purged = tallies.tallies_read()
        yield from self._visits(purged)
        yield self._patterns()
        yield from self._queries(purged)
        yield self._tokens(purged)
        yield from self._runs()
        yield from self._tool_calls()

    def _visits(self, purged):
        # Query 2: ended visits grouped by status and category.
        totals = _with_tallies(tallies.visits_completed_counts(Visit.objects.all()), tallies.VISITS_COMPLETED, purged)
        family = CounterMetricFamily(
            PREFIX + "visits_completed",
            "Visits that ended, by effective status and failure category.",
            labels=["status", "category"],
        )
        for labels, value in sorted(totals.items()):
            family.add_metric(_label_values(labels, ("status", "category")), value)
        yield family

    def _patterns(self):
        # Query 3: every pattern's hit count.
        family = CounterMetricFamily(
            PREFIX + "pattern_matches",
            "Visits an error pattern failed (its hit count), by pattern key.",
            labels=["key"],
        )
        for pk, key, hits in HermesErrorPattern.objects.order_by("pk").values_list("pk", "key", "hit_count"):
            family.add_metric([key or f"custom-{pk}"], hits)
        return family

    def _queries(self, purged):
        # Query 4: audited context queries by endpoint and status, with cumulative bucket counts.
        stored = tallies.reads_counts(ContextRead.objects.all())
        counts = _with_tallies(stored, tallies.QUERIES, purged)
        seconds = _with_tallies(stored, tallies.QUERY_SECONDS_SUM, purged)
        buckets = _with_tallies(stored, tallies.QUERY_BUCKET, purged)
        names = ("endpoint", "status")
        total = CounterMetricFamily(
            PREFIX + "context_queries",
            "Context queries answered, by endpoint and HTTP status.",
            labels=list(names),
        )
        histogram = HistogramMetricFamily(
            PREFIX + "context_query_duration_seconds",
            "Time to answer a context query, by endpoint and HTTP status.",
            labels=list(names),
        )
        for labels, count in sorted(counts.items()):
            values = _label_values(labels, names)
            total.add_metric(values, count)
            cumulative = [
                (str(bound), buckets.get(tallies.labels_key({**dict(labels), "le": bound}), 0))
                for bound in tallies.LATENCY_BUCKETS
            ]
            histogram.add_metric(values, buckets=[*cumulative, ("+Inf", count)], sum_value=seconds.get(labels, 0))
        yield total
        yield histogram

    def _tokens(self, purged):
        # Query 5: token rows stored.
        issued = ContextToken.objects.count() + purged.get((tallies.TOKENS_ISSUED, ()), 0)
        return CounterMetricFamily(PREFIX + "context_tokens_issued", "Context tokens issued.", value=issued)

    def _runs(self):
        # Query 6: running and stale runs now, in one aggregate.
        now = WorkflowRun.objects.aggregate(
            running=Count("pk", filter=Q(status=RunStatus.RUNNING)),
            stale=Count("pk", filter=liveness.run_stale_q()),
        )
        yield GaugeMetricFamily(PREFIX + "runs_running", "Runs RUNNING now.", value=now["running"])
        yield GaugeMetricFamily(
            PREFIX + "runs_stale",
            "RUNNING runs with no sign of life for HERMES_STALE_RUN_MINUTES and no tool call waiting for a person.",
            value=now["stale"],
        )

    def _tool_calls(self):
        # Query 7: tool calls by status.
        family = CounterMetricFamily(PREFIX + "tool_calls", "Tool calls, by status.", labels=["status"])
        by_status = dict(ToolCall.objects.values_list("status").annotate(n=Count("pk")).order_by())
        for status, n in sorted(by_status.items()):
            family.add_metric([status], n)
        yield family
        yield GaugeMetricFamily(
            PREFIX + "tool_approvals_pending",
            "Tool calls waiting for a person's approval.",
            value=by_status.get(ToolCallStatus.PENDING_APPROVAL, 0),
        )


def metrics_text(*, accept: str = "") -> tuple[bytes, str]:
    """The scrape body and its content type: every sample of
    :class:`DatabaseCollector` in the format the ``Accept`` header asks for
    (OpenMetrics for a Prometheus server that prefers it, else the classic
    text format 0.0.4), by 7 queries. No process or
    platform samples: they would differ from worker to worker."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector())
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type
