"""Mixed load on PostgreSQL from 8 processes at once (SPEC §4.1, §4.3, §4.5).

``tests/contextquery/test_concurrency.py`` and ``test_internal_concurrency.py``
race one kind of request at a time from 4 processes. Here 8 processes fire
every kind together on one run — 2 register visits, 2 append log batches to
one visit, 2 issue tokens for another, 2 query with a third visit's token —
so the row locks of each rule meet the others'. Afterwards: no acknowledged
row is lost, sortOrder is unique and gapless, iterSeq counts 1..n per node,
and the visit, token and query limits were never exceeded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.hardening.conftest import ROOT, process_env
from tests.hardening.mixed_worker import LOG_BATCH

pytestmark = pytest.mark.slow

MAX_VISITS = 40  # the run starts with 4; 2 registrars try 30 each
COUNTS = {"register": 30, "logs": 30, "tokens": 8, "query": 40}


def test_eight_processes_of_mixed_load_lose_nothing_and_exceed_no_limit(database):
    db = database("postgresql")
    limits = {
        "HERMES_CONTEXT_QUERY_MAX_VISITS_PER_RUN": str(MAX_VISITS),
        "HERMES_CONTEXT_QUERY_TOKEN_TTL_SECONDS": "600",
    }
    env = process_env(db.var_dir, **{**db.env, **limits})
    s = json.loads(db.python("-m", "tests.hardening.mixed_worker", "setup", env=limits).stdout.strip().splitlines()[-1])
    start_at = time.time() + 8  # every process has set Django up by then
    procs = [
        (
            role,
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.hardening.mixed_worker",
                    role,
                    str(start_at),
                    str(COUNTS[role]),
                    json.dumps(s),
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
        )
        for role in COUNTS
        for _ in range(2)
    ]
    statuses: dict[str, Counter] = {role: Counter() for role in COUNTS}
    for role, proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        statuses[role].update(json.loads(out.strip().splitlines()[-1]))
        print(err.strip().splitlines()[-1])
    elapsed = time.time() - start_at
    print(
        f"\n8 processes, {sum(sum(c.values()) for c in statuses.values())} requests in {elapsed:.1f} s: "
        + ", ".join(f"{role} {dict(c)}" for role, c in statuses.items())
    )

    run_pk = db.scalar("SELECT id FROM contextquery_workflowrun WHERE run_id = %s", s["runId"])
    visits = db.sql("SELECT node_id, iter_seq, sort_order FROM contextquery_visit WHERE run_id = %s", run_pk)
    # Registrations: exactly up to the limit, the rest refused with 409; nothing else.
    assert statuses["register"] == Counter({201: MAX_VISITS - 4, 409: 2 * COUNTS["register"] - (MAX_VISITS - 4)})
    assert len(visits) == MAX_VISITS
    assert sorted(order for _, _, order in visits) == list(range(1, MAX_VISITS + 1))
    for node in "ABCG":
        assert sorted(seq for n, seq, _ in visits if n == node) == list(
            range(1, sum(n == node for n, _, _ in visits) + 1)
        )
    # Logs: every batch acknowledged, every entry stored once, seq 1..n.
    assert statuses["logs"] == Counter({200: 2 * COUNTS["logs"]})
    seqs = [
        seq
        for (seq,) in db.sql(
            "SELECT v.seq FROM contextquery_visitlog v JOIN contextquery_visit i "
            "ON v.visit_id = i.id WHERE i.visit_uuid = %s",
            s["logged"],
        )
    ]
    assert sorted(seqs) == list(range(1, 2 * COUNTS["logs"] * LOG_BATCH + 1))
    # Tokens: the registration issued one, so 3 more live at most; the rest 429.
    assert statuses["tokens"] == Counter({201: 3, 429: 2 * COUNTS["tokens"] - 3})
    live = db.scalar(
        "SELECT COUNT(*) FROM contextquery_contexttoken t JOIN contextquery_visit i ON t.visit_id = i.id "
        "WHERE i.visit_uuid = %s AND t.revoked_at IS NULL AND t.expires_at > now()",
        s["issued"],
    )
    assert live == 4
    # Queries: exactly 50 answered, every one counted and audited.
    assert statuses["query"][200] == 50 and statuses["query"][429] == 2 * COUNTS["query"] - 50
    reader = db.sql("SELECT query_count, id FROM contextquery_visit WHERE visit_uuid = %s", s["reader"])[0]
    assert reader[0] == 50
    assert (
        db.scalar("SELECT COUNT(*) FROM contextquery_contextread WHERE visit_id = %s", reader[1]) == 2 * COUNTS["query"]
    )
