"""Limits hold when requests race from several processes (SPEC §4.5).

Workers are separate Python processes (``race_worker``) that share this test's
database: on PostgreSQL the test database itself; on SQLite a file copy of
it (the test database lives in memory, which other processes cannot open).
Data is committed (``transaction=True``) before the workers start.
"""

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from contextquery.models import ContextRead, ContextToken, Visit
from tests.conftest import token_client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

REPO = Path(settings.BASE_DIR)
WORKERS = 4


class Race:
    """Runs worker processes against a database this test's data is visible in."""

    def __init__(self, tmp_path: Path):
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
        self.file = None
        if connection.vendor == "postgresql":
            s = connection.settings_dict
            auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
            self.env["DATABASE_URL"] = f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
        else:
            self.file = tmp_path / "race.sqlite3"
            self.env["SQLITE_PATH"] = str(self.file)

    def publish(self):
        """Make the committed data visible to the workers (SQLite: copy it to the file)."""
        if self.file is not None:
            connection.ensure_connection()
            target = sqlite3.connect(self.file)
            connection.connection.backup(target)
            target.close()

    def run(self, *, count: int, path: str, header: str, value: str, body: dict | None = None) -> list[int]:
        """Start ``WORKERS`` processes that each send ``count`` POSTs at the same moment; all status codes."""
        self.publish()
        start_at = time.time() + 6  # time for every worker to start Django before the start line
        args = [str(start_at), str(count), "POST", path, header, value, json.dumps(body or {})]
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.contextquery.race_worker", *args],
                cwd=REPO,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(WORKERS)
        ]
        statuses: list[int] = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-2000:]
            statuses.extend(json.loads(out.strip().splitlines()[-1]))
        return statuses

    def scalar(self, sql: str, *params):
        """One value read from the database the workers wrote to."""
        if self.file is not None:
            with sqlite3.connect(self.file) as db:
                return db.execute(sql, params).fetchone()[0]
        with connection.cursor() as cursor:
            cursor.execute(sql.replace("?", "%s"), params)
            return cursor.fetchone()[0]


@pytest.fixture
def race(tmp_path):
    return Race(tmp_path)


def test_no_51st_query_is_answered_when_queries_race_from_several_processes(race, flyback, issue):
    visit = flyback.by["C2"]
    token = issue(visit)
    statuses = race.run(
        count=15,
        path="/internal/context/output",
        header="HTTP_X_CONTEXT_TOKEN",
        value=token,
        body={"runId": flyback.run.run_id, "nodeId": "B"},
    )
    assert len(statuses) == WORKERS * 15
    assert statuses.count(200) == 50
    assert statuses.count(429) == WORKERS * 15 - 50
    assert race.scalar(f"SELECT query_count FROM {Visit._meta.db_table} WHERE id = ?", visit.pk) == 50
    audit = race.scalar(f"SELECT COUNT(*) FROM {ContextRead._meta.db_table} WHERE visit_id = ?", visit.pk)
    assert audit == WORKERS * 15


def test_no_fifth_live_token_is_issued_when_issuers_race_from_several_processes(race, flyback, engine):
    visit = flyback.by["C2"]
    api_token = token_client(engine).token
    statuses = race.run(
        count=2,
        path=f"/api/runs/{flyback.run.run_id}/visits/{visit.visit_uuid}/tokens",
        header="HTTP_AUTHORIZATION",
        value=f"Token {api_token}",
    )
    assert sorted(statuses) == [201] * 4 + [429] * (WORKERS * 2 - 4)
    live = race.scalar(f"SELECT COUNT(*) FROM {ContextToken._meta.db_table} WHERE visit_id = ?", visit.pk)
    assert live == 4
