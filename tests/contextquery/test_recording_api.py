"""The engine-facing recording API, ``/api/runs`` (SPEC §4.3), through the HTTP client."""

import json

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contextquery.models import ContextToken, Visit, VisitLog, WorkflowRun
from contextquery.tokens import token_hash
from tests.conftest import token_client
from tests.contextquery.factories import CHAIN, TWO_BRANCHES, VisitFactory, VisitLogFactory, WorkflowRunFactory
from tests.factories import UserFactory
from tests.support import envelope

RATE_LIMIT_REPLY = "API call failed after 3 retries: HTTP 429: Too Many Requests."


def post(client, url, body):
    return client.post(url, body, format="json")


@pytest.fixture
def run_id(engine_client):
    """A DAG run with the two-branch canvas, created by ``engine_client``."""
    return envelope(post(engine_client, "/api/runs", {"graph": TWO_BRANCHES, "workflowName": "Report"}), 201)["runId"]


def register(client, run_id, body, status=201):
    return envelope(post(client, f"/api/runs/{run_id}/visits", body), status)


# --------------------------------------------------------------------------- auth


def test_an_anonymous_call_gets_401_with_www_authenticate(anon_client):
    response = anon_client.get("/api/runs")
    assert envelope(response, 401) is None and response["WWW-Authenticate"].startswith("Token")


def test_a_user_without_record_run_cannot_create_a_run(user_client):
    response = post(user_client, "/api/runs", {"graph": CHAIN})
    assert envelope(response, 403) is None and "record_run" in response.json()["message"]


def test_a_user_without_view_permission_cannot_read_runs(user_client):
    assert envelope(user_client.get("/api/runs"), 403) is None


def test_djangos_view_permission_alone_reads_no_run(db, run_id):
    """``view_workflowrun`` governs the admin only (SPEC §4.3)."""
    user = UserFactory()
    user.user_permissions.add(Permission.objects.get(codename="view_workflowrun"))
    envelope(token_client(user).get(f"/api/runs/{run_id}"), 403)


def test_an_engine_client_reads_its_own_runs_only(engine_client, other_engine_client, run_id):
    theirs = envelope(post(other_engine_client, "/api/runs", {"graph": CHAIN}), 201)["runId"]
    assert [r["runId"] for r in envelope(engine_client.get("/api/runs"), 200)["results"]] == [run_id]
    assert [r["runId"] for r in envelope(other_engine_client.get("/api/runs"), 200)["results"]] == [theirs]


@pytest.mark.parametrize("path", ["", "/visits"])
def test_another_engine_clients_run_is_404_to_read(other_engine_client, run_id, path):
    response = other_engine_client.get(f"/api/runs/{run_id}{path}")
    assert envelope(response, 404) is None and response.json()["message"] == f"Run '{run_id}' does not exist."


def test_another_engine_clients_visit_is_404_to_read(engine_client, other_engine_client, run_id):
    visit = register(engine_client, run_id, {"nodeId": "A"})["visitUuid"]
    envelope(other_engine_client.get(f"/api/runs/{run_id}/visits/{visit}"), 404)


def test_a_reader_may_read_but_not_record(reader_client, run_id):
    assert envelope(reader_client.get(f"/api/runs/{run_id}"), 200)["runId"] == run_id
    envelope(post(reader_client, f"/api/runs/{run_id}/finish", {"status": "SUCCESS"}), 403)


def test_staff_may_read_runs(staff_client, run_id):
    assert envelope(staff_client.get("/api/runs"), 200)["count"] == 1


def test_another_engine_may_not_write_to_the_run(other_engine_client, run_id):
    response = post(other_engine_client, f"/api/runs/{run_id}/visits", {"nodeId": "A"})
    assert envelope(response, 403) is None
    assert Visit.objects.count() == 0


def test_a_superuser_may_write_to_any_run(run_id):
    client = token_client(UserFactory(is_staff=True, is_superuser=True))
    assert register(client, run_id, {"nodeId": "A"})["nodeId"] == "A"


# --------------------------------------------------------------------------- runs


def test_creating_a_run_answers_201_with_the_run(engine_client, engine_user):
    data = envelope(post(engine_client, "/api/runs", {"graph": CHAIN, "mode": "AGENTIC", "workflowId": "wf-1"}), 201)
    assert len(data["runId"]) == 8 and data["mode"] == "AGENTIC" and data["status"] == "RUNNING"
    assert data["createdBy"] == engine_user.username and data["visitCount"] == 0


def test_an_equal_repeated_create_answers_200_with_the_stored_run(engine_client):
    body = {"runId": "run-7", "graph": CHAIN, "workflowName": "W"}
    first = envelope(post(engine_client, "/api/runs", body), 201)
    assert envelope(post(engine_client, "/api/runs/", body), 200) == first
    assert WorkflowRun.objects.count() == 1


def test_a_repeated_create_with_a_different_body_is_409(engine_client):
    post(engine_client, "/api/runs", {"runId": "run-7", "graph": CHAIN})
    response = post(engine_client, "/api/runs", {"runId": "run-7", "graph": CHAIN, "mode": "AGENTIC"})
    assert envelope(response, 409) is None and "mode" in response.json()["message"]


def test_a_repeated_create_from_another_engine_is_409(engine_client, other_engine_client):
    post(engine_client, "/api/runs", {"runId": "run-7", "graph": CHAIN})
    envelope(post(other_engine_client, "/api/runs", {"runId": "run-7", "graph": CHAIN}), 409)


def test_an_invalid_graph_is_422_naming_the_field(engine_client):
    response = post(engine_client, "/api/runs", {"graph": {"nodes": [{"id": "A", "failStrategy": "retry"}]}})
    data = envelope(response, 422)
    assert list(data["errors"]) == ["graph.nodes[0].failStrategy"]
    assert "abort, skip" in response.json()["message"]
    assert WorkflowRun.objects.count() == 0


@pytest.mark.parametrize("body, field", [({}, "graph"), ({"graph": CHAIN, "mode": "LOOP"}, "mode")])
def test_a_missing_or_bad_run_field_is_422(engine_client, body, field):
    assert field in envelope(post(engine_client, "/api/runs", body), 422)["errors"]


def test_run_detail_and_unknown_run(engine_client, run_id):
    assert envelope(engine_client.get(f"/api/runs/{run_id}/"), 200)["graph"]["edges"][0] == {
        "source": "A",
        "target": "B",
    }
    assert "nope" in engine_client.get("/api/runs/nope").json()["message"]
    envelope(engine_client.get("/api/runs/nope"), 404)


def test_the_run_list_filters_by_status_mode_workflow_and_search(engine_client, engine_user):
    WorkflowRunFactory(
        run_id="alpha001", mode="AGENTIC", workflow_id="wf-a", workflow_name="Alpha", created_by=engine_user
    )
    WorkflowRunFactory(
        run_id="beta0002", status="SUCCESS", workflow_id="wf-b", workflow_name="Beta", created_by=engine_user
    )

    def ids(query):
        return [r["runId"] for r in envelope(engine_client.get(f"/api/runs?{query}"), 200)["results"]]

    assert ids("status=SUCCESS") == ["beta0002"]
    assert ids("mode=AGENTIC") == ["alpha001"]
    assert ids("workflowId=wf-a") == ["alpha001"]
    assert ids("search=bet") == ["beta0002"]
    assert ids("search=Alph") == ["alpha001"]
    assert set(ids("startedAfter=2000-01-01T00:00:00Z")) == {"alpha001", "beta0002"}
    assert ids("startedBefore=2000-01-01T00:00:00Z") == []


def test_a_bad_filter_value_is_422(engine_client):
    assert "status" in envelope(engine_client.get("/api/runs?status=DONE"), 422)["errors"]


def test_the_run_list_paginates(engine_client, engine_user):
    WorkflowRunFactory.create_batch(3, created_by=engine_user)
    data = envelope(engine_client.get("/api/runs?pageSize=2"), 200)
    assert data["count"] == 3 and len(data["results"]) == 2 and data["next"]


def test_the_run_list_costs_a_fixed_number_of_queries(engine_client, engine_user):
    WorkflowRunFactory.create_batch(2, created_by=engine_user)
    with CaptureQueriesContext(connection) as few:
        engine_client.get("/api/runs")
    WorkflowRunFactory.create_batch(5, created_by=engine_user)
    with CaptureQueriesContext(connection) as many:
        engine_client.get("/api/runs")
    assert len(many) == len(few)


# --------------------------------------------------------------------------- visits


def test_registering_a_visit_answers_201_with_the_context_query_object(engine_client, run_id):
    data = register(engine_client, run_id, {"nodeId": "A", "fromVisitUuids": [], "input": {"prompt": "hi"}})
    assert (data["sortOrder"], data["iterSeq"], data["fromVisitUuids"], data["status"]) == (1, 1, [], "RUNNING")
    assert data["nodeName"] == "Node A" and data["input"] == {"prompt": "hi"}
    cq = data["contextQuery"]
    assert set(cq) == {"base_url", "token", "run_id", "visit_uuid", "expires_at"}
    assert (cq["run_id"], cq["visit_uuid"]) == (run_id, data["visitUuid"])


def test_a_single_from_visit_uuid_is_accepted(engine_client, run_id):
    a = register(engine_client, run_id, {"nodeId": "A"})
    b = register(engine_client, run_id, {"nodeId": "B", "fromVisitUuid": a["visitUuid"]})
    assert b["fromVisitUuids"] == [a["visitUuid"]]


def test_a_repeated_register_answers_200_with_a_fresh_token(engine_client, run_id):
    body = {"visitUuid": "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "nodeId": "A"}
    first = register(engine_client, run_id, body)
    again = register(engine_client, run_id, body, status=200)
    assert again["visitUuid"] == first["visitUuid"]
    assert again["contextQuery"]["token"] != first["contextQuery"]["token"]


def test_a_repeated_register_succeeds_with_four_live_tokens_and_the_oldest_gives_way(engine_client, run_id):
    body = {"visitUuid": "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "nodeId": "A"}
    first = register(engine_client, run_id, body)["contextQuery"]["token"]
    for _ in range(3):
        envelope(post(engine_client, f"/api/runs/{run_id}/visits/{body['visitUuid']}/tokens", {}), 201)
    envelope(post(engine_client, f"/api/runs/{run_id}/visits/{body['visitUuid']}/tokens", {}), 429)
    again = register(engine_client, run_id, body, status=200)["contextQuery"]["token"]
    live = ContextToken.objects.filter(visit__visit_uuid=body["visitUuid"], revoked_at__isnull=True)
    assert live.count() == 4 and not live.filter(token_hash=token_hash(first)).exists()
    assert live.filter(token_hash=token_hash(again)).exists()


def test_a_repeated_register_with_another_body_is_409(engine_client, run_id):
    body = {"visitUuid": "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "nodeId": "A"}
    register(engine_client, run_id, body)
    envelope(post(engine_client, f"/api/runs/{run_id}/visits", {**body, "nodeId": "D"}), 409)


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "nodeId"),
        ({"nodeId": "Z"}, "nodeId"),
        ({"nodeId": "B", "fromVisitUuids": ["not-a-uuid"]}, "fromVisitUuids"),
        ({"nodeId": "B", "fromVisitUuids": ["6f1c2d8e-0000-4000-8000-000000000000"]}, "fromVisitUuids[0]"),
        ({"nodeId": "B", "fromVisitUuids": "x"}, "fromVisitUuids"),
        ({"nodeId": "A", "visitUuid": "12"}, "visitUuid"),
    ],
)
def test_a_bad_registration_is_422_and_stores_nothing(engine_client, run_id, body, field):
    errors = envelope(post(engine_client, f"/api/runs/{run_id}/visits", body), 422)["errors"]
    assert any(key == field or key.startswith((field + ".", field + "[")) for key in errors), errors
    assert Visit.objects.count() == 0


def test_a_visit_on_a_finished_run_is_409(engine_client, run_id):
    envelope(post(engine_client, f"/api/runs/{run_id}/finish", {"status": "SUCCESS"}), 200)
    response = post(engine_client, f"/api/runs/{run_id}/visits", {"nodeId": "A"})
    assert envelope(response, 409) is None and "finished" in response.json()["message"]


def test_the_visit_beyond_the_limit_is_409_naming_it(engine_client, run_id, settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "MAX_VISITS_PER_RUN": 2}
    register(engine_client, run_id, {"nodeId": "A"})
    register(engine_client, run_id, {"nodeId": "D"})
    response = post(engine_client, f"/api/runs/{run_id}/visits", {"nodeId": "B"})
    assert envelope(response, 409) is None and "MAX_VISITS_PER_RUN" in response.json()["message"]
    assert Visit.objects.count() == 2


def test_the_visit_list_is_by_sort_order_and_filters_by_node(engine_client, run_id):
    for node in "ADB":
        register(engine_client, run_id, {"nodeId": node})
    data = envelope(engine_client.get(f"/api/runs/{run_id}/visits"), 200)
    assert [v["nodeId"] for v in data["results"]] == ["A", "D", "B"]
    filtered = envelope(engine_client.get(f"/api/runs/{run_id}/visits?nodeId=D"), 200)["results"]
    assert [v["nodeId"] for v in filtered] == ["D"]


def test_the_visit_detail_has_logs_paths_and_reads(engine_client, run_id):
    a = register(engine_client, run_id, {"nodeId": "A"})
    b = register(engine_client, run_id, {"nodeId": "B", "fromVisitUuids": [a["visitUuid"]]})
    post(
        engine_client,
        f"/api/runs/{run_id}/visits/{b['visitUuid']}/logs",
        {"logs": [{"type": "TODO_UPDATE", "detail": [{"text": "x", "status": "pending"}]}]},
    )
    data = envelope(engine_client.get(f"/api/runs/{run_id}/visits/{b['visitUuid']}"), 200)
    assert data["logs"][0]["detail"] == [{"text": "x", "status": "pending"}]
    assert data["paths"]["paths"] == [
        {
            "sequence": ["A", "B"],
            "visitUuids": [a["visitUuid"], b["visitUuid"]],
            "hasBacktrack": False,
            "truncated": False,
        }
    ]
    assert data["reads"] == []


def test_the_visit_detail_carries_the_first_hundred_logs_and_says_where_the_rest_are(engine_client, run_id):
    a = register(engine_client, run_id, {"nodeId": "A"})
    url = f"/api/runs/{run_id}/visits/{a['visitUuid']}"
    for start in range(0, 250, 50):
        batch = [{"seq": start + i + 1, "type": "TEXT", "message": f"line {start + i + 1}"} for i in range(50)]
        envelope(post(engine_client, f"{url}/logs", {"logs": batch}), 200)
    detail = envelope(engine_client.get(url), 200)
    assert len(detail["logs"]) == 100 and detail["logCount"] == 250 and detail["logsUrl"] == f"{url}/logs"
    page = envelope(engine_client.get(f"{url}/logs", {"page": 3, "pageSize": 100}), 200)
    assert page["count"] == 250 and [log["seq"] for log in page["results"]] == list(range(201, 251))


def test_a_visits_logs_list_filters_by_type(engine_client, run_id):
    a = register(engine_client, run_id, {"nodeId": "A"})
    url = f"/api/runs/{run_id}/visits/{a['visitUuid']}/logs"
    post(engine_client, url, {"logs": [{"type": "THINKING", "message": "hm"}, {"type": "TEXT"}]})
    assert [log["type"] for log in envelope(engine_client.get(url, {"type": "THINKING"}), 200)["results"]] == [
        "THINKING"
    ]
    envelope(engine_client.get(url, {"type": "SHOUT"}), 422)


def test_another_engine_clients_logs_are_404(engine_client, other_engine_client, run_id):
    a = register(engine_client, run_id, {"nodeId": "A"})
    envelope(other_engine_client.get(f"/api/runs/{run_id}/visits/{a['visitUuid']}/logs"), 404)


def test_a_todo_update_of_another_shape_is_422_and_stores_nothing(engine_client, run_id):
    a = register(engine_client, run_id, {"nodeId": "A"})
    body = {"logs": [{"type": "TODO_UPDATE", "detail": {"todos": [{"text": "x", "status": "pending"}]}}]}
    data = envelope(post(engine_client, f"/api/runs/{run_id}/visits/{a['visitUuid']}/logs", body), 422)
    assert list(data["errors"]) == ["logs[0].detail"]
    assert VisitLog.objects.count() == 0


def test_an_unknown_visit_is_404(engine_client, run_id):
    envelope(engine_client.get(f"/api/runs/{run_id}/visits/6f1c2d8e-0000-4000-8000-000000000000"), 404)
    envelope(post(engine_client, f"/api/runs/{run_id}/visits/garbage/logs", {"logs": []}), 404)


def test_a_visit_of_another_run_is_404_under_this_run(engine_client, engine_user, run_id):
    other = VisitFactory(run=WorkflowRunFactory(created_by=engine_user))
    envelope(engine_client.get(f"/api/runs/{run_id}/visits/{other.visit_uuid}"), 404)


# --------------------------------------------------------------------------- logs, heartbeat, complete


@pytest.fixture
def visit_url(engine_client, run_id):
    return f"/api/runs/{run_id}/visits/{register(engine_client, run_id, {'nodeId': 'A'})['visitUuid']}"


def test_a_log_batch_is_appended_in_order_and_a_retry_adds_nothing(engine_client, visit_url):
    batch = {
        "logs": [
            {"seq": 1, "type": "THINKING", "message": "plan", "timestamp": "2026-01-01T00:00:00Z"},
            {"seq": 2, "type": "TOOL_CALL", "message": "search", "detail": {"q": "x"}},
        ]
    }
    assert envelope(post(engine_client, f"{visit_url}/logs", batch), 200)["added"] == 2
    again = envelope(post(engine_client, f"{visit_url}/logs/", batch), 200)
    assert (again["added"], again["skipped"], again["lastSeq"]) == (0, 2, 2)
    assert list(VisitLog.objects.values_list("seq", "type")) == [(1, "THINKING"), (2, "TOOL_CALL")]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"logs": {"type": "TEXT"}}, "logs"),
        ({}, "logs"),
        ({"logs": [{"type": "SHOUT"}]}, "logs[0].type"),
        ({"logs": [{"type": "TEXT", "seq": 0}]}, "logs[0].seq"),
        ({"logs": [{"type": "TEXT", "timestamp": "yesterday"}]}, "logs[0].timestamp"),
    ],
)
def test_a_bad_log_batch_is_422_and_stores_nothing(engine_client, visit_url, body, field):
    errors = envelope(post(engine_client, f"{visit_url}/logs", body), 422)["errors"]
    assert any(key == field or key.startswith((field + ".", field + "[")) for key in errors), errors
    assert VisitLog.objects.count() == 0


def test_an_unknown_log_type_is_refused_naming_the_allowed_types(engine_client, visit_url):
    message = post(engine_client, f"{visit_url}/logs", {"logs": [{"type": "SHOUT"}]}).json()["message"]
    assert message.startswith("logs[0].type") and "THINKING" in message and "TODO_UPDATE" in message


def test_a_heartbeat_answers_the_visit_status(engine_client, visit_url):
    assert envelope(post(engine_client, f"{visit_url}/heartbeat", None), 200)["status"] == "RUNNING"


def test_completing_answers_the_verdict(engine_client, visit_url):
    data = envelope(
        post(engine_client, f"{visit_url}/complete", {"status": "SUCCESS", "finalText": RATE_LIMIT_REPLY}), 200
    )
    assert (data["effectiveStatus"], data["category"], data["retryable"], data["runAction"]) == (
        "FAILED",
        "rate_limit",
        True,
        "abort",
    )
    assert data["matchedPattern"]["name"] in data["failureReason"]


def test_an_identical_repeated_completion_is_200_and_a_different_one_409(engine_client, visit_url):
    body = {"status": "SUCCESS", "output": {"status": 200, "message": "ok", "data": {"x": 1}}}
    first = envelope(post(engine_client, f"{visit_url}/complete", body), 200)
    assert envelope(post(engine_client, f"{visit_url}/complete", body), 200) == first
    envelope(post(engine_client, f"{visit_url}/complete", {"status": "SKIPPED"}), 409)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"status": "DONE"}, "status"),
        ({}, "status"),
        ({"status": "SUCCESS", "output": "fine"}, "output"),
        ({"status": "SUCCESS", "output": {"status": "ok"}}, "output.status"),
        ({"status": "SUCCESS", "agentResult": {"failed": "maybe"}}, "agentResult.failed"),
    ],
)
def test_a_bad_completion_is_422_and_changes_nothing(engine_client, visit_url, body, field):
    assert field in envelope(post(engine_client, f"{visit_url}/complete", body), 422)["errors"]
    assert Visit.objects.get().status == "RUNNING"


# --------------------------------------------------------------------------- finish and bodies


def test_finish_cancels_leftovers_and_repeats_are_200(engine_client, run_id, visit_url):
    data = envelope(post(engine_client, f"/api/runs/{run_id}/finish/", {"status": "FAILED"}), 200)
    assert (data["status"], data["cancelledVisits"]) == ("FAILED", 1)
    assert Visit.objects.get().status == "CANCELLED"
    assert envelope(post(engine_client, f"/api/runs/{run_id}/finish", {"status": "FAILED"}), 200)["status"] == "FAILED"
    envelope(post(engine_client, f"/api/runs/{run_id}/finish", {"status": "SUCCESS"}), 409)


def test_late_logs_and_completion_after_finish_are_kept(engine_client, run_id, visit_url):
    post(engine_client, f"/api/runs/{run_id}/finish", {"status": "FAILED"})
    envelope(post(engine_client, f"{visit_url}/logs", {"logs": [{"type": "TEXT", "message": "late"}]}), 200)
    assert (
        envelope(post(engine_client, f"{visit_url}/complete", {"status": "SUCCESS"}), 200)["effectiveStatus"]
        == "SUCCESS"
    )


def test_malformed_json_is_400(engine_client, run_id):
    response = engine_client.generic(
        "POST", f"/api/runs/{run_id}/visits", b'{"nodeId": ', content_type="application/json"
    )
    envelope(response, 400)


def test_an_oversized_body_is_413_and_stores_nothing(engine_client, visit_url, settings):
    big = json.dumps({"logs": [{"type": "TEXT", "message": "x" * (settings.MAX_BODY_BYTES + 10)}]}).encode()
    response = engine_client.generic("POST", f"{visit_url}/logs", big, content_type="application/json")
    envelope(response, 413)
    assert VisitLog.objects.count() == 0


def test_the_visit_detail_costs_a_fixed_number_of_queries(engine_client, engine_user):
    run = WorkflowRunFactory(created_by=engine_user)
    visit = VisitFactory(run=run, node_id="A")
    VisitLogFactory.create_batch(2, visit=visit)
    with CaptureQueriesContext(connection) as few:
        engine_client.get(f"/api/runs/{run.run_id}/visits/{visit.visit_uuid}")
    VisitLogFactory.create_batch(20, visit=visit)
    with CaptureQueriesContext(connection) as many:
        engine_client.get(f"/api/runs/{run.run_id}/visits/{visit.visit_uuid}")
    assert len(many) == len(few)


def test_the_schema_documents_every_recording_operation(staff_client):
    response = staff_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    ops = {op["operationId"] for item in schema["paths"].values() for op in item.values() if isinstance(op, dict)}
    assert {
        "runs_list",
        "runs_create",
        "runs_retrieve",
        "runs_finish",
        "runs_visits_list",
        "runs_visits_register",
        "runs_visits_retrieve",
        "runs_visits_logs_append",
        "runs_visits_heartbeat",
        "runs_visits_complete",
    } <= ops
    register_op = schema["paths"]["/api/runs/{run_id}/visits/"]["post"]
    assert {"201", "200", "409", "422"} <= set(register_op["responses"])


# --------------------------------------------------------------------------- finish after an abort


def _visit_failed_with_abort(engine_client, run_id, node_id="A"):
    visit = register(engine_client, run_id, {"nodeId": node_id})
    url = f"/api/runs/{run_id}/visits/{visit['visitUuid']}/complete"
    verdict = envelope(post(engine_client, url, {"status": "SUCCESS", "finalText": RATE_LIMIT_REPLY}), 200)
    assert (verdict["effectiveStatus"], verdict["runAction"]) == ("FAILED", "abort")
    return visit


def test_a_run_whose_completion_answered_abort_cannot_finish_as_success(engine_client, run_id):
    failed = _visit_failed_with_abort(engine_client, run_id)
    response = post(engine_client, f"/api/runs/{run_id}/finish", {"status": "SUCCESS"})
    envelope(response, 409)
    assert failed["visitUuid"] in response.json()["message"] and "node 'A'" in response.json()["message"]
    assert WorkflowRun.objects.get(run_id=run_id).status == "RUNNING"


@pytest.mark.parametrize("status", ["FAILED", "CANCELLED"])
def test_a_run_whose_completion_answered_abort_may_finish_as_failed_or_cancelled(engine_client, run_id, status):
    _visit_failed_with_abort(engine_client, run_id)
    assert envelope(post(engine_client, f"/api/runs/{run_id}/finish", {"status": status}), 200)["status"] == status


def test_a_retried_node_that_succeeded_lets_the_run_finish_as_success(engine_client, run_id):
    failed = _visit_failed_with_abort(engine_client, run_id)
    retry = register(engine_client, run_id, {"nodeId": "A", "fromVisitUuids": []})
    assert retry["iterSeq"] == 2
    done = {"status": "SUCCESS", "output": {"status": 200, "message": "ok", "data": {}}}
    envelope(post(engine_client, f"/api/runs/{run_id}/visits/{retry['visitUuid']}/complete", done), 200)
    assert (
        envelope(post(engine_client, f"/api/runs/{run_id}/finish", {"status": "SUCCESS"}), 200)["status"] == "SUCCESS"
    )
    assert failed["visitUuid"] != retry["visitUuid"]
