"""Context queries over real HTTP (SPEC §4.5, issue 7).

gunicorn with 2 sync workers on loopback, against a fresh database (SQLite
file, or PostgreSQL when ``DATABASE_URL`` is set) holding the probe run: a
200-visit AGENTIC run with flights back and 50 KB of logs on one visit. For
path, output, output with a dotted field, meta ALL and the two floors: p50 and
p99 at concurrency 1, requests per second at concurrency 8, and SQL queries
per request (counted in-process). Targets: each endpoint's p99 ≤ 1.5× the
authenticated floor's p99 and ≤ 10 ms. The seed's in-memory baselines are
printed beside them.
"""

from __future__ import annotations

from tests.bench import support

TARGET_P99_MS = 10.0
TARGET_RATIO = 1.5
#: The seed note's in-memory p99 baselines (internal-context-query-spec §6).
SEED_BASELINE_MS = {"path": 5.0, "output": 3.0, "output field": 3.0, "meta ALL": 10.0}
FLOORS = ("auth floor", "plain floor")


def query_counts(access: support.ProbeAccess) -> dict[str, int]:
    """SQL statements per request of each real endpoint, run in-process on the bench database."""
    from django.db import connection
    from django.test import RequestFactory, override_settings
    from django.test.utils import CaptureQueriesContext

    from contextquery.api import internal_views as views
    from contextquery.tokens import config

    factory = RequestFactory()
    view_of = {"path": views.PathQueryView, "output": views.OutputQueryView, "meta": views.MetaQueryView}
    counts = {}
    with override_settings(HERMES_CONTEXT_QUERY={**config(), "MAX_QUERIES_PER_VISIT": 10**8}):
        for name, (path, body) in support.context_requests(access).items():
            endpoint = path.rsplit("/", 1)[-1]
            if endpoint not in view_of:
                continue
            request = factory.post(path, body, content_type="application/json", HTTP_X_CONTEXT_TOKEN=access.token)
            with CaptureQueriesContext(connection) as captured:
                response = view_of[endpoint].as_view()(request)
                response.render()
            if response.status_code != 200:
                raise RuntimeError(f"{name} answered {response.status_code} in-process: {response.content[:300]!r}")
            counts[name] = len(captured.captured_queries)
    return counts


def measure(*, rounds: int, per_round: int, seconds: float) -> tuple[dict, dict, dict]:
    """(latency samples by name, requests/s at concurrency 8 by name, SQL per request by name)."""
    access = support.probe()
    port = support.bench_server()
    headers = {"X-Context-Token": access.token}
    requests = support.context_requests(access)
    samples = support.latencies(port, headers, requests, rounds=rounds, per_round=per_round)
    rates = {
        name: support.throughput(port, headers, path, body, seconds=seconds) for name, (path, body) in requests.items()
    }
    return samples, rates, query_counts(access)


def report(samples: dict, rates: dict, counts: dict) -> str:
    floor_p99 = support.percentile(samples["auth floor"], 99)
    rows = []
    for name, values in samples.items():
        p50, p99 = support.percentile(values, 50), support.percentile(values, 99)
        ratio = p99 / floor_p99
        if name in FLOORS:
            verdict = "floor"
        else:
            verdict = "ok" if p99 <= TARGET_P99_MS and ratio <= TARGET_RATIO else "MISSED"
        baseline = f"< {SEED_BASELINE_MS[name]:g}" if name in SEED_BASELINE_MS else ""
        rows.append([name, p50, p99, f"{ratio:.2f}×", rates[name], counts.get(name, ""), baseline, verdict])
    return support.table(
        ["request", "p50 ms", "p99 ms", "p99/auth floor", "req/s c=8", "SQL/req", "seed p99 ms (in-memory)", "target"],
        rows,
        note=f"{support.database_label()}, gunicorn {support.WORKERS} sync workers on loopback; "
        f"{len(next(iter(samples.values())))} requests each at c=1. Target: p99 ≤ {TARGET_P99_MS:g} ms "
        f"and ≤ {TARGET_RATIO}× the auth floor's p99.",
    )


def run(*, scale: bool = False) -> str:
    samples, rates, counts = measure(rounds=10, per_round=100 if scale else 40, seconds=3.0 if scale else 2.0)
    return report(samples, rates, counts)


if __name__ == "__main__":  # python -m tests.bench.bench_context
    from tests.bench.run import main

    raise SystemExit(main(["bench_context"]))
