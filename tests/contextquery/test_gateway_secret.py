"""The business service's secret stays on the server (SPEC §7.1, §7.2): after a
whole run — bindings created, a read, a write queued, approved and read back over
MCP, a business answer that echoes the secret — the secret is in no API or
internal response, no page, no admin view, no log line, no MCP message and no
database column. It did reach the business service, as its bearer token."""

from __future__ import annotations

import asyncio
import logging

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from rest_framework.test import APIClient

from contextquery import tool_gateway
from contextquery.client.context_tools import ContextQueryConfig
from contextquery.models import ToolBinding, ToolCall
from tests.conftest import token_client
from tests.contextquery.gateway_fixtures import SECRET, record_support_run
from tests.contextquery.test_mcp_server import stdio_params

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def mcp_session(config, errlog_path, between):
    """List the tools, look an order up, ask for a refund, run ``between(queued answer)``
    (the approval), then ask the refund's status. Returns every text the server sent."""

    async def go():
        with open(errlog_path, "w") as errlog:
            async with stdio_client(stdio_params(config), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    texts = [f"{t.name} {t.description} {t.inputSchema}" for t in listed.tools]
                    for name, args in (
                        ("order_lookup", {"orderId": "A-1001"}),
                        ("refund_issue", {"orderId": "A-1001", "amount": 3}),
                    ):
                        result = await session.call_tool(name, args)
                        texts.append(result.model_dump_json())
                    call_id = await asyncio.to_thread(between, texts[-1])
                    result = await session.call_tool("get_tool_call_status", {"call_id": call_id})
                    texts.append(result.model_dump_json())
                    return texts

    return asyncio.run(asyncio.wait_for(go(), 120))


def database_text() -> str:
    """Every row of every table, as text."""
    rows = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(rows)


def test_the_secret_appears_nowhere_after_a_whole_run(
    engine_api, live_server, bindings, shop, scripted_server, settings, approver, superuser, caplog, tmp_path
):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="hermes_ops")
    seen: list[str] = []

    # A second read whose service echoes the bearer header back.
    echo = scripted_server({"status": 200, "body": {"youSent": f"Bearer {SECRET}"}})
    settings.HERMES_TOOL_ALLOWED_HOSTS = [*settings.HERMES_TOOL_ALLOWED_HOSTS, f"127.0.0.1:{echo.server_address[1]}"]
    ops_api = token_client(superuser)
    created = ops_api.post(
        "/api/tool-bindings",
        {"name": "whoami", "inputSchema": {"type": "object"}, "endpoint": echo.url + "/whoami", "secretRef": "SHOP"},
        format="json",
    )
    seen.append(created.content.decode())

    client = engine_api()
    run, _, b = record_support_run(client)
    client.register_visit(run["runId"], node_id="B", tools=["whoami"])
    config = ContextQueryConfig.from_context_query(b["contextQuery"])
    approver_api = token_client(approver)

    def approve(queued: str) -> int:
        call_id = ToolCall.objects.get(status="PENDING_APPROVAL").pk
        seen.append(queued)
        seen.append(approver_api.post(f"/api/tool-calls/{call_id}/approve").content.decode())
        return call_id

    seen += mcp_session(config, tmp_path / "mcp.err", approve)
    seen.append((tmp_path / "mcp.err").read_text())

    # The echoing read through the internal endpoint, as the agent would call it.
    whoami_visit = client.list_visits(run["runId"])["results"][-1]
    internal = APIClient().generic(
        "POST",
        "/internal/tools/call",
        f'{{"runId": "{run["runId"]}", "name": "whoami", "arguments": {{}}}}',
        content_type="application/json",
        HTTP_X_CONTEXT_TOKEN=client.issue_token(run["runId"], whoami_visit["visitUuid"])["token"],
        REMOTE_ADDR="127.0.0.1",
    )
    seen.append(internal.content.decode())
    assert "[secret withheld]" in internal.content.decode()

    # Every API answer about what happened.
    for path in ("/api/tool-bindings", "/api/tool-calls", f"/api/runs/{run['runId']}/visits"):
        seen.append(ops_api.get(path).content.decode())
    for binding in ToolBinding.objects.all():
        seen.append(ops_api.get(f"/api/tool-bindings/{binding.pk}").content.decode())
    for call in ToolCall.objects.all():
        seen.append(ops_api.get(f"/api/tool-calls/{call.pk}").content.decode())
    seen.append(ops_api.get(f"/api/runs/{run['runId']}/visits/{b['visitUuid']}").content.decode())

    # Every page and admin view that shows bindings or calls.
    browser = Client()
    browser.force_login(superuser)
    visit_uuid = b["visitUuid"]
    pages = ["/tools/", "/tools/approvals/", f"/runs/{run['runId']}/", f"/runs/{run['runId']}/visits/{visit_uuid}/"]
    for binding in ToolBinding.objects.all():
        pages += [f"/tools/{binding.pk}/", f"/tools/{binding.pk}/edit/"]
        pages.append(reverse("admin:contextquery_toolbinding_change", args=[binding.pk]))
    for call in ToolCall.objects.all():
        pages.append(reverse("admin:contextquery_toolcall_change", args=[call.pk]))
    pages += [
        reverse("admin:contextquery_toolbinding_changelist"),
        reverse("admin:contextquery_toolcall_changelist"),
        reverse("admin:contextquery_toolbindingchange_changelist"),
    ]
    for page in pages:
        response = browser.get(page)
        assert response.status_code == 200, page
        seen.append(response.content.decode())

    statuses = sorted(ToolCall.objects.values_list("tool_name", "status"))
    assert statuses == [("order_lookup", "SUCCEEDED"), ("refund_issue", "SUCCEEDED"), ("whoami", "SUCCEEDED")]
    assert [entry["authorized"] for entry in shop.seen] == [True, True]
    assert echo.seen[0][1]["Authorization"] == f"Bearer {SECRET}"
    assert tool_gateway.secret_is_set("SHOP")
    leaks = [text[:300] for text in seen if SECRET in text]
    assert leaks == []
    assert SECRET not in caplog.text and caplog.records
    assert SECRET not in database_text()
