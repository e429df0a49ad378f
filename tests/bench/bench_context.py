"""Context queries over real HTTP at the server's floor (SPEC §4.5, issue 14).

gunicorn with 2 sync workers on loopback, against a fresh database (SQLite
file, or PostgreSQL when ``DATABASE_URL`` is set) holding the probe run: a
200-visit AGENTIC run with flights back and 50 KB of logs on one visit. For
``/healthz`` (the same server's cheapest answer), path, output, output with a
dotted field, meta ALL and the two floors: p50 and p99 at concurrency 1, p50
as a multiple of ``/healthz``'s, SQL statements and commits per query
(counted in-process), requests per second at concurrency 8, and the output
query's throughput with one and with two instances sharing the database.

Targets (issue 14): every endpoint's p50 ≤ 2× ``/healthz``'s; p99 ≤ 5 ms for
path and output, ≤ 10 ms for meta ALL. The seed's in-memory p99 baselines
are printed beside them.
"""

from __future__ import annotations

from tests.bench import support

TARGET_P50_RATIO = 2.0
TARGET_P99_MS = {"path": 5.0, "output": 5.0, "output field": 5.0, "meta ALL": 10.0}
#: The seed note's in-memory p99 baselines (internal-context-query-spec §6).
SEED_BASELINE_MS = {"path": 5.0, "output": 3.0, "output field": 3.0, "meta ALL": 10.0}
FLOORS = ("/healthz", "auth floor", "plain floor")


def all_requests(access: support.ProbeAccess) -> dict[str, tuple[str, bytes | None]]:
    """``/healthz`` (a GET) first, then the context requests."""
    return {"/healthz": ("/healthz", None), **support.context_requests(access)}


def _transaction_control(sql: str) -> bool:
    return sql.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "SET LOCAL"))


def query_counts(access: support.ProbeAccess) -> tuple[dict[str, int], dict[str, int]]:
    """(SQL statements, commits) per request of each real endpoint, run
    in-process on the bench database. A commit is an atomic block's commit or
    a write run outside one (autocommit)."""
    from django.db import connection
    from django.test import RequestFactory, override_settings
    from django.test.utils import CaptureQueriesContext

    from contextquery.api import internal_views as views
    from contextquery.tokens import config

    factory = RequestFactory()
    view_of = {"path": views.PathQueryView, "output": views.OutputQueryView, "meta": views.MetaQueryView}
    statements, commits = {}, {}
    committed = [0]
    real_commit = connection._commit

    def counting_commit():
        committed[0] += 1
        return real_commit()

    def autocommitted_writes(execute, sql, params, many, context):
        statement = sql.lstrip().upper()
        writes = statement.startswith(("INSERT", "UPDATE", "DELETE")) or (
            statement.startswith("WITH") and "UPDATE " in statement
        )
        if not connection.in_atomic_block and writes:
            committed[0] += 1
        return execute(sql, params, many, context)

    connection._commit = counting_commit
    try:
        with (
            override_settings(HERMES_CONTEXT_QUERY={**config(), "MAX_QUERIES_PER_VISIT": 10**8}),
            connection.execute_wrapper(autocommitted_writes),
        ):
            for name, (path, body) in support.context_requests(access).items():
                endpoint = path.rsplit("/", 1)[-1]
                if endpoint not in view_of:
                    continue
                request = factory.post(path, body, content_type="application/json", HTTP_X_CONTEXT_TOKEN=access.token)
                committed[0] = 0
                with CaptureQueriesContext(connection) as captured:
                    response = view_of[endpoint].as_view()(request)
                if response.status_code != 200:
                    raise RuntimeError(f"{name} answered {response.status_code} in-process: {response.content[:300]!r}")
                statements[name] = sum(1 for q in captured.captured_queries if not _transaction_control(q["sql"]))
                commits[name] = committed[0]
    finally:
        del connection._commit
    return statements, commits


def measure(*, rounds: int, per_round: int, seconds: float) -> dict:
    """Latency samples, requests/s at c=8, SQL statements and commits per
    query by name, and the output query's requests/s on one and two instances."""
    access = support.probe()
    port = support.bench_server()
    headers = {"X-Context-Token": access.token}
    requests = all_requests(access)
    samples = support.latencies(port, headers, requests, rounds=rounds, per_round=per_round)
    rates = {
        name: support.throughput(port, headers, path, body, seconds=seconds) for name, (path, body) in requests.items()
    }
    statements, commits = query_counts(access)
    path, body = requests["output"]
    second = support.bench_server(1)
    scale = {
        "one": support.throughput([port], headers, path, body, seconds=seconds),
        "two": support.throughput([port, second], headers, path, body, seconds=seconds),
    }
    return {"samples": samples, "rates": rates, "statements": statements, "commits": commits, "scale": scale}


def report(figures: dict) -> str:
    samples = figures["samples"]
    health_p50 = support.percentile(samples["/healthz"], 50)
    rows = []
    for name, values in samples.items():
        p50, p99 = support.percentile(values, 50), support.percentile(values, 99)
        ratio = p50 / health_p50
        if name in FLOORS:
            verdict = "floor"
        else:
            verdict = "ok" if ratio <= TARGET_P50_RATIO and p99 <= TARGET_P99_MS[name] else "MISSED"
        rows.append(
            [
                name,
                p50,
                p99,
                f"{ratio:.2f}×",
                f"≤ {TARGET_P99_MS[name]:g}" if name in TARGET_P99_MS else "",
                figures["statements"].get(name, ""),
                figures["commits"].get(name, ""),
                figures["rates"][name],
                f"< {SEED_BASELINE_MS[name]:g}" if name in SEED_BASELINE_MS else "",
                verdict,
            ]
        )
    main = support.table(
        [
            "request",
            "p50 ms",
            "p99 ms",
            "p50 ÷ healthz",
            "p99 target",
            "SQL/query",
            "commits/query",
            "req/s c=8",
            "seed p99 (in-memory)",
            "target",
        ],
        rows,
        note=f"{support.database_label()}, gunicorn {support.WORKERS} sync workers on loopback; "
        f"{len(next(iter(samples.values())))} requests each at c=1. Targets: p50 ≤ {TARGET_P50_RATIO:g}× "
        "/healthz's p50; p99 ≤ 5 ms for path and output, ≤ 10 ms for meta ALL.",
    )
    one, two = figures["scale"]["one"], figures["scale"]["two"]
    scale = support.table(
        ["output query, c=8", "req/s", "× one instance"],
        [["one instance", one, "1.00×"], ["two instances", two, f"{two / one:.2f}×"]],
        note=f"Two instances of {support.WORKERS} workers each share the database; the 8 clients alternate "
        "between them. On a machine with few cores they share the same CPUs, so the ratio shows the cost "
        "of sharing the database, not the gain of a second machine.",
    )
    return main + "\n\n" + scale


def run(*, scale: bool = False) -> str:
    figures = measure(rounds=10, per_round=100 if scale else 40, seconds=3.0 if scale else 2.0)
    return report(figures)


if __name__ == "__main__":  # python -m tests.bench.bench_context
    from tests.bench.run import main

    raise SystemExit(main(["bench_context"]))
