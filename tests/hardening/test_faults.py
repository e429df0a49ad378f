"""Faults: a server killed mid-ingest, and the database going away (SPEC §1, §2, §4.5).

* ``kill -9`` of gunicorn (master and workers) while engine clients register
  visits and append logs: after a restart every acknowledged write is
  stored, no batch is half-written, sortOrder/iterSeq stay consistent, and the
  acknowledged context tokens are honoured until they expire — not after.
* PostgreSQL unreachable (a TCP proxy in front of it is cut; the machine's
  server keeps running for everyone else): the API answers 503 in the
  envelope with Retry-After, ``/healthz`` 503, pages a short 503 — never a
  500 — and service comes back by itself when the proxy is restored.
"""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest
import requests

from tests.hardening.conftest import Api, login, run_with_visit
from tests.support import envelope

pytestmark = pytest.mark.slow

CLIENTS = 4
BATCH = 5
TTL = 10  # seconds: tokens must outlive the restart, then expire during the test


class Ingest(threading.Thread):
    """An engine client that registers visits and appends log batches until the server dies."""

    def __init__(self, server, token: str, run_id: str, parent: str):
        super().__init__(daemon=True)
        self.api = Api(server, token)
        self.run_id, self.parent = run_id, parent
        self.visits: dict[str, str] = {}  # acknowledged visitUuid -> its context token
        self.batches: list[str] = []  # acknowledged batch ids
        self.sent_batches: list[str] = []
        self.failures: list[str] = []

    def run(self):
        while True:
            try:
                response = self.api.post(
                    f"/api/runs/{self.run_id}/visits", {"nodeId": "B", "fromVisitUuids": [self.parent]}, timeout=10
                )
                if response.status_code != 201:
                    self.failures.append(f"register {response.status_code} {response.text[:200]}")
                    return
                data = response.json()["data"]
                visit = data["visitUuid"]
                self.visits[visit] = data["contextQuery"]["token"]
                batch = uuid.uuid4().hex
                self.sent_batches.append(batch)
                logs = [{"type": "TEXT", "message": f"{batch}:{i}"} for i in range(BATCH)]
                response = self.api.post(f"/api/runs/{self.run_id}/visits/{visit}/logs", {"logs": logs}, timeout=10)
                if response.status_code != 200:
                    self.failures.append(f"logs {response.status_code} {response.text[:200]}")
                    return
                self.batches.append(batch)
            except requests.RequestException:
                return  # the server was killed


def test_every_acknowledged_write_survives_kill_9_and_tokens_live_until_they_expire(database, gunicorn):
    db = database()
    creds = db.seed()
    env = {"HERMES_CONTEXT_QUERY_TOKEN_TTL_SECONDS": str(TTL)}
    server = gunicorn(db, workers=2, env=env)
    engine = Api(server, creds["engineToken"])
    runs = [run_with_visit(engine) for _ in range(CLIENTS)]
    clients = [Ingest(server, creds["engineToken"], r["runId"], r["a"]) for r in runs]
    for client in clients:
        client.start()
    deadline = time.monotonic() + 30
    while sum(len(c.batches) for c in clients) < 40 and time.monotonic() < deadline:
        time.sleep(0.05)
    server.kill9()
    killed_at = time.monotonic()
    for client in clients:
        client.join(timeout=30)
    assert [c.failures for c in clients] == [[]] * CLIENTS
    acknowledged_visits = {v: t for c in clients for v, t in c.visits.items()}
    acknowledged_batches = [b for c in clients for b in c.batches]
    assert len(acknowledged_batches) >= 40

    server.restart()
    stored_visits = {str(u).replace("-", "") for (u,) in db.sql("SELECT visit_uuid FROM contextquery_visit")}
    missing = [v for v in acknowledged_visits if v.replace("-", "") not in stored_visits]
    assert missing == []
    messages = [m for (m,) in db.sql("SELECT message FROM contextquery_visitlog")]
    per_batch: dict[str, int] = {}
    for message in messages:
        batch = message.split(":")[0]
        per_batch[batch] = per_batch.get(batch, 0) + 1
    assert [b for b in acknowledged_batches if per_batch.get(b) != BATCH] == []  # all acknowledged, whole
    assert set(per_batch.values()) <= {BATCH}  # an interrupted batch is absent, never half there
    for r in runs:
        rows = db.sql(
            "SELECT v.sort_order, v.iter_seq FROM contextquery_visit v JOIN contextquery_workflowrun w "
            "ON v.run_id = w.id WHERE w.run_id = %s AND v.node_id = 'B' ORDER BY v.sort_order",
            r["runId"],
        )
        assert [seq for _, seq in rows] == list(range(1, len(rows) + 1))
        orders = [order for order, _ in rows]
        assert orders == sorted(set(orders)) and orders[0] == 2  # A holds sortOrder 1

    # Tokens acknowledged before the crash are honoured after the restart until they expire.
    run_of = {v: c.run_id for c in clients for v in c.visits}
    probe = list(clients[0].visits.items())[-1]  # the newest token: its expiry is furthest away
    unused = list(clients[1].visits.items())[-1]
    assert time.monotonic() - killed_at < TTL, "the restart took longer than the token TTL"
    response = Api(server).post(
        "/internal/context/path", {"runId": run_of[probe[0]]}, headers={"X-Context-Token": probe[1]}
    )
    assert envelope(response, 200)["visitUuids"][-1] == probe[0]
    time.sleep(max(0.0, TTL + 1 - (time.monotonic() - killed_at)))
    response = Api(server).post(
        "/internal/context/path", {"runId": run_of[unused[0]]}, headers={"X-Context-Token": unused[1]}
    )
    assert "expired" in (response.json()["message"]) and envelope(response, 401) is None
    print(
        f"\nkill -9 after {len(acknowledged_visits)} visits and {len(acknowledged_batches)} log batches "
        f"acknowledged ({sum(len(c.sent_batches) for c in clients) - len(acknowledged_batches)} in flight): "
        "all stored"
    )


def test_an_unreachable_postgresql_is_503_everywhere_and_service_returns_by_itself(database, gunicorn, pg_proxy):
    db = database("postgresql")
    creds = db.seed()
    proxied = re.sub(r"@[^/]+/", f"@127.0.0.1:{pg_proxy.port}/", db.url)
    server = gunicorn(db, workers=2, env={"DATABASE_URL": proxied})
    engine, staff = Api(server, creds["engineToken"]), Api(server, creds["staffToken"])
    live = run_with_visit(engine)
    browser = login(server, "hard-staff")
    assert browser.get(server.url + "/patterns/", timeout=30).status_code == 200

    calls = {
        "healthz": lambda: Api(server).get("/healthz"),
        "run list": lambda: engine.get("/api/runs"),
        "run create": lambda: engine.post("/api/runs", {"graph": {"nodes": [{"id": "A"}], "edges": []}}),
        "logs": lambda: engine.post(
            f"/api/runs/{live['runId']}/visits/{live['b']}/logs",
            {"logs": [{"type": "TEXT", "message": "during the outage"}]},
        ),
        "detect": lambda: staff.post("/api/hermes-error-patterns/detect", {"text": "HTTP 429"}),
        "context query": lambda: Api(server).post(
            "/internal/context/output",
            {"runId": live["runId"], "nodeId": "A"},
            headers={"X-Context-Token": live["token"]},
        ),
        "pattern page": lambda: browser.get(server.url + "/patterns/", timeout=30),
        "run page": lambda: browser.get(server.url + f"/runs/{live['runId']}/", timeout=30),
        "admin": lambda: browser.get(server.url + "/admin/", timeout=30),
    }
    pg_proxy.cut()
    started = time.monotonic()
    down = {}
    for _ in range(3):  # each worker, and each of its stale pooled connections, meets the outage
        for name, call in calls.items():
            response = call()
            down.setdefault(name, set()).add((response.status_code, response.headers.get("Content-Type", "")[:16]))
    outage_seconds = time.monotonic() - started
    assert {name: s for name, s in down.items() if {code for code, _ in s} != {503}} == {}
    for name, answers in down.items():
        kind = "text/plain" if name.endswith(("page", "admin")) else "application/json"
        assert all(ctype.startswith(kind) for _, ctype in answers), (name, answers)
    body = Api(server).get("/healthz").json()
    assert body == {"status": "error", "database": "unavailable"}
    response = engine.get("/api/runs")
    assert envelope(response, 503) is None and response.headers["Retry-After"] == "5"
    assert db.scalar("SELECT COUNT(*) FROM contextquery_visitlog WHERE message = 'during the outage'") == 0

    pg_proxy.restore()
    back_at = time.monotonic()
    while True:
        answers = {name: call().status_code for name, call in calls.items()}
        if all(code in (200, 201) for code in answers.values()) or time.monotonic() - back_at > 30:
            break
        time.sleep(0.2)
    recovery = time.monotonic() - back_at
    print(
        f"\noutage: {sum(len(s) for s in down.values())} distinct answers, all 503, in {outage_seconds:.1f} s; "
        f"back by itself in {recovery:.1f} s: {answers}"
    )
    assert all(code in (200, 201) for code in answers.values()), answers
