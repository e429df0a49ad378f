"""The tool gateway's rules (SPEC §7, ``contextquery.tool_gateway``): bindings and
their history, allowed hosts (on save and on every call, after one DNS
resolution), execution, approval, rejection, idempotency and expiry."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.core.management import call_command

from contextquery import judgement, recording, tool_gateway
from contextquery.models import ToolBinding, ToolBindingChange, ToolCall, Visit
from demo.business import LOOKUP_SCHEMA
from project.errors import Conflict, Forbidden, Invalid, NotFound
from tests.contextquery.gateway_fixtures import SECRET, SECRET_REF
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def lookup_values(url: str, **overrides) -> dict:
    values = {
        "name": "stock_check",
        "description": "Stock of one article.",
        "input_schema": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
        "kind": "read",
        "endpoint": url,
    }
    return {**values, **overrides}


@pytest.fixture
def fake_dns(monkeypatch):
    """``fake_dns["shop.test"] = "127.0.0.1"``: names resolved as the test says; others as usual."""
    table: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in table:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (table[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


# --- bindings


def test_a_binding_is_stored_with_a_history_row_naming_who_and_how(shop, staff_user):
    binding = tool_gateway.binding_create(values=lookup_values(shop.url + "/stock"), actor=staff_user, via="page")
    change = ToolBindingChange.objects.get(binding_ref=binding.pk)
    assert (change.action, change.actor_label, change.via) == ("create", staff_user.username, "page")
    assert change.after["endpoint"] == shop.url + "/stock" and change.before is None


def test_a_write_waits_for_approval_by_default_and_a_read_does_not(shop):
    write = tool_gateway.binding_create(values=lookup_values(shop.url, name="refund", kind="write"), via="command")
    read = tool_gateway.binding_create(values=lookup_values(shop.url), via="command")
    assert (write.approval, read.approval) == ("required", "none")


@pytest.mark.parametrize(
    "name", ["get_node_output", "get_tool_call_status", "Order", "9lives", "a" * 65, "order-lookup"]
)
def test_a_name_that_is_reserved_or_not_a_tool_name_is_refused(shop, name):
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values(shop.url, name=name), via="command")
    assert "name" in refused.value.errors
    assert not ToolBinding.objects.exists()


def test_an_input_schema_that_is_not_a_json_schema_is_refused_with_the_validators_message(shop):
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values(shop.url, input_schema={"type": "objekt"}), via="command")
    assert refused.value.errors["inputSchema"][0].startswith("Not a valid JSON Schema: 'objekt' is not valid")
    assert not ToolBinding.objects.exists()


def test_an_input_schema_of_something_other_than_an_object_is_refused(shop):
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values(shop.url, input_schema={"type": "string"}), via="command")
    assert "object" in refused.value.errors["inputSchema"][0]


def test_an_endpoint_whose_host_is_not_allowed_is_refused_on_save(shop, settings):
    settings.HERMES_TOOL_ALLOWED_HOSTS = ["127.0.0.1:1"]
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values(shop.url), via="command")
    assert "is not in HERMES_TOOL_ALLOWED_HOSTS (127.0.0.1:1)" in refused.value.errors["endpoint"][0]
    assert not ToolBinding.objects.exists() and not ToolBindingChange.objects.exists()


def test_with_no_allowed_hosts_no_endpoint_can_be_saved(shop, settings):
    settings.HERMES_TOOL_ALLOWED_HOSTS = []
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values(shop.url), via="command")
    assert "HERMES_TOOL_ALLOWED_HOSTS is empty" in refused.value.errors["endpoint"][0]


def test_an_endpoint_that_is_not_http_is_refused(shop):
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values("ftp://127.0.0.1/x"), via="command")
    assert "endpoint" in refused.value.errors


def test_a_name_that_resolves_to_an_allowed_address_is_accepted(shop, fake_dns):
    fake_dns["shop.test"] = "127.0.0.1"
    binding = tool_gateway.binding_create(
        values=lookup_values(f"http://shop.test:{shop.port}/orders/lookup"), via="command"
    )
    assert binding.pk


def test_a_name_that_resolves_elsewhere_is_refused_on_save(shop, fake_dns):
    fake_dns["elsewhere.test"] = "10.20.30.40"
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values(f"http://elsewhere.test:{shop.port}/x"), via="command")
    assert "elsewhere.test (10.20.30.40)" in refused.value.errors["endpoint"][0]


def test_an_update_keeps_history_and_a_toggle_records_enable_and_disable(bindings, staff_user):
    lookup = bindings["order_lookup"]
    tool_gateway.binding_update(target=lookup, values={"timeout_seconds": 3}, actor=staff_user, via="api")
    tool_gateway.binding_toggle(target=lookup, actor=staff_user, via="api")
    actions = list(
        ToolBindingChange.objects.filter(binding_ref=lookup.pk).order_by("id").values_list("action", flat=True)
    )
    assert actions == ["create", "update", "disable"]
    lookup.refresh_from_db()
    assert (lookup.timeout_seconds, lookup.enabled) == (3, False)


def test_a_timeout_above_twenty_seconds_is_refused(bindings):
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_update(target=bindings["order_lookup"], values={"timeout_seconds": 21}, via="command")
    assert "timeoutSeconds" in refused.value.errors
    assert ToolBinding.objects.get(name="order_lookup").timeout_seconds == 5


def test_deleting_a_binding_keeps_its_history_and_its_calls(tool_visit):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    binding = ToolBinding.objects.get(name="order_lookup")
    binding_pk = binding.pk
    tool_gateway.binding_delete(target=binding, via="command")
    call.refresh_from_db()
    assert call.binding_id is None and call.tool_name == "order_lookup"
    assert ToolBindingChange.objects.filter(binding_ref=binding_pk, action="delete").exists()


# --- a visit's tools


def test_registering_a_visit_with_tools_stores_them_sorted(record, bindings):
    rec = record()
    registered = recording.visit_register(run=rec.run, node_id="A", tools=["refund_issue", "order_lookup"])
    assert registered.visit.tools == ["order_lookup", "refund_issue"]


def test_a_tool_that_is_not_an_enabled_binding_is_422_naming_it_and_no_visit_is_stored(record, bindings):
    tool_gateway.binding_toggle(target=bindings["refund_issue"], via="command")
    rec = record()
    with pytest.raises(Invalid) as refused:
        recording.visit_register(run=rec.run, node_id="A", tools=["order_lookup", "refund_issue", "no_such_tool"])
    assert refused.value.errors == {"tools": ["Not an enabled tool binding: 'no_such_tool', 'refund_issue'."]}
    assert not Visit.objects.exists()


def test_a_retry_compares_tools_as_a_set_and_answers_even_if_a_binding_changed(record, bindings):
    rec = record()
    uuid = "6d1c2f0e-8b8a-4f4e-9c39-0a3b1d9e2f10"
    first = recording.visit_register(run=rec.run, node_id="A", visit_uuid=uuid, tools=["order_lookup", "refund_issue"])
    tool_gateway.binding_toggle(target=bindings["refund_issue"], via="command")
    again = recording.visit_register(
        run=rec.run, node_id="A", visit_uuid=uuid, tools=["refund_issue", "order_lookup", "order_lookup"]
    )
    assert (again.created, again.visit.pk) == (False, first.visit.pk)
    with pytest.raises(Conflict):
        recording.visit_register(run=rec.run, node_id="A", visit_uuid=uuid, tools=["order_lookup"])


def test_the_listing_leaves_out_a_binding_disabled_since_registration(tool_visit, bindings):
    tv = tool_visit()
    tool_gateway.binding_toggle(target=bindings["refund_issue"], via="command")
    listed = tool_gateway.visit_tools_listing(visit_id=tv.visit.pk)
    assert [t["name"] for t in listed] == ["order_lookup"]
    assert listed[0]["inputSchema"] == LOOKUP_SCHEMA and listed[0]["approval"] == "none"


# --- calls


def test_a_read_is_executed_at_once_with_the_secret_and_its_answer_stored(tool_visit, shop):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    assert (call.status, call.http_status, call.result["status"]) == ("SUCCEEDED", 200, "delivered")
    assert shop.seen == [
        {
            "path": "/orders/lookup",
            "body": {"orderId": "A-1001"},
            "authorized": True,
            "host": f"127.0.0.1:{shop.port}",
            "idempotency_key": f"hermes-ops-call-{call.pk}",
        }
    ]


def test_arguments_that_fail_the_schema_are_refused_with_the_validators_messages(tool_visit, shop):
    tv = tool_visit()
    with pytest.raises(Invalid) as refused:
        tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "1001", "x": 1})
    assert refused.value.errors == {
        "arguments": ["Additional properties are not allowed ('x' was unexpected)"],
        "arguments.orderId": ["'1001' does not match '^A-[0-9]{4}$'"],
    }
    assert not ToolCall.objects.exists() and shop.seen == []


def test_a_tool_the_node_was_not_given_is_not_found(tool_visit, shop):
    tv = tool_visit(tools=["order_lookup"])
    with pytest.raises(NotFound) as missing:
        tool_gateway.toolcall_request(
            visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 1}
        )
    assert "not available to this node" in missing.value.message
    assert not ToolCall.objects.exists() and shop.seen == []


def test_a_write_waits_for_approval_and_reaches_nobody_until_then(tool_visit, shop):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 5}
    )
    assert call.status == "PENDING_APPROVAL" and shop.seen == []


def test_an_approval_executes_the_call_once_and_records_who(tool_visit, shop, approver):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 5}
    )
    done = tool_gateway.toolcall_approve(call=call, user=approver)
    assert (done.status, done.result["status"], done.decided_by_label) == ("SUCCEEDED", "refunded", approver.username)
    with pytest.raises(Conflict) as again:
        tool_gateway.toolcall_approve(call=call, user=approver)
    assert "is SUCCEEDED, not waiting for approval" in again.value.message
    assert [entry["path"] for entry in shop.seen] == ["/refunds"]


def test_deciding_needs_the_approve_permission(tool_visit, shop, staff_user):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 5}
    )
    with pytest.raises(Forbidden):
        tool_gateway.toolcall_approve(call=call, user=staff_user)
    call.refresh_from_db()
    assert call.status == "PENDING_APPROVAL" and shop.seen == []


def test_a_rejected_call_never_reaches_the_service_and_keeps_the_note(tool_visit, shop, approver):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 500}
    )
    rejected = tool_gateway.toolcall_reject(call=call, user=approver, note="More than the order's total.")
    assert (rejected.status, rejected.note) == ("REJECTED", "More than the order's total.")
    with pytest.raises(Conflict):
        tool_gateway.toolcall_approve(call=call, user=approver)
    assert shop.seen == []


def test_a_rejection_needs_a_note(tool_visit, shop, approver):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 5}
    )
    with pytest.raises(Invalid):
        tool_gateway.toolcall_reject(call=call, user=approver, note="  ")
    call.refresh_from_db()
    assert call.status == "PENDING_APPROVAL"


def test_a_repeated_idempotency_key_answers_the_same_call_and_other_arguments_conflict(tool_visit, shop):
    tv = tool_visit()
    args = {"orderId": "A-1001"}
    first = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="order_lookup", arguments=args, idempotency_key="k1"
    )
    again = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="order_lookup", arguments=args, idempotency_key="k1"
    )
    assert again.pk == first.pk and len(shop.seen) == 1
    with pytest.raises(Conflict):
        tool_gateway.toolcall_request(
            visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1002"}, idempotency_key="k1"
        )
    assert ToolCall.objects.count() == 1


def test_a_pending_call_whose_binding_was_disabled_fails_when_approved_without_a_request(
    tool_visit, shop, approver, bindings
):
    tv = tool_visit()
    call = tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 5}
    )
    tool_gateway.binding_toggle(target=bindings["refund_issue"], via="command")
    done = tool_gateway.toolcall_approve(call=call, user=approver)
    assert done.status == "FAILED" and "disabled" in done.error
    assert shop.seen == []


def test_a_secret_that_is_not_set_fails_the_call_without_a_request(tool_visit, shop, monkeypatch):
    monkeypatch.delenv("HERMES_TOOL_SECRET_" + SECRET_REF)
    tv = tool_visit()
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    assert call.status == "FAILED" and "HERMES_TOOL_SECRET_SHOP) is not set" in call.error
    assert shop.seen == []


def test_an_answer_that_echoes_the_secret_is_stored_with_it_withheld(tool_visit, scripted_server, settings, bindings):
    echo = scripted_server({"status": 200, "body": {"seen": f"Bearer {SECRET}", SECRET: [SECRET]}})
    settings.HERMES_TOOL_ALLOWED_HOSTS = [*settings.HERMES_TOOL_ALLOWED_HOSTS, f"127.0.0.1:{echo.server_address[1]}"]
    tool_gateway.binding_update(target=bindings["order_lookup"], values={"endpoint": echo.url + "/echo"}, via="command")
    tv = tool_visit()
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    assert call.result == {"seen": "Bearer [secret withheld]", "[secret withheld]": ["[secret withheld]"]}
    assert echo.seen[0][1]["Authorization"] == f"Bearer {SECRET}"


# --- DNS: resolved once, checked, and the request sent to that address


def test_the_request_goes_to_the_resolved_address_with_the_endpoints_host_name(
    tool_visit, shop, fake_dns, settings, bindings
):
    fake_dns["shop.test"] = "127.0.0.1"
    tool_gateway.binding_update(
        target=bindings["order_lookup"],
        values={"endpoint": f"http://shop.test:{shop.port}/orders/lookup"},
        via="command",
    )
    tv = tool_visit()
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    assert call.status == "SUCCEEDED"
    assert shop.seen[-1]["host"] == f"shop.test:{shop.port}"


def test_a_call_fails_when_dns_later_points_elsewhere_and_nothing_is_sent(tool_visit, shop, fake_dns, bindings):
    fake_dns["shop.test"] = "127.0.0.1"
    tool_gateway.binding_update(
        target=bindings["order_lookup"],
        values={"endpoint": f"http://shop.test:{shop.port}/orders/lookup"},
        via="command",
    )
    fake_dns["shop.test"] = "10.9.8.7"
    tv = tool_visit()
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    assert call.status == "FAILED"
    assert "resolves to 10.9.8.7, which HERMES_TOOL_ALLOWED_HOSTS does not allow" in call.error
    assert shop.seen == []


def test_a_call_fails_when_ops_removed_its_host_from_the_allow_list(tool_visit, shop, settings):
    tv = tool_visit()
    settings.HERMES_TOOL_ALLOWED_HOSTS = ["127.0.0.1:1"]
    call = tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    assert call.status == "FAILED" and shop.seen == []


# --- expiry


def pending(tv) -> ToolCall:
    return tool_gateway.toolcall_request(
        visit_id=tv.visit.pk, name="refund_issue", arguments={"orderId": "A-1001", "amount": 5}
    )


def test_a_pending_call_expires_after_the_ttl_and_approving_it_is_a_conflict(
    tool_visit, shop, approver, clock, settings
):
    settings.HERMES_TOOL_APPROVAL_TTL_SECONDS = 60
    tv = tool_visit()
    call = pending(tv)
    clock.advance(61)
    with pytest.raises(Conflict) as late:
        tool_gateway.toolcall_approve(call=call, user=approver)
    assert "expired" in late.value.message
    call.refresh_from_db()
    assert call.status == "EXPIRED" and call.decided_by is None and shop.seen == []


def test_a_pending_call_expires_when_its_visit_completes(tool_visit, shop, approver):
    tv = tool_visit()
    call = pending(tv)
    judgement.visit_complete(
        visit=tv.visit, status="SUCCESS", output={"status": 200, "message": "ok", "data": {}}, final_text=None
    )
    with pytest.raises(Conflict):
        tool_gateway.toolcall_approve(call=call, user=approver)
    call.refresh_from_db()
    assert call.status == "EXPIRED" and "visit or run ended" in call.error and shop.seen == []


def test_a_pending_call_expires_when_its_run_finishes(tool_visit, shop):
    tv = tool_visit()
    call = pending(tv)
    recording.run_finish(run=tv.rec.run, status="CANCELLED")
    assert tool_gateway.toolcalls_expire() == 1
    call.refresh_from_db()
    assert call.status == "EXPIRED"


def test_expire_tool_calls_ends_the_calls_nobody_approved_in_time(tool_visit, shop, clock, capsys):
    tv = tool_visit()
    call = pending(tv)
    clock.advance(1801)
    call_command("expire_tool_calls")
    assert "Ended 1 tool call(s)" in capsys.readouterr().out
    call.refresh_from_db()
    assert call.status == "EXPIRED" and shop.seen == []


def test_a_call_cut_off_while_executing_is_failed_by_the_sweep(tool_visit, shop, clock):
    tv = tool_visit()
    call = pending(tv)
    ToolCall.objects.filter(pk=call.pk).update(status="EXECUTING", started_at=clock.now)
    clock.advance(121)
    tool_gateway.toolcalls_expire()
    call.refresh_from_db()
    assert call.status == "FAILED" and "cut off" in call.error


def test_a_user_without_a_pk_is_never_recorded_as_the_actor(shop):
    binding = tool_gateway.binding_create(values=lookup_values(shop.url), actor=UserFactory.build(), via="command")
    assert ToolBindingChange.objects.get(binding_ref=binding.pk).actor is None


def test_the_ttl_of_a_pending_call_is_its_expiry_time(tool_visit, shop):
    call = pending(tool_visit())
    assert tool_gateway.toolcall_expires_at(call) == call.requested_at + timedelta(seconds=1800)


@pytest.mark.parametrize(
    "schema, words",
    [
        (["type", "object"], "Must be a JSON Schema object"),
        ({"type": "object", "$schema": ["x"]}, "$schema must name"),
        ({"type": "object", "$ref": "https://schemas.example.com/order.json"}, "cannot be resolved"),
    ],
)
def test_a_schema_with_a_bad_dialect_or_a_remote_ref_is_refused_on_save(shop, schema, words):
    with pytest.raises(Invalid) as refused:
        tool_gateway.binding_create(values=lookup_values(shop.url, input_schema=schema), via="command")
    assert words in refused.value.errors["inputSchema"][0]


def test_a_ref_that_cannot_be_resolved_at_a_call_is_a_422_not_a_crash(tool_visit, shop, bindings):
    ToolBinding.objects.filter(pk=bindings["order_lookup"].pk).update(
        input_schema={"type": "object", "properties": {"orderId": {"$ref": "#/$defs/missing"}}}
    )
    tv = tool_visit()
    with pytest.raises(Invalid) as refused:
        tool_gateway.toolcall_request(visit_id=tv.visit.pk, name="order_lookup", arguments={"orderId": "A-1001"})
    assert "cannot be resolved" in refused.value.errors["arguments"][0]
    assert shop.seen == []
