"""Fixtures and helpers for the context-token and internal-endpoint tests.

Runs and visits are written with the ORM directly (sortOrder and iterSeq
assigned here as the server would), so these tests depend only on the models.
Import the fixtures into a test module with ``from … import *``-free explicit
names; pytest picks them up as module attributes.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from rest_framework.test import APIClient

from contextquery import queries, recording, tokens
from contextquery.models import Visit, VisitLog, WorkflowRun
from tests.factories import UserFactory

CHAIN = {
    "nodes": [{"id": n, "type": "agent"} for n in "ABCG"],
    "edges": [{"source": s, "target": t} for s, t in ("AB", "BC", "CG")],
}
TWO_BRANCHES = {
    "nodes": [{"id": n, "type": "agent"} for n in "ABCDEFG"],
    "edges": [{"source": s, "target": t} for s, t in ("AB", "BC", "CG", "DE", "EF", "FG")],
}


class Recorder:
    """Writes a run's visits like the server would: sortOrder and iterSeq assigned in order."""

    def __init__(self, run: WorkflowRun):
        self.run = run
        self.visits: list[Visit] = []

    def visit(self, node_id, *parents: Visit, status="SUCCESS", output=None, logs=()):
        iter_seq = 1 + sum(1 for v in self.visits if v.node_id == node_id)
        if output is None and status != "RUNNING":
            output = {"status": 200, "message": "ok", "data": {"node": node_id, "iter": iter_seq}}
        parent_uuids = [str(p.visit_uuid) for p in parents]
        hop_kinds, ancestry = recording.visit_lineage(run=self.run, node_id=node_id, parents=parent_uuids)
        visit = Visit.objects.create(
            run=self.run,
            node_id=node_id,
            iter_seq=iter_seq,
            sort_order=len(self.visits) + 1,
            parent_uuids=parent_uuids,
            hop_kinds=hop_kinds,
            ancestry=ancestry,
            meta_content=queries.meta_kept({"type": t, "message": m, "detail": d} for t, m, d in logs),
            log_count=len(logs),
            log_counter=len(logs),
            status=status,
            output=output,
            started_at=timezone.now(),
            ended_at=None if status == "RUNNING" else timezone.now(),
        )
        for seq, (log_type, message, detail) in enumerate(logs, start=1):
            VisitLog.objects.create(
                visit=visit, seq=seq, type=log_type, message=message, detail=detail, timestamp=timezone.now()
            )
        self.visits.append(visit)
        return visit


@pytest.fixture
def engine(db):
    """An engine client: a user with ``contextquery.record_run``."""
    user = UserFactory(username="engine")
    user.user_permissions.add(Permission.objects.get(codename="record_run"))
    return user


@pytest.fixture
def make_run(db, engine):
    def make(graph=CHAIN, mode="AGENTIC", run_id=None):
        run = WorkflowRun.objects.create(
            run_id=run_id or f"r{WorkflowRun.objects.count() + 1:07d}",
            mode=mode,
            graph=graph,
            created_by=engine,
            started_at=timezone.now(),
        )
        return Recorder(run)

    return make


@pytest.fixture
def flyback(make_run):
    """AGENTIC A→B→C→G, then the planner flies back to C (its 2nd visit is RUNNING)."""
    rec = make_run(CHAIN, "AGENTIC")
    a = rec.visit("A", output={"status": 200, "message": "调用成功", "data": {"result": "hello", "count": 10}})
    b = rec.visit(
        "B",
        a,
        output={"status": 200, "message": "调用成功", "data": {"result": "hello", "count": 10}},
        logs=[
            ("THINKING", "第一步", None),
            ("TOOL_CALL", "search", "{q:1}"),
            ("TOOL_RESULT", "search", "结果摘要"),
            ("TODO_UPDATE", "", [{"text": "任务A", "status": "pending"}]),
            ("THINKING", "第二步", None),
            ("TOOL_CALL", "calc", "{x:2}"),
            ("TODO_UPDATE", "", [{"text": "任务A", "status": "completed"}, {"text": "任务B", "status": "pending"}]),
            ("TEXT", "done", None),
        ],
    )
    c1 = rec.visit("C", b, output={"status": 200, "message": "first", "data": {"draft": 1}})
    g = rec.visit("G", c1, output={"status": 400, "message": "needs work", "data": {"verdict": "redo"}})
    c2 = rec.visit("C", g, status="RUNNING")
    rec.by = {"A": a, "B": b, "C1": c1, "G": g, "C2": c2}
    return rec


@pytest.fixture
def branches(make_run):
    """DAG A→B→C→G and D→E→F→G; C and F are running in parallel (siblings)."""
    rec = make_run(TWO_BRANCHES, "DAG")
    a = rec.visit("A")
    d = rec.visit("D")
    b = rec.visit("B", a)
    e = rec.visit("E", d)
    c = rec.visit("C", b, status="RUNNING")
    f = rec.visit("F", e)
    rec.by = {"A": a, "B": b, "C": c, "D": d, "E": e, "F": f}
    return rec


@pytest.fixture
def issue():
    """``issue(visit) -> str``: a fresh token's text for ``visit``."""
    return lambda visit: tokens.token_issue(visit=visit).token


class Asker:
    """Posts to ``/internal/context/<endpoint>`` as the agent side does."""

    def __init__(self):
        self.client = APIClient()

    def __call__(self, endpoint, token=None, body=None, *, raw=None, remote_addr="127.0.0.1", slash=""):
        headers = {"REMOTE_ADDR": remote_addr}
        if token is not None:
            headers["HTTP_X_CONTEXT_TOKEN"] = token
        content = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
        return self.client.generic(
            "POST", f"/internal/context/{endpoint}{slash}", content, content_type="application/json", **headers
        )


@pytest.fixture
def ask():
    return Asker()


class Clock:
    """A controllable ``django.utils.timezone.now``."""

    def __init__(self, start: datetime):
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, seconds: float):
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    # Starts at the real time, so rows written before the clock froze stay consistent.
    frozen = Clock(timezone.now())
    monkeypatch.setattr(timezone, "now", frozen)
    return frozen


def body_of(response) -> dict:
    """The envelope of a response, checked for its shape."""
    envelope = response.json()
    assert set(envelope) == {"code", "message", "data"} and envelope["code"] == response.status_code
    return envelope
