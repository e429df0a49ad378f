"""POST /internal/context/{path,output,meta}: the check order, shapes, budget and audit (SPEC §4.5)."""

import ipaddress
import logging
import uuid

import pytest
from django.test import override_settings

from contextquery import tokens
from contextquery.models import ContextRead, ContextToken, Visit
from tests.contextquery.context_fixtures import CHAIN, body_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def c2(flyback, issue):
    """The token of C's second (running) visit in the flight-back run, with its run id."""
    return issue(flyback.by["C2"]), flyback.run.run_id


def cq(**overrides):
    from django.conf import settings

    return {**settings.HERMES_CONTEXT_QUERY, **overrides}


# --- The order of checks.


@override_settings(HERMES_CONTEXT_QUERY=cq(ENABLED=False))
def test_everything_is_503_when_context_query_is_disabled(ask, flyback):
    response = ask("output", "0" * 48, {"runId": flyback.run.run_id, "nodeId": "B"}, remote_addr="10.0.0.9")
    assert response.status_code == 503
    assert "disabled" in body_of(response)["message"]


def test_a_client_outside_allowed_clients_is_403_even_with_a_good_token(ask, c2):
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "B"}, remote_addr="10.1.2.3")
    assert response.status_code == 403
    assert "ALLOWED_CLIENTS" in body_of(response)["message"]
    assert ContextRead.objects.count() == 0


@override_settings(
    HERMES_CONTEXT_QUERY=cq(ALLOWED_CLIENTS=["10.1.0.0/16"], ALLOWED_NETWORKS=[ipaddress.ip_network("10.1.0.0/16")])
)
def test_a_client_inside_a_configured_network_is_answered_and_loopback_is_not(ask, c2):
    token, run_id = c2
    assert ask("output", token, {"runId": run_id, "nodeId": "B"}, remote_addr="10.1.2.3").status_code == 200
    assert ask("output", token, {"runId": run_id, "nodeId": "B"}, remote_addr="127.0.0.1").status_code == 403


def test_an_ipv6_loopback_client_is_allowed(ask, c2):
    token, run_id = c2
    assert ask("output", token, {"runId": run_id, "nodeId": "B"}, remote_addr="::1").status_code == 200


@pytest.mark.parametrize(
    "header, words",
    [(None, "missing"), ("", "missing"), ("not-a-token", "48 lowercase hex"), ("ab" * 24, "unknown")],
    ids=["no header", "empty", "garbled", "unknown"],
)
def test_a_missing_garbled_or_unknown_token_is_401(ask, c2, header, words):
    _, run_id = c2
    response = ask("output", header, {"runId": run_id, "nodeId": "B"})
    assert response.status_code == 401
    assert words in body_of(response)["message"]
    assert response["WWW-Authenticate"] == "Token"
    assert ContextRead.objects.count() == 0


def test_an_expired_token_is_401(ask, c2, clock):
    token, run_id = c2
    clock.advance(121)
    response = ask("output", token, {"runId": run_id, "nodeId": "B"})
    assert response.status_code == 401 and "expired" in body_of(response)["message"]


def test_a_revoked_token_is_401(ask, flyback, c2):
    token, run_id = c2
    tokens.tokens_revoke_for_visit(visit=flyback.by["C2"])
    response = ask("output", token, {"runId": run_id, "nodeId": "B"})
    assert response.status_code == 401 and "revoked" in body_of(response)["message"]


def test_the_401_comes_before_the_body_is_read(ask):
    response = ask("output", None, raw=b"{not json")
    assert response.status_code == 401


def test_malformed_json_is_400_after_authentication(ask, c2):
    token, _ = c2
    response = ask("output", token, raw=b'{"runId": ')
    assert response.status_code == 400 and "not valid JSON" in body_of(response)["message"]


def test_invalid_utf8_is_400(ask, c2):
    token, _ = c2
    response = ask("output", token, raw=b'{"runId": "\xff\xfe"}')
    assert response.status_code == 400 and "UTF-8" in body_of(response)["message"]


def test_a_body_that_is_not_an_object_is_422(ask, c2):
    token, _ = c2
    response = ask("output", token, raw=b"[1, 2]")
    assert response.status_code == 422


@pytest.mark.parametrize(
    "endpoint, body, field",
    [
        ("output", {"nodeId": "B"}, "runId"),
        ("output", {"runId": None, "nodeId": "B"}, "runId"),
        ("output", {"runId": 12345678, "nodeId": "B"}, "runId"),
        ("output", {"runId": "RUN", "nodeId": ["B"]}, "nodeId"),
        ("output", {"runId": "RUN"}, "nodeId"),
        ("output", {"runId": "RUN", "nodeId": "B", "iterSeq": 0}, "iterSeq"),
        ("output", {"runId": "RUN", "nodeId": "B", "iterSeq": -2}, "iterSeq"),
        ("output", {"runId": "RUN", "nodeId": "B", "iterSeq": "1"}, "iterSeq"),
        ("output", {"runId": "RUN", "nodeId": "B", "iterSeq": True}, "iterSeq"),
        ("output", {"runId": "RUN", "nodeId": "B", "maxBytes": 511}, "maxBytes"),
        ("output", {"runId": "RUN", "nodeId": "B", "maxBytes": 102401}, "maxBytes"),
        ("output", {"runId": "RUN", "nodeId": "B", "field": 3}, "field"),
        ("meta", {"runId": "RUN", "nodeId": "B", "kind": "SECRETS"}, "kind"),
        ("meta", {"runId": "RUN", "nodeId": None, "visitUuid": None}, "nodeId"),
        ("meta", {"runId": "RUN", "visitUuid": "not-a-uuid"}, "visitUuid"),
        ("path", {"runId": "RUN", "visitUuid": 7}, "visitUuid"),
    ],
)
def test_missing_or_wrong_fields_are_422_naming_the_field(ask, c2, endpoint, body, field):
    token, run_id = c2
    body = {k: (run_id if v == "RUN" else v) for k, v in body.items()}
    response = ask(endpoint, token, body)
    assert response.status_code == 422
    envelope = body_of(response)
    assert field in envelope["data"]["errors"]
    assert envelope["message"].startswith(field)


def test_a_nul_character_is_422(ask, c2):
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "B\u0000"})
    assert response.status_code == 422 and "NUL" in body_of(response)["message"]


def test_a_body_nested_too_deep_is_422(ask, c2):
    token, run_id = c2
    deep = {}
    for _ in range(70):
        deep = {"x": deep}
    response = ask("output", token, {"runId": run_id, "nodeId": "B", "extra": deep})
    assert response.status_code == 422 and "deeper" in body_of(response)["message"]


def test_another_runs_id_in_the_body_is_403(ask, c2, make_run):
    token, _ = c2
    other = make_run(CHAIN).run
    response = ask("output", token, {"runId": other.run_id, "nodeId": "B"})
    assert response.status_code == 403 and "runId" in body_of(response)["message"]


def test_a_token_of_another_run_cannot_read_this_run(ask, flyback, make_run, issue):
    other = make_run(CHAIN)
    x = other.visit("A", status="RUNNING")
    response = ask("output", issue(x), {"runId": flyback.run.run_id, "nodeId": "B"})
    assert response.status_code == 403


def test_a_foreign_visit_uuid_on_path_is_403(ask, flyback, c2):
    token, run_id = c2
    response = ask("path", token, {"runId": run_id, "visitUuid": str(flyback.by["G"].visit_uuid)})
    assert response.status_code == 403 and "visitUuid" in body_of(response)["message"]


def test_the_422_comes_before_the_403(ask, c2):
    token, _ = c2
    response = ask("output", token, {"runId": "someone-else", "iterSeq": 0, "nodeId": "B"})
    assert response.status_code == 422


def test_the_51st_query_is_429_and_the_50_before_it_are_answered(ask, c2):
    token, run_id = c2
    statuses = [ask("output", token, {"runId": run_id, "nodeId": "B"}).status_code for _ in range(51)]
    assert statuses[:50] == [200] * 50
    assert statuses[50] == 429
    assert Visit.objects.get(run__run_id=run_id, node_id="C", iter_seq=2).query_count == 50


def test_the_403_comes_before_the_429(ask, c2):
    token, run_id = c2
    Visit.objects.filter(run__run_id=run_id, node_id="C", iter_seq=2).update(query_count=50)
    assert ask("output", token, {"runId": "other", "nodeId": "B"}).status_code == 403
    response = ask("output", token, {"runId": run_id, "nodeId": "B"})
    assert response.status_code == 429 and "50 context queries" in body_of(response)["message"]


def test_the_429_comes_before_the_404(ask, c2):
    token, run_id = c2
    Visit.objects.filter(run__run_id=run_id, node_id="C", iter_seq=2).update(query_count=50)
    assert ask("output", token, {"runId": run_id, "nodeId": "NOPE"}).status_code == 429


def test_refused_requests_count_against_the_budget_too(ask, flyback, c2):
    token, run_id = c2
    ask("output", token, raw=b"{")
    ask("output", token, {"runId": run_id, "nodeId": "NOPE"})
    ask("output", token, {"runId": "other", "nodeId": "B"})
    flyback.by["C2"].refresh_from_db()
    assert flyback.by["C2"].query_count == 3


def test_a_node_never_visited_gets_the_same_404_as_one_out_of_scope(ask, c2):
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "Z"})
    assert response.status_code == 404
    assert body_of(response)["message"] == "Node 'Z' is not a predecessor of the current visit."


@pytest.mark.parametrize("iter_seq", [2, 99])
def test_an_iter_seq_out_of_scope_says_no_more_than_not_a_predecessor(ask, c2, iter_seq):
    """C was visited twice; its second visit is the token's own: neither it nor a
    visit that never happened may be told apart from any other out-of-scope visit."""
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "C", "iterSeq": iter_seq})
    assert response.status_code == 404
    assert body_of(response)["message"] == f"Visit {iter_seq} of node 'C' is not a predecessor of the current visit."


def test_a_sibling_branch_is_not_readable(ask, branches, issue):
    token = issue(branches.by["C"])
    for node in ("D", "E", "F"):
        response = ask("output", token, {"runId": branches.run.run_id, "nodeId": node})
        assert response.status_code == 404
        assert body_of(response)["message"] == f"Node '{node}' is not a predecessor of the current visit."
    assert ask("output", token, {"runId": branches.run.run_id, "nodeId": "B"}).status_code == 200


def test_the_current_visit_itself_is_not_readable(ask, flyback, c2):
    token, run_id = c2
    response = ask("meta", token, {"runId": run_id, "visitUuid": str(flyback.by["C2"].visit_uuid)})
    assert response.status_code == 404 and "is not a predecessor of the current visit" in body_of(response)["message"]


def test_a_missing_field_is_404_naming_the_available_keys(ask, c2):
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "B", "field": "answer"})
    assert response.status_code == 404
    message = body_of(response)["message"]
    assert "'answer'" in message and "'result'" in message and "'count'" in message


# --- The seed's request shapes and response examples.


def test_path_answers_the_flight_back_as_one_path_with_a_backtrack(ask, flyback, c2):
    token, run_id = c2
    response = ask("path", token, {"runId": run_id, "visitUuid": str(flyback.by["C2"].visit_uuid)})
    assert response.status_code == 200
    data = body_of(response)["data"]
    uuids = [str(flyback.by[k].visit_uuid) for k in ("A", "B", "C1", "G", "C2")]
    assert data == {
        "visitUuids": uuids,
        "nodeIds": ["A", "B", "C", "G"],
        "paths": [
            {"sequence": ["A", "B", "C", "G", "C"], "visitUuids": uuids, "hasBacktrack": True, "truncated": False}
        ],
        "backtrackEdgeKeys": ["G->C"],
        "truncated": False,
    }


def test_path_without_a_visit_uuid_answers_the_tokens_visit_and_accepts_a_trailing_slash(ask, c2):
    token, run_id = c2
    response = ask("path", token, {"runId": run_id, "visitUuid": None}, slash="/")
    assert response.status_code == 200
    assert body_of(response)["data"]["backtrackEdgeKeys"] == ["G->C"]


def test_path_of_two_branches_into_g_lists_both(ask, branches, issue):
    rec = branches
    c = rec.by["C"]
    Visit.objects.filter(pk=c.pk).update(status="SUCCESS")
    g = rec.visit("G", c, rec.by["F"], status="RUNNING")
    response = ask("path", issue(g), {"runId": rec.run.run_id, "visitUuid": str(g.visit_uuid)})
    data = body_of(response)["data"]
    assert [p["sequence"] for p in data["paths"]] == [["A", "B", "C", "G"], ["D", "E", "F", "G"]]
    assert data["backtrackEdgeKeys"] == [] and data["truncated"] is False


def test_output_with_explicit_nulls_answers_the_whole_envelope(ask, flyback, c2):
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "B", "field": None, "iterSeq": None, "maxBytes": None})
    assert body_of(response) == {
        "code": 200,
        "message": "success",
        "data": {
            "nodeId": "B",
            "iterSeq": 1,
            "visitUuid": str(flyback.by["B"].visit_uuid),
            "status": 200,
            "message": "调用成功",
            "data": {"result": "hello", "count": 10},
            "requestedField": None,
            "truncated": False,
            "originalBytes": len('{"result":"hello","count":10}'),
        },
    }


def test_output_of_one_field_answers_its_value_and_the_requested_field(ask, c2):
    token, run_id = c2
    data = body_of(ask("output", token, {"runId": run_id, "nodeId": "B", "field": "result"}))["data"]
    assert data["data"] == "hello" and data["requestedField"] == "result" and data["iterSeq"] == 1


def test_iter_seq_defaults_to_the_latest_predecessor_visit_across_a_flight_back(ask, flyback, c2):
    token, run_id = c2
    data = body_of(ask("output", token, {"runId": run_id, "nodeId": "C"}))["data"]
    assert data["iterSeq"] == 1
    assert data["visitUuid"] == str(flyback.by["C1"].visit_uuid)
    assert data["data"] == {"draft": 1}


def test_the_second_visit_of_c_is_not_readable_from_itself(ask, c2):
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "C", "iterSeq": 2})
    assert response.status_code == 404
    assert body_of(response)["message"] == "Visit 2 of node 'C' is not a predecessor of the current visit."


def test_an_iter_seq_beyond_the_visits_of_a_node_is_404(ask, c2):
    token, run_id = c2
    response = ask("output", token, {"runId": run_id, "nodeId": "B", "iterSeq": 3})
    assert response.status_code == 404
    assert body_of(response)["message"] == "Visit 3 of node 'B' is not a predecessor of the current visit."


def test_a_running_predecessor_is_readable_with_a_null_status(ask, branches):
    rec = branches
    g = rec.visit("G", rec.by["C"], rec.by["F"], status="RUNNING")
    token = tokens.token_issue(visit=g).token
    data = body_of(ask("output", token, {"runId": rec.run.run_id, "nodeId": "C"}))["data"]
    assert data["status"] is None and data["data"] is None and data["iterSeq"] == 1


def test_a_failed_predecessor_answers_its_failure_envelope(ask, c2):
    token, run_id = c2
    data = body_of(ask("output", token, {"runId": run_id, "nodeId": "G"}))["data"]
    assert (data["status"], data["message"], data["data"]) == (400, "needs work", {"verdict": "redo"})


def test_output_is_truncated_to_max_bytes_with_the_original_size(ask, make_run, issue):
    rec = make_run(CHAIN)
    long_text = "长" * 5000
    a = rec.visit("A", output={"status": 200, "message": "ok", "data": {"text": long_text, "n": 1}})
    b = rec.visit("B", a, status="RUNNING")
    response = ask("output", issue(b), {"runId": rec.run.run_id, "nodeId": "A", "maxBytes": 1024})
    data = body_of(response)["data"]
    assert data["truncated"] is True
    assert data["originalBytes"] == len(('{"text":"%s","n":1}' % long_text).encode())
    assert len(tokens_json(data["data"])) <= 1024
    assert data["data"]["n"] == 1 and data["data"]["text"].startswith("长长长")


def tokens_json(value) -> bytes:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "kind, keys",
    [
        ("THINKING", {"thinking"}),
        ("tool_calls", {"toolCalls"}),
        ("Todo", {"todoList"}),
        ("ALL", {"thinking", "toolCalls", "todoList", "logs"}),
        (None, {"thinking", "toolCalls", "todoList", "logs"}),
    ],
)
def test_meta_answers_the_keys_of_its_kind(ask, flyback, c2, kind, keys):
    token, run_id = c2
    response = ask("meta", token, {"runId": run_id, "visitUuid": None, "nodeId": "B", "kind": kind, "iterSeq": None})
    data = body_of(response)["data"]
    assert set(data) == {"nodeId", "iterSeq", "visitUuid", "truncated", "originalBytes"} | keys
    assert (data["nodeId"], data["iterSeq"], data["visitUuid"]) == ("B", 1, str(flyback.by["B"].visit_uuid))


def test_meta_thinking_joins_the_thoughts_with_newlines(ask, c2):
    token, run_id = c2
    data = body_of(ask("meta", token, {"runId": run_id, "nodeId": "B", "kind": "THINKING"}))["data"]
    assert data["thinking"] == "第一步\n第二步"


def test_meta_tool_calls_list_calls_and_results_in_order(ask, c2):
    token, run_id = c2
    data = body_of(ask("meta", token, {"runId": run_id, "nodeId": "B", "kind": "TOOL_CALLS"}))["data"]
    assert data["toolCalls"] == [
        {"tool": "search", "args": "{q:1}"},
        {"tool": "search", "result": "结果摘要"},
        {"tool": "calc", "args": "{x:2}"},
    ]


def test_meta_todo_is_the_last_todo_update(ask, c2):
    token, run_id = c2
    data = body_of(ask("meta", token, {"runId": run_id, "nodeId": "B", "kind": "TODO"}))["data"]
    assert data["todoList"] == [{"text": "任务A", "status": "completed"}, {"text": "任务B", "status": "pending"}]


def test_meta_all_carries_the_raw_logs(ask, c2):
    token, run_id = c2
    data = body_of(ask("meta", token, {"runId": run_id, "nodeId": "B", "kind": "all"}))["data"]
    assert [log["type"] for log in data["logs"]] == [
        "THINKING",
        "TOOL_CALL",
        "TOOL_RESULT",
        "TODO_UPDATE",
        "THINKING",
        "TOOL_CALL",
        "TODO_UPDATE",
        "TEXT",
    ]
    assert set(data["logs"][0]) == {"type", "timestamp", "message", "detail"}
    assert data["logs"][0]["timestamp"].endswith("Z")


def test_meta_visit_uuid_wins_over_node_id(ask, flyback, c2):
    token, run_id = c2
    body = {"runId": run_id, "visitUuid": str(flyback.by["A"].visit_uuid), "nodeId": "B", "kind": "THINKING"}
    data = body_of(ask("meta", token, body))["data"]
    assert data["nodeId"] == "A" and data["thinking"] == ""


def test_meta_is_truncated_to_max_bytes(ask, make_run, issue):
    rec = make_run(CHAIN)
    a = rec.visit("A", logs=[("THINKING", "想" * 400, None)] * 20)
    b = rec.visit("B", a, status="RUNNING")
    data = body_of(ask("meta", issue(b), {"runId": rec.run.run_id, "nodeId": "A", "maxBytes": 512}))["data"]
    assert data["truncated"] is True and data["originalBytes"] > 20 * 1200
    assert len(tokens_json({k: data[k] for k in ("thinking", "toolCalls", "todoList", "logs")})) <= 512


def _chain_with_uuids(make_run, a_uuid, b_uuid, thought):
    """A run A→B (B running) whose visits carry the given (engine-chosen) uuids; A thought ``thought``."""
    rec = make_run(CHAIN)
    a = rec.visit("A", logs=[("THINKING", thought, None)])
    Visit.objects.filter(pk=a.pk).update(visit_uuid=a_uuid)
    a.refresh_from_db()
    b = rec.visit("B", a, status="RUNNING")
    Visit.objects.filter(pk=b.pk).update(visit_uuid=b_uuid)
    b.refresh_from_db()
    return rec, b


def test_meta_answers_the_new_visit_when_an_engine_registers_a_deleted_runs_visit_uuid_again(ask, make_run, issue):
    a_uuid, b_uuid = uuid.uuid4(), uuid.uuid4()
    old, b = _chain_with_uuids(make_run, a_uuid, b_uuid, "the old run's thought")
    body = {"runId": old.run.run_id, "visitUuid": str(a_uuid), "kind": "THINKING"}
    assert body_of(ask("meta", issue(b), body))["data"]["thinking"] == "the old run's thought"
    old.run.delete()
    new, b = _chain_with_uuids(make_run, a_uuid, b_uuid, "the new run's thought")
    body["runId"] = new.run.run_id
    assert body_of(ask("meta", issue(b), body))["data"]["thinking"] == "the new run's thought"


def test_path_answers_the_new_visit_when_an_engine_registers_a_deleted_runs_visit_uuid_again(ask, make_run, issue):
    old_a_uuid, b_uuid = uuid.uuid4(), uuid.uuid4()
    old, b = _chain_with_uuids(make_run, old_a_uuid, b_uuid, "old")
    assert str(old_a_uuid) in body_of(ask("path", issue(b), {"runId": old.run.run_id}))["data"]["visitUuids"]
    old.run.delete()
    a_uuid = uuid.uuid4()
    new, b = _chain_with_uuids(make_run, a_uuid, b_uuid, "new")
    data = body_of(ask("path", issue(b), {"runId": new.run.run_id}))["data"]
    assert set(data["visitUuids"]) == {str(a_uuid), str(b_uuid)}


# --- Side effects: audit, sliding expiry, secrecy, speed.


def test_every_authenticated_query_writes_one_audit_row(ask, flyback, c2):
    token, run_id = c2
    ok = ask("output", token, {"runId": run_id, "nodeId": "B", "field": "result", "iterSeq": 1})
    ask("meta", token, {"runId": run_id, "nodeId": "Z", "kind": "TODO"})
    ask("path", token, raw=b"{")
    reads = list(ContextRead.objects.filter(visit=flyback.by["C2"]).order_by("id"))
    assert [(r.endpoint, r.status_code) for r in reads] == [("output", 200), ("meta", 404), ("path", 400)]
    assert (reads[0].node_id, reads[0].field, reads[0].iter_seq) == ("B", "result", 1)
    assert reads[0].bytes_returned == len(ok.content)
    assert reads[1].kind == "TODO" and reads[0].duration_ms >= 0


def test_a_query_slides_the_tokens_expiry(ask, flyback, c2, clock):
    token, run_id = c2
    clock.advance(100)
    assert ask("output", token, {"runId": run_id, "nodeId": "B"}).status_code == 200
    clock.advance(100)
    assert ask("output", token, {"runId": run_id, "nodeId": "B"}).status_code == 200
    clock.advance(121)
    assert ask("output", token, {"runId": run_id, "nodeId": "B"}).status_code == 401


def test_the_token_text_never_reaches_the_logs(ask, c2, caplog):
    token, run_id = c2
    with caplog.at_level(logging.DEBUG):
        tokens.token_issue(visit=Visit.objects.get(run__run_id=run_id, node_id="C", iter_seq=2))
        ask("output", token, {"runId": run_id, "nodeId": "B"})
        ask("output", token, {"runId": run_id, "nodeId": "Z"})
        ask("output", token[:-1] + "0", {"runId": run_id, "nodeId": "B"})
    assert caplog.records  # the issue is logged, masked
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert token not in text and token[4:12] not in text


def test_the_answer_never_repeats_the_token(ask, c2):
    token, run_id = c2
    for endpoint, body in (
        ("path", {"runId": run_id}),
        ("output", {"runId": run_id, "nodeId": "B"}),
        ("meta", {"runId": run_id, "nodeId": "B"}),
    ):
        assert token not in ask(endpoint, token, body).content.decode()


def test_a_get_is_405(ask, c2):
    token, _ = c2
    response = ask.client.get("/internal/context/path", HTTP_X_CONTEXT_TOKEN=token)
    assert response.status_code == 405


def test_a_session_does_not_authenticate_a_query(ask, flyback, superuser):
    ask.client.force_login(superuser)
    response = ask("path", None, {"runId": flyback.run.run_id})
    assert response.status_code == 401


@pytest.mark.parametrize("endpoint, body", [("path", {}), ("output", {"nodeId": "B"}), ("meta", {"nodeId": "B"})])
def test_each_query_takes_a_handful_of_database_queries(ask, c2, django_assert_max_num_queries, endpoint, body):
    token, run_id = c2
    with django_assert_max_num_queries(8):
        assert ask(endpoint, token, {"runId": run_id, **body}).status_code == 200


def test_purging_tokens_keeps_the_audit_rows(ask, flyback, c2, clock):
    token, run_id = c2
    ask("output", token, {"runId": run_id, "nodeId": "B"})
    clock.advance(3600 + tokens.TOKEN_PURGE_GRACE.total_seconds())
    assert tokens.tokens_purge() == 1
    assert ContextToken.objects.count() == 0
    assert ContextRead.objects.filter(visit=flyback.by["C2"]).count() == 1


def test_the_schema_documents_the_internal_endpoints_with_the_header_token(staff_client):
    schema = staff_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert schema["components"]["securitySchemes"]["ContextToken"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Context-Token",
    }
    for endpoint in ("path", "output", "meta"):
        operation = schema["paths"][f"/internal/context/{endpoint}/"]["post"]
        assert operation["security"] == [{"ContextToken": []}]
        assert {"200", "401", "403", "404", "422", "429", "503"} <= set(operation["responses"])
    assert "post" in schema["paths"]["/api/runs/{run_id}/visits/{visit_uuid}/tokens/"]
    assert "post" in schema["paths"]["/api/runs/{run_id}/visits/{visit_uuid}/tokens/revoke/"]
