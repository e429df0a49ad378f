"""The engine client against the live recording API (SPEC §4.3), its error
classes, and the heartbeat helper."""

from __future__ import annotations

import time
import uuid

import pytest

from contextquery.client import engine as ec
from contextquery.client.context_tools import ContextQueryConfig, bind, get_node_output
from contextquery.models import ContextToken
from tests.contextquery.agent_fixtures import OUTPUT_A, TWO_NODES, record_a_then_b, wire_envelope

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_run_a_to_b_is_recorded_and_read_back(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    assert run["status"] == "RUNNING" and len(run["runId"]) == 8
    assert (b["nodeId"], b["iterSeq"], b["fromVisitUuids"]) == ("B", 1, [a["visitUuid"]])
    visit = client.get_visit(run["runId"], b["visitUuid"])
    assert [p["sequence"] for p in visit["paths"]["paths"]] == [["A", "B"]]
    assert client.get_run(run["runId"])["workflowName"] == "Capital lookup"
    assert [v["nodeId"] for v in client.list_visits(run["runId"])["results"]] == ["A", "B"]
    assert run["runId"] in [r["runId"] for r in client.list_runs(status="RUNNING")["results"]]


def test_a_registered_visit_carries_a_context_query_the_tools_accept(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    config = ContextQueryConfig.from_context_query(b["contextQuery"])
    assert config.run_id == run["runId"] and config.visit_uuid == b["visitUuid"]
    with bind(config):
        answer = get_node_output("A", field="result")
    assert OUTPUT_A["data"]["result"] in answer


def test_logs_are_appended_in_order_and_a_repeated_seq_is_skipped(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    logs = [
        {"seq": 1, "type": "THINKING", "message": "Read A first."},
        {"seq": 2, "type": "TOOL_CALL", "message": "get_node_output", "detail": {"node_id": "A"}},
    ]
    assert client.append_logs(run["runId"], b["visitUuid"], logs)["added"] == 2
    assert client.append_logs(run["runId"], b["visitUuid"], logs[:1])["skipped"] == 1
    stored = client.get_visit(run["runId"], b["visitUuid"])["logs"]
    assert [(log["seq"], log["type"]) for log in stored] == [(1, "THINKING"), (2, "TOOL_CALL")]


def test_a_completion_with_a_failed_agent_result_is_recorded_as_failed(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    verdict = client.complete_visit(
        run["runId"],
        b["visitUuid"],
        status="SUCCESS",
        final_text="API call failed after 3 retries: HTTP 429: Rate limit reached for requests",
        agent_result={
            "failed": True,
            "failureReason": "rate_limit",
            "error": "HTTP 429",
            "completed": False,
            "turnExitReason": None,
        },
    )
    assert verdict["effectiveStatus"] == "FAILED"
    assert verdict["category"] == "rate_limit" and verdict["runAction"] == "abort"


def test_tokens_are_issued_and_revoked(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    issued = client.issue_token(run["runId"], b["visitUuid"])
    client.revoke_token(run["runId"], b["visitUuid"], issued["token"])
    with bind(ContextQueryConfig.from_context_query(issued)):
        assert "token was refused" in get_node_output("A")


def test_finishing_a_run_revokes_its_tokens(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    finished = client.finish_run(run["runId"], status="CANCELLED")
    assert finished["status"] == "CANCELLED" and finished["cancelledVisits"] == 1
    with bind(ContextQueryConfig.from_context_query(b["contextQuery"])):
        assert "token was refused" in get_node_output("A")


def test_a_bad_api_token_raises_unauthorized(engine_api, live_server):
    engine_api()
    with pytest.raises(ec.Unauthorized) as caught:
        ec.EngineClient(live_server.url, "not-a-token").list_runs()
    assert caught.value.status == 401


def test_an_unknown_run_raises_not_found(engine_api):
    with pytest.raises(ec.NotFound):
        engine_api().get_run("nope1234")


def test_a_node_missing_from_the_graph_raises_validation_failed_naming_the_field(engine_api):
    client = engine_api()
    run = client.create_run(graph=TWO_NODES)
    with pytest.raises(ec.ValidationFailed) as caught:
        client.register_visit(run["runId"], node_id="Z")
    assert "nodeId" in caught.value.errors


def test_a_repeated_run_id_with_another_body_raises_conflict(engine_api):
    client = engine_api()
    client.create_run(graph=TWO_NODES, run_id="same0001")
    assert client.create_run(graph=TWO_NODES, run_id="same0001")["runId"] == "same0001"
    with pytest.raises(ec.Conflict):
        client.create_run(graph=TWO_NODES, run_id="same0001", workflow_name="another")


def test_writing_to_another_engines_run_raises_forbidden(engine_api):
    run, a, b = record_a_then_b(engine_api("engine-1"))
    with pytest.raises(ec.Forbidden):
        engine_api("engine-2").send_heartbeat(run["runId"], b["visitUuid"])


def test_a_fifth_live_token_raises_rate_limited_with_retry_after(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    for _ in range(3):
        client.issue_token(run["runId"], b["visitUuid"])
    with pytest.raises(ec.RateLimited) as caught:
        client.issue_token(run["runId"], b["visitUuid"])
    assert caught.value.retry_after and caught.value.retry_after > 0


@pytest.mark.parametrize("status, cls", sorted(ec.ERRORS_BY_STATUS.items()))
def test_each_error_status_raises_its_own_class(scripted_server, status, cls):
    server = scripted_server(
        {
            "status": status,
            "body": wire_envelope({"errors": {"x": ["bad"]}}, status, "Told you so."),
            "headers": {"Retry-After": "7"},
        }
    )
    with pytest.raises(cls) as caught:
        ec.EngineClient(server.url, "t").finish_run("r1", status="SUCCESS")
    assert isinstance(caught.value, ec.EngineClientError)
    assert (caught.value.status, caught.value.message) == (status, "Told you so.")
    assert caught.value.retry_after == 7.0


def test_an_unexpected_status_raises_the_base_class(scripted_server):
    server = scripted_server({"status": 418, "body": "<html>teapot</html>"})
    with pytest.raises(ec.EngineClientError) as caught:
        ec.EngineClient(server.url, "t").get_run("r1")
    assert type(caught.value) is ec.EngineClientError and caught.value.status == 418


def test_an_unreachable_server_raises_a_connection_error(scripted_server):
    server = scripted_server({"status": 200})
    url = server.url
    server.__exit__(None, None, None)
    with pytest.raises(ec.EngineConnectionError):
        ec.EngineClient(url, "t", timeout=1).get_run("r1")


def test_the_heartbeat_helper_keeps_the_visit_tokens_alive(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    token = ContextToken.objects.get(visit__visit_uuid=uuid.UUID(b["visitUuid"]))
    first_expiry = token.expires_at
    with client.heartbeat(run["runId"], b["visitUuid"], interval=0.1) as heartbeat:
        deadline = time.monotonic() + 10
        while heartbeat.sent < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert heartbeat.sent >= 2 and heartbeat.failures == 0
    token.refresh_from_db()
    assert token.expires_at > first_expiry


def test_a_failing_heartbeat_is_counted_and_never_raised(scripted_server):
    server = scripted_server({"status": 500, "body": "boom"})
    with ec.EngineClient(server.url, "t").heartbeat("r1", "v1", interval=0.05) as heartbeat:
        deadline = time.monotonic() + 10
        while heartbeat.failures < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    assert heartbeat.failures >= 2 and heartbeat.sent == 0
