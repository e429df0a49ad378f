"""Recording speed over real HTTP (SPEC §4.3, issue 7): batch log appends in
rows per second (target ≥ 2,000) and visit registrations per second.

Same server and database as the context bench (``support``): an engine
client with a knox token records AGENTIC runs through ``/api/runs…``.
Appends go to one visit at a time (concurrency 1) and to four visits at once
(concurrency 4); each registration also issues a context token.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

from tests.bench import support

TARGET_ROWS_PER_S = 2000
GRAPH = {
    "nodes": [{"id": f"N{i}", "type": "agent", "name": f"Step {i}"} for i in range(20)],
    "edges": [{"source": f"N{i}", "target": f"N{i + 1}"} for i in range(19)],
}


def _engine_headers() -> dict[str, str]:
    from contextquery.management.commands.create_engine_client import engine_client_create

    _, token = engine_client_create(name=f"bench-engine-{uuid.uuid4().hex[:8]}")
    return {"Authorization": f"Token {token}"}


def _post(client: support.Client, path: str, body: dict) -> dict:
    status, data = client.post(path, json.dumps(body).encode())
    if status not in (200, 201):
        raise RuntimeError(f"POST {path} answered {status}: {data[:300]!r}")
    return json.loads(data)["data"]


def _run(client) -> str:
    return _post(client, "/api/runs", {"mode": "AGENTIC", "graph": GRAPH, "workflowId": "bench-ingest"})["runId"]


def registrations(port: int, headers: dict, *, count: int) -> float:
    """Visits registered per second, one after another (parents derived by the server)."""
    client = support.Client(port, headers)
    run_id = _run(client)
    started = time.perf_counter()
    for i in range(count):
        _post(client, f"/api/runs/{run_id}/visits", {"nodeId": f"N{i % 20}"})
    return count / (time.perf_counter() - started)


def _log_batch(start: int, size: int) -> dict:
    kinds = ("THINKING", "TOOL_CALL", "TOOL_RESULT", "TEXT")
    return {
        "logs": [
            {
                "seq": start + i,
                "type": kinds[i % 4],
                "message": f"step {start + i}: reading the sources again",
                "detail": {"tool": "web_search", "n": start + i} if i % 4 in (1, 2) else None,
            }
            for i in range(size)
        ]
    }


def appends(port: int, headers: dict, *, batch: int, batches: int, threads: int) -> float:
    """Log rows appended per second, ``threads`` visits written at once, ``batches`` batches each."""
    setup = support.Client(port, headers)
    run_id = _run(setup)
    visits = [_post(setup, f"/api/runs/{run_id}/visits", {"nodeId": f"N{i}"})["visitUuid"] for i in range(threads)]
    errors: list[BaseException] = []
    gate = threading.Barrier(threads + 1)

    def writer(visit_uuid):
        client = support.Client(port, headers)
        gate.wait()
        try:
            for n in range(batches):
                _post(client, f"/api/runs/{run_id}/visits/{visit_uuid}/logs", _log_batch(n * batch + 1, batch))
        except BaseException as exc:  # reported after the join
            errors.append(exc)

    pool = [threading.Thread(target=writer, args=(v,)) for v in visits]
    for thread in pool:
        thread.start()
    gate.wait()
    started = time.perf_counter()
    for thread in pool:
        thread.join()
    if errors:
        raise errors[0]
    return threads * batches * batch / (time.perf_counter() - started)


def run(*, scale: bool = False) -> str:
    port = support.bench_server()
    headers = _engine_headers()
    rounds = 2 if scale else 1
    rows = []
    for batch, batches in ((10, 40), (100, 20), (500, 6)):
        for threads in (1, 4):
            rate = appends(port, headers, batch=batch, batches=batches * rounds, threads=threads)
            verdict = ("ok" if rate >= TARGET_ROWS_PER_S else "MISSED") if batch >= 100 else ""
            rows.append([f"log append, {batch}/batch", threads, f"{rate:,.0f} rows/s", verdict])
    rows.append(["visit register (+ token)", 1, f"{registrations(port, headers, count=150):,.1f} visits/s", ""])
    return support.table(
        ["operation", "concurrency", "rate", f"target ≥ {TARGET_ROWS_PER_S:,} rows/s (batches ≥ 100)"],
        rows,
        note=f"{support.database_label()}, gunicorn {support.WORKERS} sync workers on loopback, knox token auth.",
    )
