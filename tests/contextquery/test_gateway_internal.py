"""POST /internal/tools/{list,call,status} (SPEC §7.2): the §4.5 check order,
their own budget, the status throttle, the audit, and what the agent reads."""

from __future__ import annotations

import pytest
from django.test import override_settings

from contextquery import tool_gateway
from contextquery.models import ContextRead, ToolCall, Visit
from tests.support import envelope, envelope_body

pytestmark = pytest.mark.django_db

LOOKUP = {"orderId": "A-1001"}
REFUND = {"orderId": "A-1001", "amount": 5}


def cq(**overrides):
    from django.conf import settings

    return {**settings.HERMES_CONTEXT_QUERY, **overrides}


def call_body(tv, name="order_lookup", arguments=None, **extra):
    return {"runId": tv.run_id, "name": name, "arguments": LOOKUP if arguments is None else arguments, **extra}


# --- list


def test_list_answers_the_visits_tools_with_their_schemas(ask_tool, tool_visit):
    tv = tool_visit()
    data = envelope(ask_tool("list", tv.token, {"runId": tv.run_id}), 200)
    assert [(t["name"], t["kind"], t["approval"]) for t in data["tools"]] == [
        ("order_lookup", "read", "none"),
        ("refund_issue", "write", "required"),
    ]
    assert data["tools"][0]["inputSchema"]["required"] == ["orderId"]


def test_list_of_a_visit_given_no_tools_is_empty(ask_tool, tool_visit):
    tv = tool_visit(tools=[])
    assert envelope(ask_tool("list", tv.token, {"runId": tv.run_id}), 200) == {"tools": []}


def test_list_and_status_count_against_no_budget(ask_tool, tool_visit, settings):
    settings.HERMES_CONTEXT_QUERY = cq(MAX_TOOL_CALLS_PER_VISIT=1, MAX_QUERIES_PER_VISIT=1)
    tv = tool_visit()
    for _ in range(3):
        envelope(ask_tool("list", tv.token, {"runId": tv.run_id}), 200)
    assert Visit.objects.get(pk=tv.visit.pk).tool_call_count == 0
    assert Visit.objects.get(pk=tv.visit.pk).query_count == 0


# --- call


def test_a_read_answers_succeeded_with_the_business_answer(ask_tool, tool_visit, shop):
    tv = tool_visit()
    data = envelope(ask_tool("call", tv.token, call_body(tv)), 200)
    assert (data["status"], data["httpStatus"], data["tool"]) == ("SUCCEEDED", 200, "order_lookup")
    assert data["result"] == {"orderId": "A-1001", "status": "delivered", "total": 42.5, "currency": "EUR", "items": 2}
    assert data["message"] == f"The call {data['callId']} of order_lookup succeeded (HTTP 200)."


def test_a_write_answers_at_once_that_it_waits_for_a_person(ask_tool, tool_visit, shop):
    tv = tool_visit()
    data = envelope(ask_tool("call", tv.token, call_body(tv, "refund_issue", REFUND)), 200)
    assert data["status"] == "PENDING_APPROVAL" and data["result"] is None
    assert "waits for a person's approval" in data["message"]
    assert shop.seen == []


def test_schema_invalid_arguments_are_422_with_the_validators_message_and_nothing_is_stored(ask_tool, tool_visit, shop):
    tv = tool_visit()
    body = envelope_body(ask_tool("call", tv.token, call_body(tv, "refund_issue", {"orderId": "A-1001"})), 422)
    assert body["message"] == "arguments: 'amount' is a required property"
    assert body["data"]["errors"] == {"arguments": ["'amount' is a required property"]}
    assert not ToolCall.objects.exists() and shop.seen == []


def test_arguments_that_are_not_an_object_are_422(ask_tool, tool_visit):
    tv = tool_visit()
    body = envelope_body(ask_tool("call", tv.token, call_body(tv, arguments=["A-1001"])), 422)
    assert "arguments" in body["data"]["errors"]


def test_a_tool_the_node_was_not_given_is_404(ask_tool, tool_visit, shop):
    tv = tool_visit(tools=["order_lookup"])
    body = envelope_body(ask_tool("call", tv.token, call_body(tv, "refund_issue", REFUND)), 404)
    assert body["message"] == "The tool 'refund_issue' is not available to this node."
    assert not ToolCall.objects.exists() and shop.seen == []


def test_the_call_budget_is_its_own_and_the_next_call_is_429(ask_tool, tool_visit, settings, shop):
    settings.HERMES_CONTEXT_QUERY = cq(MAX_TOOL_CALLS_PER_VISIT=2)
    tv = tool_visit()
    assert [ask_tool("call", tv.token, call_body(tv)).status_code for _ in range(3)] == [200, 200, 429]
    body = envelope_body(ask_tool("call", tv.token, call_body(tv)), 429)
    assert "used its 2 business tool calls" in body["message"] and "Retry-After" not in ask_tool(
        "call", tv.token, call_body(tv)
    )
    assert len(shop.seen) == 2 and Visit.objects.get(pk=tv.visit.pk).query_count == 0


def test_a_refused_call_counts_against_the_budget_too(ask_tool, tool_visit, settings, shop):
    settings.HERMES_CONTEXT_QUERY = cq(MAX_TOOL_CALLS_PER_VISIT=2)
    tv = tool_visit()
    ask_tool("call", tv.token, raw=b"{not json")
    ask_tool("call", tv.token, call_body(tv, "nope"))
    assert ask_tool("call", tv.token, call_body(tv)).status_code == 429
    assert shop.seen == []


def test_a_repeated_idempotency_key_answers_the_same_call(ask_tool, tool_visit, shop):
    tv = tool_visit()
    first = envelope(ask_tool("call", tv.token, call_body(tv, idempotencyKey="k-1")), 200)
    again = envelope(ask_tool("call", tv.token, call_body(tv, idempotencyKey="k-1")), 200)
    assert first["callId"] == again["callId"] and len(shop.seen) == 1
    other = envelope_body(
        ask_tool("call", tv.token, call_body(tv, arguments={"orderId": "A-1002"}, idempotencyKey="k-1")), 409
    )
    assert "already used" in other["message"]


def test_a_result_is_cut_to_max_bytes_with_truncated(ask_tool, tool_visit, scripted_server, settings, bindings):
    big = scripted_server({"status": 200, "body": {"lines": ["x" * 100] * 200}})
    settings.HERMES_TOOL_ALLOWED_HOSTS = [f"127.0.0.1:{big.server_address[1]}"]
    tool_gateway.binding_update(target=bindings["order_lookup"], values={"endpoint": big.url + "/x"}, via="command")
    tv = tool_visit()
    data = envelope(ask_tool("call", tv.token, call_body(tv, maxBytes=1024)), 200)
    assert data["truncated"] is True and data["originalBytes"] > 20000
    assert len(str(data["result"])) < 1500
    assert len(ToolCall.objects.get().result["lines"]) == 200  # stored whole; only the agent's copy is cut


# --- status


def pending_call(ask_tool, tv) -> int:
    return envelope(ask_tool("call", tv.token, call_body(tv, "refund_issue", REFUND)), 200)["callId"]


def test_status_answers_the_call_as_it_is_now(ask_tool, tool_visit, shop, approver):
    tv = tool_visit()
    call_id = pending_call(ask_tool, tv)
    assert envelope(ask_tool("status", tv.token, {"runId": tv.run_id, "callId": call_id}), 200)["status"] == (
        "PENDING_APPROVAL"
    )
    tool_gateway.toolcall_approve(call=ToolCall.objects.get(pk=call_id), user=approver)
    ToolCall.objects.filter(pk=call_id).update(status_read_at=None)
    data = envelope(ask_tool("status", tv.token, {"runId": tv.run_id, "callId": call_id}), 200)
    assert (data["status"], data["result"]["status"]) == ("SUCCEEDED", "refunded")


def test_status_answers_one_call_at_most_once_a_second(ask_tool, tool_visit, shop, clock):
    tv = tool_visit()
    call_id = pending_call(ask_tool, tv)
    body = {"runId": tv.run_id, "callId": call_id}
    assert ask_tool("status", tv.token, body).status_code == 200
    again = ask_tool("status", tv.token, body)
    assert again.status_code == 429 and again["Retry-After"] == "1"
    clock.advance(1.01)
    assert ask_tool("status", tv.token, body).status_code == 200


def test_a_visit_sees_only_its_own_calls(ask_tool, tool_visit, shop):
    mine, other = tool_visit(), tool_visit()
    call_id = pending_call(ask_tool, other)
    body = envelope_body(ask_tool("status", mine.token, {"runId": mine.run_id, "callId": call_id}), 404)
    assert body["message"] == f"This visit made no tool call {call_id}."


def test_a_rejected_calls_status_carries_the_note(ask_tool, tool_visit, shop, approver):
    tv = tool_visit()
    call_id = pending_call(ask_tool, tv)
    tool_gateway.toolcall_reject(call=ToolCall.objects.get(pk=call_id), user=approver, note="Too much.")
    data = envelope(ask_tool("status", tv.token, {"runId": tv.run_id, "callId": call_id}), 200)
    assert (data["status"], data["note"]) == ("REJECTED", "Too much.") and shop.seen == []


# --- the §4.5 check order, on the tool endpoints


@override_settings(HERMES_CONTEXT_QUERY=cq(ENABLED=False))
def test_everything_is_503_when_context_query_is_disabled(ask_tool):
    assert ask_tool("list", "0" * 48, {"runId": "x"}, remote_addr="10.0.0.9").status_code == 503


def test_a_client_outside_allowed_clients_is_403(ask_tool, tool_visit):
    tv = tool_visit()
    assert ask_tool("call", tv.token, call_body(tv), remote_addr="10.1.2.3").status_code == 403
    assert not ContextRead.objects.exists()


def test_an_unknown_token_is_401(ask_tool, tool_visit):
    tv = tool_visit()
    response = ask_tool("list", "ab" * 24, {"runId": tv.run_id})
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_malformed_json_is_400_and_missing_fields_are_422(ask_tool, tool_visit):
    tv = tool_visit()
    assert ask_tool("status", tv.token, raw=b"{").status_code == 400
    body = envelope_body(ask_tool("status", tv.token, {"runId": tv.run_id}), 422)
    assert "callId" in body["data"]["errors"]


def test_another_runs_id_is_403_before_the_budget_and_the_tool_lookup(ask_tool, tool_visit, settings):
    settings.HERMES_CONTEXT_QUERY = cq(MAX_TOOL_CALLS_PER_VISIT=1)
    tv = tool_visit()
    ask_tool("call", tv.token, call_body(tv, "nope"))
    assert ask_tool("call", tv.token, {**call_body(tv, "nope"), "runId": "other"}).status_code == 403
    assert ask_tool("call", tv.token, call_body(tv, "nope")).status_code == 429


def test_every_authenticated_query_writes_one_audit_row(ask_tool, tool_visit, shop):
    tv = tool_visit()
    ask_tool("list", tv.token, {"runId": tv.run_id})
    ask_tool("call", tv.token, call_body(tv))
    ask_tool("call", tv.token, call_body(tv, "nope"))
    rows = list(ContextRead.objects.filter(visit=tv.visit).values_list("endpoint", "status_code"))
    assert rows == [("tools/list", 200), ("tools/call", 200), ("tools/call", 404)]


def test_a_get_is_405(ask_tool, tool_visit):
    tv = tool_visit()
    response = ask_tool.client.get("/internal/tools/list", HTTP_X_CONTEXT_TOKEN=tv.token, REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 405


def test_a_trailing_slash_is_accepted(ask_tool, tool_visit):
    tv = tool_visit()
    response = ask_tool.client.generic(
        "POST",
        "/internal/tools/list/",
        f'{{"runId": "{tv.run_id}"}}',
        content_type="application/json",
        HTTP_X_CONTEXT_TOKEN=tv.token,
        REMOTE_ADDR="127.0.0.1",
    )
    assert response.status_code == 200
