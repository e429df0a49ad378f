"""/api/tool-bindings and /api/tool-calls (SPEC §7.3): CRUD with history like
patterns, approve and reject with their permissions and conflicts, the filters,
and the envelope."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from contextquery import tool_gateway
from contextquery.models import ToolBinding, ToolBindingChange, ToolCall
from demo.business import LOOKUP_SCHEMA
from tests.conftest import token_client
from tests.contextquery.gateway_fixtures import SECRET
from tests.support import envelope, envelope_body

pytestmark = pytest.mark.django_db

REFUND = {"orderId": "A-1001", "amount": 5}


@pytest.fixture
def approver_client(approver):
    return token_client(approver)


def binding_body(shop, **overrides) -> dict:
    body = {
        "name": "order_lookup",
        "description": "Look an order up.",
        "inputSchema": LOOKUP_SCHEMA,
        "kind": "read",
        "endpoint": shop.url + "/orders/lookup",
        "secretRef": "SHOP",
    }
    return {**body, **overrides}


# --- bindings


def test_a_staff_user_creates_a_binding_and_reads_it_with_its_history(staff_client, shop):
    created = envelope(staff_client.post("/api/tool-bindings", binding_body(shop), format="json"), 201)
    assert (created["approval"], created["timeoutSeconds"], created["secretRef"], created["secretSet"]) == (
        "none",
        10,
        "SHOP",
        True,
    )
    detail = envelope(staff_client.get(f"/api/tool-bindings/{created['id']}"), 200)
    assert [row["action"] for row in detail["history"]] == ["create"]
    assert detail["history"][0]["via"] == "api"


def test_a_write_created_without_approval_needs_approval(staff_client, shop):
    created = envelope(staff_client.post("/api/tool-bindings", binding_body(shop, kind="write"), format="json"), 201)
    assert created["approval"] == "required"


def test_an_endpoint_host_not_allowed_is_422_on_save_and_nothing_is_stored(staff_client, shop, settings):
    settings.HERMES_TOOL_ALLOWED_HOSTS = ["orders.internal:443"]
    body = envelope_body(staff_client.post("/api/tool-bindings", binding_body(shop), format="json"), 422)
    assert "HERMES_TOOL_ALLOWED_HOSTS" in body["data"]["errors"]["endpoint"][0]
    assert not ToolBinding.objects.exists() and not ToolBindingChange.objects.exists()


def test_an_input_schema_that_is_not_a_schema_is_422_under_its_api_name(staff_client, shop):
    body = envelope_body(
        staff_client.post("/api/tool-bindings", binding_body(shop, inputSchema={"type": 5}), format="json"), 422
    )
    assert body["message"].startswith("inputSchema: Not a valid JSON Schema: 5 is not valid")
    assert not ToolBinding.objects.exists()


def test_an_unknown_or_snake_case_key_is_422(staff_client, shop):
    body = envelope_body(
        staff_client.post("/api/tool-bindings", binding_body(shop, secret_ref="SHOP"), format="json"), 422
    )
    assert body["data"]["errors"] == {"secret_ref": ["Unknown field; did you mean 'secretRef'?"]}


def test_the_secret_is_never_in_an_answer_only_its_name(staff_client, bindings):
    listed = staff_client.get("/api/tool-bindings")
    assert SECRET not in listed.content.decode()
    assert [row["secretRef"] for row in envelope(listed, 200)["results"]] == ["SHOP", "SHOP"]


def test_edit_toggle_and_delete_keep_the_history(staff_client, bindings):
    pk = bindings["order_lookup"].pk
    envelope(staff_client.post(f"/api/tool-bindings/{pk}/edit", {"timeoutSeconds": 3}, format="json"), 200)
    assert envelope(staff_client.post(f"/api/tool-bindings/{pk}/toggle"), 200)["enabled"] is False
    envelope(staff_client.post(f"/api/tool-bindings/{pk}/delete"), 200)
    assert list(ToolBindingChange.objects.filter(binding_ref=pk).order_by("id").values_list("action", flat=True)) == [
        "create",
        "update",
        "disable",
        "delete",
    ]
    assert staff_client.get(f"/api/tool-bindings/{pk}").status_code == 404


def test_a_plain_user_reads_bindings_but_cannot_change_them(user_client, bindings):
    assert user_client.get("/api/tool-bindings").status_code == 200
    pk = bindings["order_lookup"].pk
    assert user_client.post(f"/api/tool-bindings/{pk}/toggle").status_code == 403
    assert ToolBinding.objects.get(pk=pk).enabled is True


def test_an_anonymous_call_is_401(anon_client):
    assert anon_client.get("/api/tool-bindings").status_code == 401
    assert anon_client.get("/api/tool-calls").status_code == 401


def test_bindings_filter_by_kind_and_enabled(staff_client, bindings):
    writes = envelope(staff_client.get("/api/tool-bindings", {"kind": "write"}), 200)["results"]
    assert [b["name"] for b in writes] == ["refund_issue"]
    assert staff_client.get("/api/tool-bindings", {"enabled": "maybe"}).status_code == 422


# --- calls


def pending(tool_visit, **tools):
    tv = tool_visit(**tools)
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="refund_issue", arguments=REFUND)
    return tv, call


def test_calls_are_listed_with_filters_status_run_id_and_tool(staff_client, tool_visit, shop):
    tv, call = pending(tool_visit)
    tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    waiting = envelope(staff_client.get("/api/tool-calls", {"status": "PENDING_APPROVAL"}), 200)
    assert [row["id"] for row in waiting["results"]] == [call.pk]
    row = waiting["results"][0]
    assert (row["runId"], row["nodeId"], row["tool"], row["arguments"]) == (tv.run_id, "B", "refund_issue", REFUND)
    assert row["expiresAt"] is not None
    assert envelope(staff_client.get("/api/tool-calls", {"tool": "order_lookup"}), 200)["count"] == 1
    assert envelope(staff_client.get("/api/tool-calls", {"runId": "nope"}), 200)["count"] == 0
    assert staff_client.get("/api/tool-calls", {"status": "DONE"}).status_code == 422


def test_an_approval_through_the_api_executes_the_call(approver_client, tool_visit, shop, approver):
    _, call = pending(tool_visit)
    data = envelope(approver_client.post(f"/api/tool-calls/{call.pk}/approve"), 200)
    assert (data["status"], data["httpStatus"], data["decidedBy"]) == ("SUCCEEDED", 200, approver.username)
    assert data["result"]["refundId"] == "RF-7001"
    assert [(e["path"], e["authorized"]) for e in shop.seen] == [("/refunds", True)]


def test_approving_twice_is_a_409_and_executes_once(approver_client, tool_visit, shop):
    _, call = pending(tool_visit)
    envelope(approver_client.post(f"/api/tool-calls/{call.pk}/approve"), 200)
    body = envelope_body(approver_client.post(f"/api/tool-calls/{call.pk}/approve"), 409)
    assert "is SUCCEEDED, not waiting for approval" in body["message"]
    assert len(shop.seen) == 1


def test_approve_after_expiry_is_409(approver_client, tool_visit, shop, clock):
    _, call = pending(tool_visit)
    clock.advance(1801)
    body = envelope_body(approver_client.post(f"/api/tool-calls/{call.pk}/approve"), 409)
    assert "expired" in body["message"]
    assert ToolCall.objects.get(pk=call.pk).status == "EXPIRED" and shop.seen == []


def test_a_rejection_through_the_api_never_reaches_the_service(approver_client, tool_visit, shop):
    _, call = pending(tool_visit)
    data = envelope(
        approver_client.post(f"/api/tool-calls/{call.pk}/reject", {"note": "Not without a receipt."}, format="json"),
        200,
    )
    assert (data["status"], data["note"]) == ("REJECTED", "Not without a receipt.")
    assert envelope_body(approver_client.post(f"/api/tool-calls/{call.pk}/approve"), 409)
    assert shop.seen == []


def test_a_rejection_without_a_note_is_422_and_changes_nothing(approver_client, tool_visit, shop):
    _, call = pending(tool_visit)
    body = envelope_body(approver_client.post(f"/api/tool-calls/{call.pk}/reject", {}, format="json"), 422)
    assert "note" in body["data"]["errors"]
    assert ToolCall.objects.get(pk=call.pk).status == "PENDING_APPROVAL"


def test_a_staff_user_without_the_approve_permission_reads_calls_but_gets_403_deciding(staff_client, tool_visit, shop):
    _, call = pending(tool_visit)
    assert staff_client.get("/api/tool-calls").status_code == 200
    body = envelope_body(staff_client.post(f"/api/tool-calls/{call.pk}/approve"), 403)
    assert "approve_toolcall" in body["message"]
    assert ToolCall.objects.get(pk=call.pk).status == "PENDING_APPROVAL" and shop.seen == []


def test_a_plain_user_needs_view_toolcall_to_read_calls(user, tool_visit, shop):
    pending(tool_visit)
    client = token_client(user)
    assert client.get("/api/tool-calls").status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="view_toolcall"))
    assert envelope(client.get("/api/tool-calls"), 200)["count"] == 1


def test_an_unknown_call_is_404(approver_client, db):
    body = envelope_body(approver_client.post("/api/tool-calls/999/approve"), 404)
    assert body["message"] == "No tool call with id 999."
