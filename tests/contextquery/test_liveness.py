"""Signs of life and stale runs (SPEC §8): what counts as a sign of life, the
10-second write rule, the stale rule, and stale runs in the API and its filter."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contextquery import judgement, liveness, recording
from contextquery.models import Visit
from tests.contextquery.factories import CHAIN
from tests.support import envelope

pytestmark = pytest.mark.django_db

STALE = timedelta(minutes=30)


def seen(visit) -> object:
    return Visit.objects.values_list("last_seen_at", flat=True).get(pk=visit.pk)


@pytest.fixture
def running(record, clock):
    """A RUNNING run: A done, B registered and RUNNING."""
    rec = record(CHAIN, run_id="alive1")
    a = rec.visit("A")
    rec.visit("B", a, complete=False)
    return rec


def test_registration_is_a_sign_of_life(running, clock):
    assert seen(running.by["B1"]) == clock.now


def test_a_log_within_ten_seconds_of_the_last_sign_writes_nothing(running, clock):
    before = seen(running.by["B1"])
    clock.advance(9)
    recording.logs_append(visit=running.by["B1"], logs=[{"type": "TEXT", "message": "still here"}])
    assert seen(running.by["B1"]) == before


def test_a_log_more_than_ten_seconds_after_the_last_sign_is_recorded(running, clock):
    clock.advance(11)
    recording.logs_append(visit=running.by["B1"], logs=[{"type": "TEXT", "message": "still here"}])
    assert seen(running.by["B1"]) == clock.now


def test_a_heartbeat_is_a_sign_of_life(running, clock):
    clock.advance(60)
    recording.visit_heartbeat(visit=running.by["B1"])
    assert seen(running.by["B1"]) == clock.now


def test_a_context_query_is_a_sign_of_life(running, clock, ask):
    token = recording.visit_register(run=running.run, node_id="C", from_visit_uuids=[]).context_query["token"]
    c = Visit.objects.get(run=running.run, node_id="C")
    clock.advance(45)
    assert ask("path", token, {"runId": running.run.run_id}).status_code == 200
    assert seen(c) == clock.now


def test_completion_is_a_sign_of_life(running, clock):
    clock.advance(5)  # within 10 s: completion writes its own time anyway
    judgement.visit_complete(visit=running.by["B1"], status="SUCCESS", output={"status": 200, "message": "ok"})
    assert seen(running.by["B1"]) == clock.now


def test_visit_seen_never_moves_the_time_back(running, clock):
    later = clock.now + timedelta(minutes=5)
    assert liveness.visit_seen(visit_id=running.by["B1"].pk, now=later)
    assert not liveness.visit_seen(visit_id=running.by["B1"].pk, now=clock.now + timedelta(minutes=1))
    assert seen(running.by["B1"]) == later


def test_a_run_silent_for_the_stale_period_is_stale(running, clock):
    clock.advance(STALE.total_seconds() + 1)
    assert list(liveness.runs_stale()) == [running.run]


def test_a_run_with_a_recent_sign_of_life_is_not_stale(running, clock):
    clock.advance(STALE.total_seconds() - 60)
    recording.visit_heartbeat(visit=running.by["B1"])
    clock.advance(120)
    assert list(liveness.runs_stale()) == []


def test_a_finished_run_is_never_stale(running, clock):
    recording.run_finish(run=running.run, status="FAILED")
    clock.advance(STALE.total_seconds() * 10)
    assert list(liveness.runs_stale()) == []


def test_a_run_with_no_visit_is_stale_after_the_period_from_its_start(record, clock):
    rec = record(CHAIN, run_id="novisit1")
    clock.advance(STALE.total_seconds() - 1)
    assert list(liveness.runs_stale()) == []
    clock.advance(2)
    assert list(liveness.runs_stale()) == [rec.run]


def test_the_stale_period_comes_from_the_setting(running, clock, settings):
    settings.HERMES_STALE_RUN_MINUTES = 5
    clock.advance(5 * 60 + 1)
    assert list(liveness.runs_stale()) == [running.run]


def test_the_api_says_which_runs_are_stale_and_filters_them(running, record, clock, engine_client):
    fresh = record(CHAIN, run_id="fresh1")
    clock.advance(STALE.total_seconds() + 1)
    fresh.visit("A", complete=False)  # fresh shows a sign of life now
    listed = envelope(engine_client.get("/api/runs"), 200)["results"]
    assert {r["runId"]: r["stale"] for r in listed} == {"alive1": True, "fresh1": False}
    stale_only = envelope(engine_client.get("/api/runs?stale=true"), 200)["results"]
    assert [r["runId"] for r in stale_only] == ["alive1"]
    not_stale = envelope(engine_client.get("/api/runs?stale=false"), 200)["results"]
    assert [r["runId"] for r in not_stale] == ["fresh1"]


def test_one_run_in_the_api_carries_stale_and_its_last_sign_of_life(running, clock, engine_client):
    clock.advance(STALE.total_seconds() + 1)
    body = envelope(engine_client.get("/api/runs/alive1"), 200)
    assert body["stale"] is True
    assert body["lastSeenAt"] == seen(running.by["B1"]).isoformat().replace("+00:00", "Z")


def test_a_bad_stale_value_is_refused_naming_the_parameter(running, engine_client):
    body = envelope(engine_client.get("/api/runs?stale=maybe"), 422)
    assert "stale" in body["errors"]


def test_stale_marks_cost_one_query_per_page_whatever_its_length(record, engine_client):
    def list_queries() -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            envelope(engine_client.get("/api/runs"), 200)
        return [q["sql"] for q in captured.captured_queries]

    record(CHAIN, run_id="few0").visit("A", complete=False)
    few = list_queries()
    for i in range(12):
        record(CHAIN, run_id=f"many{i}").visit("A", complete=False)
    many = list_queries()
    assert len(many) == len(few)
    assert sum("last_seen_at" in sql for sql in many) == 1
