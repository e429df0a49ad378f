"""Concurrent recording from several processes (SPEC §4.1, §4.3).

Real processes write through ``contextquery.recording`` at the same moment: on a
file SQLite database (WAL + IMMEDIATE transactions) and, when the suite runs
on PostgreSQL, on the test database (row locks). sortOrder stays unique,
iterSeq runs 1..n per node, the visit limit is never exceeded, no log is lost,
and no writer fails with "database is locked".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 4
PER_WORKER = 12

# One script, several modes: `setup` makes an engine user and a run (and one
# RUNNING visit), `register`/`logs` write after the go-file appears, `inspect`
# prints what is stored.
WORKER = r"""
import json, os, sys, time
import django
django.setup()
from contextquery import recording
from contextquery.models import Visit, VisitLog, WorkflowRun
from project.errors import Conflict

mode, run_id = sys.argv[1], sys.argv[2]
if mode == "setup":
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    user, _ = get_user_model().objects.get_or_create(username="concurrency-engine")
    user.user_permissions.add(Permission.objects.get(codename="record_run"))
    user = get_user_model().objects.get(pk=user.pk)
    graph = {"nodes": [{"id": n} for n in "ABCG"], "edges": [{"source": s, "target": t} for s, t in ("AB", "BC", "CG")]}
    run, _ = recording.run_create(user=user, graph=graph, mode="AGENTIC", run_id=run_id)
    recording.visit_register(run=run, node_id="A", from_visit_uuids=[])
    print(json.dumps({"runId": run.run_id}))
    sys.exit(0)
run = WorkflowRun.objects.get(run_id=run_id)
if mode == "inspect":
    visits = list(Visit.objects.filter(run=run).values_list("sort_order", "node_id", "iter_seq"))
    seqs = list(VisitLog.objects.filter(visit__run=run).values_list("seq", flat=True))
    messages = list(VisitLog.objects.filter(visit__run=run).values_list("message", flat=True))
    print(json.dumps({"visits": visits, "seqs": seqs, "messages": messages}))
    sys.exit(0)
count, go = int(sys.argv[3]), sys.argv[4]
while not os.path.exists(go):
    time.sleep(0.01)
out = {"ok": 0, "conflicts": 0, "errors": []}
first = Visit.objects.filter(run=run).order_by("sort_order").first()
for i in range(count):
    try:
        if mode == "register":
            recording.visit_register(run=run, node_id="ABCG"[i % 4])
        else:
            recording.logs_append(visit=first, logs=[{"type": "TEXT", "message": f"{os.getpid()}-{i}-{j}"} for j in range(5)])
        out["ok"] += 1
    except Conflict:
        out["conflicts"] += 1
    except Exception as exc:
        out["errors"].append(repr(exc))
print(json.dumps(out))
"""


def _env(**extra) -> dict:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "SQLITE_", "HERMES_CONTEXT_QUERY_"))
    }
    env.update(DJANGO_SETTINGS_MODULE="project.settings", PYTHONPATH=str(ROOT), **extra)
    return env


def _run(env, *args, timeout=120) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def sqlite_file(tmp_path_factory):
    """A migrated SQLite database file (WAL, IMMEDIATE transactions, as served)."""
    path = tmp_path_factory.mktemp("concurrency") / "db.sqlite3"
    env = _env(SQLITE_PATH=str(path))
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v0"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return path


def _backends():
    backends = ["sqlite-file"]
    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        backends.append("postgresql")
    return backends


@pytest.fixture(params=_backends())
def backend_env(request):
    """Environment for worker processes: a SQLite file, or this suite's PostgreSQL test database."""
    if request.param == "sqlite-file":
        return _env(SQLITE_PATH=str(request.getfixturevalue("sqlite_file")))
    request.getfixturevalue("transactional_db")
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return _env(DATABASE_URL=f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}")


def _race(env, mode, run_id, tmp_path, *, workers=WORKERS, count=PER_WORKER) -> list[dict]:
    """Start ``workers`` processes, release them together, return their reports."""
    go = tmp_path / f"go-{run_id}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, mode, run_id, str(count), str(go)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(workers)
    ]
    time.sleep(2.0)  # let every process finish django.setup() and wait on the go-file
    go.touch()
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def _run_id(request, tag: str) -> str:
    return f"cc-{tag}-{os.getpid()}-{request.node.callspec.id}"[:64]


@pytest.mark.slow
def test_concurrent_registrations_get_unique_sort_orders_and_consecutive_iter_seqs(backend_env, tmp_path, request):
    run_id = _run(backend_env, "setup", _run_id(request, "reg"))["runId"]
    reports = _race(backend_env, "register", run_id, tmp_path)
    assert [r["errors"] for r in reports] == [[]] * WORKERS
    assert sum(r["ok"] for r in reports) == WORKERS * PER_WORKER
    visits = _run(backend_env, "inspect", run_id)["visits"]
    assert sorted(order for order, _, _ in visits) == list(range(1, WORKERS * PER_WORKER + 2))
    for node in "ABCG":
        seqs = sorted(seq for _, n, seq in visits if n == node)
        assert seqs == list(range(1, len(seqs) + 1))


@pytest.mark.slow
def test_concurrent_registrations_never_exceed_the_visit_limit(backend_env, tmp_path, request):
    env = {**backend_env, "HERMES_CONTEXT_QUERY_MAX_VISITS_PER_RUN": "20"}
    run_id = _run(env, "setup", _run_id(request, "cap"))["runId"]
    reports = _race(env, "register", run_id, tmp_path)
    assert [r["errors"] for r in reports] == [[]] * WORKERS
    assert sum(r["ok"] for r in reports) == 19  # the setup visit is the 20th
    assert sum(r["conflicts"] for r in reports) == WORKERS * PER_WORKER - 19
    assert len(_run(env, "inspect", run_id)["visits"]) == 20


@pytest.mark.slow
def test_concurrent_log_batches_lose_nothing(backend_env, tmp_path, request):
    run_id = _run(backend_env, "setup", _run_id(request, "log"))["runId"]
    reports = _race(backend_env, "logs", run_id, tmp_path)
    assert [r["errors"] for r in reports] == [[]] * WORKERS
    stored = _run(backend_env, "inspect", run_id)
    total = WORKERS * PER_WORKER * 5
    assert sorted(stored["seqs"]) == list(range(1, total + 1))
    assert len(set(stored["messages"])) == total
