"""``create_engine_client`` and ``loaddemo`` (SPEC §4.3, §6)."""

import logging
import re
from io import StringIO
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from contextquery.models import Visit, WorkflowRun
from tests.contextquery.factories import CHAIN
from tests.support import envelope


def run_command(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


def test_create_engine_client_prints_a_token_that_records_runs(db, client):
    lines = run_command("create_engine_client", "planner-engine")
    user = get_user_model().objects.get(username="planner-engine")
    assert user.has_perm("contextquery.record_run") and not user.has_perm("contextquery.read_all_runs")
    assert not user.has_usable_password()
    response = client.post(
        "/api/runs", {"graph": CHAIN}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {lines[-1]}"
    )
    assert envelope(response, 201)["createdBy"] == "planner-engine"


def test_create_engine_client_with_read_all_may_read_every_run(db):
    run_command("create_engine_client", "auditor", "--read-all")
    user = get_user_model().objects.get(username="auditor")
    assert user.has_perm("contextquery.record_run") and user.has_perm("contextquery.read_all_runs")


def test_create_engine_client_refuses_a_taken_name(db):
    run_command("create_engine_client", "twice")
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_engine_client", "twice", stdout=StringIO())


def test_create_engine_client_refuses_an_invalid_name(db):
    with pytest.raises(CommandError, match="not a valid user name"):
        call_command("create_engine_client", "no spaces allowed!", stdout=StringIO())
    assert get_user_model().objects.count() == 0


@pytest.fixture
def demo(db):
    from contextquery.management.commands.loaddemo import demo_load

    return demo_load()


def test_loaddemo_records_the_dag_with_two_paths_into_g(demo):
    from contextquery.recording import visit_paths

    run, visits = demo.runs["research"]
    graph = visit_paths(visit=visits["G"].visit)
    assert [p.sequence for p in graph.paths] == [["A", "B", "C", "G"], ["D", "E", "F", "G"]]
    assert run.mode == "DAG" and WorkflowRun.objects.get(pk=run.pk).status == "SUCCESS"
    assert {log.type for log in visits["A"].visit.logs.all()} >= {"THINKING", "TOOL_CALL", "TOOL_RESULT", "TODO_UPDATE"}


def test_loaddemo_records_the_agentic_flight_back_to_c(demo):
    from contextquery.recording import visit_paths

    _, visits = demo.runs["flyback"]
    graph = visit_paths(visit=visits["C2"].visit)
    assert [p.sequence for p in graph.paths] == [["A", "B", "C", "G", "C"]]
    assert graph.backtrack_edge_keys == ["G->C"]


def test_loaddemo_records_a_429_reply_failed_by_pattern_and_retried(demo):
    _, visits = demo.runs["rate_limited"]
    failed = Visit.objects.get(pk=visits["B1"].visit.pk)
    assert (failed.status, failed.failure_category, failed.retryable) == ("FAILED", "rate_limit", True)
    assert failed.matched_pattern_id is not None
    assert Visit.objects.get(pk=visits["B2"].visit.pk).iter_seq == 2


def test_loaddemo_records_a_skipped_failure_whose_downstream_runs_on(demo):
    _, visits = demo.runs["skipped"]
    failed = Visit.objects.get(pk=visits["B"].visit.pk)
    downstream = Visit.objects.get(pk=visits["C"].visit.pk)
    assert (failed.status, failed.run_action) == ("FAILED", "continue")
    assert downstream.status == "SUCCESS" and str(failed.visit_uuid) in downstream.parent_uuids


def test_loaddemo_leaves_one_visit_running_and_prints_its_token(demo):
    run, visits = demo.runs["running"]
    assert WorkflowRun.objects.get(pk=run.pk).status == "RUNNING"
    assert Visit.objects.get(pk=visits["B"].visit.pk).status == "RUNNING"
    assert any(visits["B"].context_query["token"] in line for line in demo.lines)


def test_loaddemo_says_how_long_its_token_lives_and_how_to_get_a_fresh_one(demo, client):
    run, visits = demo.runs["running"]
    text = "\n".join(demo.lines)
    assert "expires 120 s after the visit's last sign of life" in text and "run loaddemo again" in text
    fresh_url = re.search(r"POST (\S+/tokens) ", text).group(1)
    assert fresh_url.endswith(f"/api/runs/{run.run_id}/visits/{visits['B'].visit.visit_uuid}/tokens")
    api_token = run_command("create_api_token", "demo-engine")[-1]
    response = client.post(
        urlsplit(fresh_url).path, content_type="application/json", HTTP_AUTHORIZATION=f"Token {api_token}"
    )
    assert envelope(response, 201)["token"]


def test_loaddemo_logs_nothing_at_info_level(db, caplog):
    caplog.set_level(logging.INFO)
    run_command("loaddemo")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO] == []


def test_loaddemo_twice_records_new_runs(db):
    run_command("loaddemo")
    first = WorkflowRun.objects.count()
    lines = run_command("loaddemo")
    assert WorkflowRun.objects.count() == 2 * first == 10
    assert "Recorded 5 demo runs" in lines[-1]


def test_loaddemo_judges_failed_only_the_429_reply_and_the_skipped_node(demo):
    failed = {
        (name, key)
        for name, (_run, visits) in demo.runs.items()
        for key, recorded in visits.items()
        if Visit.objects.get(pk=recorded.visit.pk).status == "FAILED"
    }
    assert failed == {("rate_limited", "B1"), ("skipped", "B")}
