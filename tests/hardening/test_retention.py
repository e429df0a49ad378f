"""Retention: ``manage.py purge_runs --older-than 30d`` (SPEC §6).

Finished runs older than the cutoff go, with their visits, logs, tokens and
reads, in batches of short transactions; running and recent runs stay; a bad
age is a clear error that deletes nothing.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from contextquery import judgement, recording, tokens
from contextquery.models import ContextRead, ContextToken, Visit, VisitLog, WorkflowRun
from contextquery.retention import duration_parse, runs_purge
from tests.contextquery.factories import CHAIN, EngineUserFactory

pytestmark = pytest.mark.django_db


def recorded_run(user, *, status: str | None, age: timedelta) -> WorkflowRun:
    """A run with two visits, logs, a token and a read; finished ``age`` ago (``status``) or running."""
    run, _ = recording.run_create(user=user, graph=CHAIN, mode="DAG")
    a = recording.visit_register(run=run, node_id="A", from_visit_uuids=[]).visit
    recording.logs_append(visit=a, logs=[{"type": "TEXT", "message": "hello"}, {"type": "THINKING", "message": "hm"}])
    judgement.visit_complete(
        visit=a, status="SUCCESS", output={"status": 200, "message": "ok", "data": {}}, final_text=None
    )
    b = recording.visit_register(run=run, node_id="B", from_visit_uuids=[str(a.visit_uuid)]).visit
    tokens.token_issue(visit=b)
    ContextRead.objects.create(visit=b, endpoint="path", status_code=200, created_at=timezone.now())
    if status:
        recording.run_finish(run=run, status=status)
        WorkflowRun.objects.filter(pk=run.pk).update(finished_at=timezone.now() - age, started_at=timezone.now() - age)
    return run


@pytest.fixture
def runs():
    user = EngineUserFactory()
    return {
        "old success": recorded_run(user, status="SUCCESS", age=timedelta(days=40)),
        "old failed": recorded_run(user, status="FAILED", age=timedelta(days=31)),
        "old cancelled": recorded_run(user, status="CANCELLED", age=timedelta(days=90)),
        "recent": recorded_run(user, status="SUCCESS", age=timedelta(days=29)),
        "old running": recorded_run(user, status=None, age=timedelta(days=400)),
    }


def remaining() -> set[str]:
    return set(WorkflowRun.objects.values_list("run_id", flat=True))


def test_purge_runs_deletes_old_finished_runs_with_everything_they_own(runs, capsys):
    WorkflowRun.objects.filter(pk=runs["old running"].pk).update(started_at=timezone.now() - timedelta(days=400))
    call_command("purge_runs", "--older-than", "30d", "--batch-size", "2")
    kept = {runs[name].run_id for name in ("recent", "old running")}
    assert remaining() == kept
    for model in (Visit, ContextToken):
        assert set(model.objects.values_list("run__run_id", flat=True)) <= kept
    assert set(VisitLog.objects.values_list("visit__run__run_id", flat=True)) == kept
    assert set(ContextRead.objects.values_list("visit__run__run_id", flat=True)) == kept
    out = capsys.readouterr().out
    assert "Deleted 3 run(s), 6 visit(s), 6 log(s)" in out and "3 read(s) in 2 batch(es)" in out


def test_each_batch_is_its_own_short_transaction(runs):
    with CaptureQueriesContext(connection) as queries:
        report = runs_purge(older_than=timedelta(days=30), batch_size=1)
    assert report.batch_runs == [1, 1, 1] and report.runs == 3
    if connection.vendor == "postgresql":  # SQLite has no row locks; each batch still commits on its own
        sql = [q["sql"] for q in queries.captured_queries]
        assert sum("SAVEPOINT" in s and "RELEASE" not in s and "ROLLBACK" not in s for s in sql) >= 3
        assert all("FOR UPDATE SKIP LOCKED" in s for s in sql if "FOR UPDATE" in s)


@pytest.mark.parametrize(
    "age, expected",
    [
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("90m", timedelta(minutes=90)),
        (" 7D ", timedelta(days=7)),
    ],
)
def test_an_age_is_a_number_of_days_hours_or_minutes(age, expected):
    assert duration_parse(age) == expected


def test_hours_and_minutes_cut_finer_than_days(runs):
    recent = runs["recent"]
    WorkflowRun.objects.filter(pk=recent.pk).update(finished_at=timezone.now() - timedelta(minutes=100))
    call_command("purge_runs", "--older-than", "90m")
    assert recent.run_id not in remaining()
    assert runs["old running"].run_id in remaining()


@pytest.mark.parametrize("age", ["30", "30x", "-5d", "0d", "d", "1.5h", "30 days", "", "9999999d"])
def test_a_bad_age_is_a_clear_error_that_deletes_nothing(runs, age):
    before = remaining()
    with pytest.raises(CommandError, match="--older-than: .*use a positive number followed by d, h or m"):
        call_command("purge_runs", f"--older-than={age}")
    assert remaining() == before


def test_an_age_longer_than_the_calendar_deletes_nothing(runs, capsys):
    call_command("purge_runs", "--older-than", "999999d")
    assert len(remaining()) == 5 and "Deleted 0 run(s)" in capsys.readouterr().out


def test_a_batch_size_below_one_is_refused(runs):
    with pytest.raises(CommandError, match="--batch-size"):
        call_command("purge_runs", "--older-than", "30d", "--batch-size", "0")
    assert len(remaining()) == 5
