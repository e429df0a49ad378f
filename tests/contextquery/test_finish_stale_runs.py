"""``manage.py finish_stale_runs`` (SPEC §8): a run whose engine went silent is
finished as CANCELLED through the finish rule; ``--dry-run`` changes nothing."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command

from contextquery import liveness, recording
from contextquery.models import ContextToken, RunStatus, Visit, VisitStatus, WorkflowRun
from project.errors import Conflict
from tests.contextquery.factories import CHAIN

pytestmark = pytest.mark.django_db

SILENCE = timedelta(minutes=31).total_seconds()


@pytest.fixture
def silent(record, clock):
    """A run whose engine registered B, then went silent for 31 minutes; B's token is live."""
    rec = record(CHAIN, run_id="silent1", workflow_name="Nightly import")
    a = rec.visit("A")
    rec.visit("B", a, complete=False)
    clock.advance(SILENCE)
    return rec


def finish(*args) -> str:
    out = io.StringIO()
    call_command("finish_stale_runs", *args, stdout=out)
    return out.getvalue()


def test_a_run_whose_engine_went_silent_is_finished_as_cancelled(silent):
    out = finish()
    run = WorkflowRun.objects.get(run_id="silent1")
    assert run.status == RunStatus.CANCELLED and run.finished_at is not None
    assert Visit.objects.get(run=run, node_id="B").status == VisitStatus.CANCELLED
    assert "Finished run silent1 (Nightly import) as CANCELLED" in out
    assert "1 stale run(s) finished as CANCELLED" in out


def test_finishing_a_stale_run_revokes_its_tokens(silent):
    b = silent.by["B1"]
    assert ContextToken.objects.filter(visit=b, revoked_at__isnull=True).exists()
    finish()
    assert not ContextToken.objects.filter(visit=b, revoked_at__isnull=True).exists()


def test_a_dry_run_lists_the_stale_run_and_changes_nothing(silent):
    out = finish("--dry-run")
    assert "Would finish run silent1 (Nightly import)" in out
    assert "1 stale run(s)" in out and "none finished (dry run)" in out
    assert WorkflowRun.objects.get(run_id="silent1").status == RunStatus.RUNNING
    assert ContextToken.objects.filter(visit=silent.by["B1"], revoked_at__isnull=True).exists()


def test_only_the_silent_run_of_two_is_finished(record, clock):
    quiet, busy = record(CHAIN, run_id="quiet1"), record(CHAIN, run_id="busy1")
    quiet.visit("A", complete=False)
    working = busy.visit("A", complete=False)
    clock.advance(SILENCE - 120)
    recording.logs_append(visit=working, logs=[{"type": "TEXT", "message": "still working"}])
    clock.advance(120)
    finish()
    assert WorkflowRun.objects.get(run_id="busy1").status == RunStatus.RUNNING
    assert WorkflowRun.objects.get(run_id="quiet1").status == RunStatus.CANCELLED


def test_a_run_that_speaks_again_between_listing_and_finishing_is_left_running(silent, clock, monkeypatch):
    listed = liveness.runs_stale

    def listed_then_heartbeat(**kwargs):
        found = list(listed(**kwargs))
        recording.visit_heartbeat(visit=silent.by["B1"])
        return found

    monkeypatch.setattr(liveness, "runs_stale", listed_then_heartbeat)
    out = finish()
    assert WorkflowRun.objects.get(run_id="silent1").status == RunStatus.RUNNING
    assert "Left run silent1" in out


def test_a_stale_run_cannot_take_new_visits_once_finished(silent):
    finish()
    with pytest.raises(Conflict):
        recording.visit_register(run=WorkflowRun.objects.get(run_id="silent1"), node_id="C")
    assert not Visit.objects.filter(run__run_id="silent1", node_id="C").exists()
