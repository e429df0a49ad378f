"""The tool pages under /tools/ and the admin (SPEC §7.3) through Django's test
client: the list, the form (an endpoint host not allowed is a form error), edit,
toggle, delete, the approvals page with its permission, Approve and Reject
without JavaScript (CSRF enforced), the visit page's tool calls, and the admin
that shows a secret's name and never its value."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from contextquery import tool_gateway
from contextquery.models import ToolBinding, ToolBindingChange, ToolCall
from demo.business import LOOKUP_SCHEMA
from tests.contextquery.gateway_fixtures import SECRET

pytestmark = pytest.mark.django_db

REFUND = {"orderId": "A-1001", "amount": 5}


def logged_in(user, *, csrf=False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def ops(staff_user):
    return logged_in(staff_user)


@pytest.fixture
def decider(approver):
    return logged_in(approver)


def html(response, status=200) -> str:
    assert response.status_code == status, response.status_code
    return response.content.decode()


def form_data(shop, **overrides) -> dict:
    data = {
        "name": "order_lookup",
        "description": "Look an order up.",
        "input_schema": json.dumps(LOOKUP_SCHEMA),
        "kind": "read",
        "approval": "",
        "endpoint": shop.url + "/orders/lookup",
        "secret_ref": "SHOP",
        "timeout_seconds": "5",
        "enabled": "on",
    }
    return {**data, **overrides}


def pending(tool_visit):
    tv = tool_visit()
    return tv, tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="refund_issue", arguments=REFUND)


def csrf_of(page: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)


# --- access


def test_an_anonymous_visitor_is_sent_to_log_in(client, db):
    response = client.get("/tools/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=/tools/")


def test_a_non_staff_user_gets_403(user):
    assert logged_in(user).get("/tools/").status_code == 403


def test_the_approvals_page_needs_the_approve_permission(ops, decider, db):
    assert ops.get("/tools/approvals/").status_code == 403
    assert decider.get("/tools/approvals/").status_code == 200


# --- bindings


def test_the_list_shows_each_binding_its_secret_name_and_state_never_the_secret(ops, bindings, monkeypatch):
    page = html(ops.get("/tools/"))
    assert "order_lookup" in page and "refund_issue" in page and "needs approval" in page
    assert "<code>SHOP</code>" in page and SECRET not in page
    monkeypatch.delenv("HERMES_TOOL_SECRET_SHOP")
    assert "not set" in html(ops.get("/tools/"))


def test_the_list_says_when_no_host_is_allowed(ops, db, settings):
    settings.HERMES_TOOL_ALLOWED_HOSTS = []
    assert "no endpoint is reachable until ops allow hosts" in html(ops.get("/tools/"))


def test_the_new_form_creates_a_binding_with_history_by_page(ops, shop, staff_user):
    response = ops.post("/tools/new/", form_data(shop, kind="write"))
    binding = ToolBinding.objects.get(name="order_lookup")
    assert response.status_code == 302 and response["Location"] == reverse("tools:detail", args=[binding.pk])
    assert binding.approval == "required" and binding.input_schema == LOOKUP_SCHEMA
    change = ToolBindingChange.objects.get(binding_ref=binding.pk)
    assert (change.via, change.actor_label) == ("page", staff_user.username)


def test_an_endpoint_host_not_allowed_is_a_form_error_and_nothing_is_stored(ops, shop, settings):
    settings.HERMES_TOOL_ALLOWED_HOSTS = ["orders.internal"]
    page = html(ops.post("/tools/new/", form_data(shop)))
    assert "is not in HERMES_TOOL_ALLOWED_HOSTS (orders.internal)" in page
    assert not ToolBinding.objects.exists()


def test_a_schema_that_is_not_json_or_not_a_schema_is_a_form_error(ops, shop):
    assert "Enter a valid JSON" in html(ops.post("/tools/new/", form_data(shop, input_schema="{oops")))
    assert "Not a valid JSON Schema" in html(ops.post("/tools/new/", form_data(shop, input_schema='{"type": 7}')))
    assert not ToolBinding.objects.exists()


def test_a_reserved_name_is_a_form_error(ops, shop):
    page = html(ops.post("/tools/new/", form_data(shop, name="get_node_output")))
    assert "is a tool of the MCP server itself" in page
    assert not ToolBinding.objects.exists()


def test_editing_changes_only_what_changed_and_shows_it_in_the_history(ops, bindings, shop):
    binding = bindings["order_lookup"]
    data = form_data(shop, approval="none", description="Look up one order.")
    ops.post(f"/tools/{binding.pk}/edit/", data)
    change = ToolBindingChange.objects.filter(binding_ref=binding.pk, action="update").get()
    assert change.before["description"] != change.after["description"] == "Look up one order."
    page = html(ops.get(f"/tools/{binding.pk}/"))
    assert "Look up one order." in page and 'id="history"' in page and "(read from HERMES_TOOL_SECRET_SHOP)" in page


def test_the_switch_toggles_and_goes_back(ops, bindings):
    binding = bindings["order_lookup"]
    response = ops.post(f"/tools/{binding.pk}/toggle/", {"next": "/tools/?kind=read"})
    assert response["Location"] == "/tools/?kind=read"
    binding.refresh_from_db()
    assert binding.enabled is False


def test_delete_asks_then_deletes(ops, bindings):
    binding = bindings["order_lookup"]
    assert "confirm-delete" in html(ops.get(f"/tools/{binding.pk}/delete/"))
    assert ops.post(f"/tools/{binding.pk}/delete/").status_code == 302
    assert not ToolBinding.objects.filter(pk=binding.pk).exists()


# --- approvals


def test_the_approvals_page_lists_a_pending_call_with_its_run_visit_node_and_arguments(decider, tool_visit, shop):
    tv, call = pending(tool_visit)
    page = html(decider.get("/tools/approvals/"))
    section = page.split(f'id="pending-{call.pk}"')[1].split("</section>")[0]
    assert tv.run_id in section and "B#1" in section and "refund_issue" in section
    assert "&quot;amount&quot;: 5" in section


def test_approve_on_the_page_executes_the_call_without_javascript_and_with_csrf(approver, tool_visit, shop):
    _, call = pending(tool_visit)
    client = logged_in(approver, csrf=True)
    page = html(client.get("/tools/approvals/"))
    assert client.post(f"/tools/approvals/{call.pk}/approve/").status_code == 403  # no CSRF token
    response = client.post(f"/tools/approvals/{call.pk}/approve/", {"csrfmiddlewaretoken": csrf_of(page)})
    assert response.status_code == 302 and response["Location"] == "/tools/approvals/"
    assert ToolCall.objects.get(pk=call.pk).status == "SUCCEEDED"
    assert [e["path"] for e in shop.seen] == ["/refunds"]
    after = html(client.get("/tools/approvals/"))
    assert "approved and executed: HTTP 200" in after and 'id="no-pending"' in after


def test_reject_on_the_page_keeps_the_note_and_never_calls_the_service(decider, tool_visit, shop):
    _, call = pending(tool_visit)
    decider.post(f"/tools/approvals/{call.pk}/reject/", {f"call-{call.pk}-note": "Ask the customer first."})
    stored = ToolCall.objects.get(pk=call.pk)
    assert (stored.status, stored.note) == ("REJECTED", "Ask the customer first.") and shop.seen == []


def test_a_rejection_without_a_note_is_refused_with_a_message(decider, tool_visit, shop):
    _, call = pending(tool_visit)
    response = decider.post(f"/tools/approvals/{call.pk}/reject/", {f"call-{call.pk}-note": ""}, follow=True)
    assert "Say why the call is rejected" in response.content.decode()
    assert ToolCall.objects.get(pk=call.pk).status == "PENDING_APPROVAL"


def test_approving_an_expired_call_on_the_page_says_so(decider, tool_visit, shop, clock):
    _, call = pending(tool_visit)
    clock.advance(1801)
    response = decider.post(f"/tools/approvals/{call.pk}/approve/", follow=True)
    assert "expired before it was decided" in response.content.decode() and shop.seen == []


def test_a_staff_user_without_the_permission_cannot_approve_by_posting(ops, tool_visit, shop):
    _, call = pending(tool_visit)
    assert ops.post(f"/tools/approvals/{call.pk}/approve/").status_code == 403
    assert ToolCall.objects.get(pk=call.pk).status == "PENDING_APPROVAL" and shop.seen == []


def test_user_supplied_text_is_escaped(decider, tool_visit, shop):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={**REFUND, "reason": "<script>alert(1)</script>"}
    )
    page = html(decider.get("/tools/approvals/"))
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert f"pending-{call.pk}" in page


# --- the visit page


def test_the_visit_page_lists_its_tools_and_its_tool_calls(ops, tool_visit, shop):
    tv, call = pending(tool_visit)
    tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    page = html(ops.get(reverse("contextquery:visit", args=[tv.run_id, tv.visit.visit_uuid])))
    tools = page.split('id="visit-tools"')[1].split("</td>")[0]
    assert "<code>order_lookup</code>, <code>refund_issue</code>" in tools
    table = page.split('id="business-call-table"')[1].split("</table>")[0]
    assert f'id="business-call-{call.pk}"' in table and "Waiting for approval" in table
    assert "Succeeded" in table and "delivered" in table


# --- admin


@pytest.fixture
def admin_client(client, superuser):
    client.force_login(superuser)
    return client


def test_the_admin_shows_the_secret_name_and_its_state_never_the_secret(admin_client, bindings, tool_visit):
    tv, call = pending(tool_visit)
    binding = bindings["order_lookup"]
    pages = [
        admin_client.get(reverse("admin:contextquery_toolbinding_changelist")),
        admin_client.get(reverse("admin:contextquery_toolbinding_change", args=[binding.pk])),
        admin_client.get(reverse("admin:contextquery_toolcall_change", args=[call.pk])),
        admin_client.get(reverse("admin:contextquery_visit_change", args=[tv.visit.pk])),
    ]
    texts = [html(page) for page in pages]
    assert "HERMES_TOOL_SECRET_SHOP: set" in texts[0]
    assert all(SECRET not in text for text in texts)


def test_saving_in_the_admin_goes_through_the_gateway_with_history(admin_client, bindings, shop, superuser):
    binding = bindings["order_lookup"]
    url = reverse("admin:contextquery_toolbinding_change", args=[binding.pk])
    data = form_data(shop, description="Changed in the admin.")
    data.update({f"changes-{k}": v for k, v in {"TOTAL_FORMS": "0", "INITIAL_FORMS": "0"}.items()})
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    change = ToolBindingChange.objects.get(binding_ref=binding.pk, action="update")
    assert (change.via, change.actor_label) == ("admin", superuser.username)


def test_an_admin_save_with_a_host_not_allowed_is_a_form_error(admin_client, bindings, shop, settings):
    binding = bindings["order_lookup"]
    settings.HERMES_TOOL_ALLOWED_HOSTS = ["orders.internal"]
    url = reverse("admin:contextquery_toolbinding_change", args=[binding.pk])
    data = form_data(shop, endpoint="http://127.0.0.1:9/x")
    data.update({"changes-TOTAL_FORMS": "0", "changes-INITIAL_FORMS": "0"})
    page = html(admin_client.post(url, data))
    assert "HERMES_TOOL_ALLOWED_HOSTS" in page
    binding.refresh_from_db()
    assert binding.endpoint.endswith("/orders/lookup")


def test_tool_calls_are_read_only_in_the_admin(admin_client, tool_visit, shop):
    _, call = pending(tool_visit)
    url = reverse("admin:contextquery_toolcall_change", args=[call.pk])
    assert admin_client.post(url, {"status": "SUCCEEDED"}).status_code == 403
    assert admin_client.get(reverse("admin:contextquery_toolcall_delete", args=[call.pk])).status_code == 403


def test_the_list_filter_button_reads_like_every_other_filter_button_in_chinese(ops, db):
    page = html(ops.get(reverse("tools:list"), HTTP_ACCEPT_LANGUAGE="zh-hans"))
    assert '<button type="submit">筛选</button>' in page and "过滤器" not in page
