"""Context queries as history grows (issue 7).

Measures each context query's p50 over real HTTP on the bench database while
it holds the probe run only, then fills it with ``gen_load_data`` (10,000 runs
× 200 visits with ``--scale``, 50 runs otherwise) and measures again: each
p50 should stay within 1.5× of its one-run figure. Then prints the plan of
every statement the endpoints run (token by hash or, on PostgreSQL, token,
budget and target in one; budget update; token slide; a node's latest visit;
ancestors; logs of a visit; visit by uuid; audit insert) plus the
recording API's visit by uuid, so a missing index shows as a full scan.

``make bench-scale`` wants PostgreSQL (``DATABASE_URL``); on SQLite the
filler is kept small. ``BENCH_SCALE_RUNS`` overrides the filler run count.
"""

from __future__ import annotations

import os
import re
import time

from tests.bench import support

TARGET_RATIO = 1.5
QUERIES = ("path", "output", "output field", "meta ALL", "auth floor")
_LABELS = [
    (r"^WITH t AS", "token, budget and target (PostgreSQL)"),
    (r'"token_hash" =', "token by hash"),
    (r'^UPDATE "contextquery_visit" SET "query_count"', "budget update"),
    (r'^UPDATE "contextquery_contexttoken"', "token slide (update)"),
    (r'FROM "contextquery_contexttoken"', "token slide (capped)"),
    (r'^INSERT INTO "contextquery_contextread"', "audit insert"),
    (r'FROM "contextquery_visitlog"', "logs of a visit"),
    (r'"parent_uuids", "hop_kinds"\s+FROM "contextquery_visit"', "ancestors of a visit (path)"),
    (r'ORDER BY "iter_seq" DESC LIMIT 1', "latest visit of a node (output, meta)"),
    (r'"visit_uuid" =', "visit by uuid"),
]


def filler_runs(*, scale: bool, postgres: bool) -> int:
    if os.environ.get("BENCH_SCALE_RUNS"):
        return int(os.environ["BENCH_SCALE_RUNS"])
    return 10_000 if scale and postgres else 50


def p50s(port: int, access: support.ProbeAccess, *, rounds: int) -> dict[str, float]:
    requests = {name: value for name, value in support.context_requests(access).items() if name in QUERIES}
    samples = support.latencies(port, {"X-Context-Token": access.token}, requests, rounds=rounds, per_round=30)
    return {name: support.percentile(values, 50) for name, values in samples.items()}


def statements(access: support.ProbeAccess) -> list[str]:
    """SQL of one request per endpoint, in-process, plus the recording API's visit by uuid."""
    from django.db import connection
    from django.test import RequestFactory, override_settings
    from django.test.utils import CaptureQueriesContext

    from contextquery.api import internal_views as views
    from contextquery.models import Visit
    from contextquery.tokens import config

    view_of = {"path": views.PathQueryView, "output": views.OutputQueryView, "meta": views.MetaQueryView}
    factory = RequestFactory()
    found: list[str] = []
    with override_settings(HERMES_CONTEXT_QUERY={**config(), "MAX_QUERIES_PER_VISIT": 10**8}):
        with CaptureQueriesContext(connection) as captured:
            for path, body in support.context_requests(access).values():
                view = view_of.get(path.rsplit("/", 1)[-1])
                if view is not None:
                    request = factory.post(
                        path, body, content_type="application/json", HTTP_X_CONTEXT_TOKEN=access.token
                    )
                    view.as_view()(request)
            Visit.objects.filter(visit_uuid=access.probe.visit_uuid).select_related("run").first()
    for query in captured.captured_queries:
        if query["sql"] not in found and not query["sql"].startswith(("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT")):
            found.append(query["sql"])
    return found


def label(sql: str) -> str:
    for pattern, name in _LABELS:
        if re.search(pattern, sql.strip(), re.S):
            return name
    return sql[:40]


def plan(sql: str) -> str:
    """The query plan in one line: the scan nodes and the index each uses."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("EXPLAIN " + sql)
            lines = [row[0].strip().lstrip("-> ").strip() for row in cursor.fetchall()]
            scans = [
                re.sub(r"\s+\(cost=.*", "", line)
                for line in lines
                if "Scan" in line or line.startswith(("Insert", "Update"))
            ]
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            scans = [row[-1] for row in cursor.fetchall()]
    return "; ".join(scans) or "(no scan)"


def run(*, scale: bool = False) -> str:
    from django.db import connection

    access = support.probe()
    port = support.bench_server()
    rounds = 10 if scale else 5
    before = p50s(port, access, rounds=rounds)
    count = filler_runs(scale=scale, postgres=connection.vendor == "postgresql")
    from tests.bench.benchapp.management.commands.gen_load_data import load_data_write

    started = time.perf_counter()
    load_data_write(runs=count, seed=int(time.time()))
    load_seconds = time.perf_counter() - started
    after = p50s(port, access, rounds=rounds)
    # The floor's work does not grow with history, so its ratio is the machine's drift between the two
    # measurements; dividing by it leaves what the history costs.
    drift = after["auth floor"] / before["auth floor"]
    rows = []
    for name in before:
        ratio = after[name] / before[name]
        verdict = "floor" if name == "auth floor" else ("ok" if ratio / drift <= TARGET_RATIO else "MISSED")
        rows.append([name, before[name], after[name], f"{ratio:.2f}×", f"{ratio / drift:.2f}×", verdict])
    visits = count * 200
    timing = support.table(
        ["request", "p50 ms, 1 run", f"p50 ms, +{count:,} runs", "ratio", "÷ floor drift", f"target ≤ {TARGET_RATIO}×"],
        rows,
        note=f"{support.database_label()}; gen_load_data wrote {count:,} runs × 200 visits ({visits:,} visits) "
        f"in {load_seconds:.0f} s ({visits / max(load_seconds, 1e-9):,.0f} visits/s).",
    )
    by_label: dict[str, str] = {}
    for sql in statements(access):
        by_label.setdefault(label(sql), sql)
    plans = support.table(["hot query", "plan at scale"], [[name, plan(sql)[:150]] for name, sql in by_label.items()])
    return timing + "\n\n" + plans
