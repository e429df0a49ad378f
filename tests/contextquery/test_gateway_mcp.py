"""The visit's business tools through the MCP server, driven by the official MCP
SDK client over stdio and streamable HTTP against a live Hermes Ops (SPEC §7.4):
the read tool answers, the write tool waits, an approval through the API
releases it, ``get_tool_call_status`` sees the result, and the business service
saw exactly the approved calls with the secret header."""

from __future__ import annotations

import asyncio
import json
import re

import anyio
import httpx
import pytest
import requests
from knox.models import AuthToken
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from contextquery.client.context_tools import TOOL_NAMES, ContextQueryConfig
from demo.business import LOOKUP_SCHEMA, REFUND_SCHEMA
from tests.contextquery.agent_fixtures import http_server
from tests.contextquery.gateway_fixtures import SECRET, TOOLS, record_support_run
from tests.contextquery.test_mcp_server import headers_for, stdio_params

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def json_of(answer: str):
    return json.loads(answer.split("```json\n", 1)[1].rsplit("\n```", 1)[0])


async def session_steps(streams, steps):
    """List the tools, then run ``steps``: ``(name, args)`` MCP calls (``args`` may be a
    callable of the answers so far), or a callable ``f(answers) -> None`` run in a
    thread between them. Returns ``(tools by name, answers)``."""
    read, write = streams[0], streams[1]
    async with ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        answers = []
        for step in steps:
            if callable(step):
                await anyio.to_thread.run_sync(step, answers)
                continue
            name, args = step
            args = args(answers) if callable(args) else args
            result = await session.call_tool(name, args)
            answers.append("".join(block.text for block in result.content if block.type == "text"))
        return {t.name: t for t in listed.tools}, answers


def run_stdio(config, steps):
    async def go():
        async with stdio_client(stdio_params(config)) as streams:
            return await session_steps(streams, steps)

    return asyncio.run(asyncio.wait_for(go(), 120))


def run_http(url, headers, steps):
    async def go():
        async with (
            httpx.AsyncClient(headers=headers, timeout=60) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            return await session_steps(streams, steps)

    return asyncio.run(asyncio.wait_for(go(), 120))


@pytest.fixture
def visit_with_tools(engine_api, bindings):
    """A run A→B over the live server, B registered with both tools: ``(run, b, config)``."""
    client = engine_api()
    run, _, b = record_support_run(client)
    return run, b, ContextQueryConfig.from_context_query(b["contextQuery"])


def approve_through_the_api(base_url: str, api_token: str):
    """A step: approve the call the last answer queued, over HTTP as an ops user."""

    def step(answers):
        call_id = queued_call_id(answers)
        response = requests.post(
            f"{base_url}/api/tool-calls/{call_id}/approve", headers={"Authorization": f"Token {api_token}"}, timeout=30
        )
        assert response.status_code == 200, response.text

    return step


def flow(base_url, api_token):
    return [
        ("order_lookup", {"orderId": "A-1001"}),
        ("order_lookup", {"orderId": "1001"}),
        ("refund_issue", {"orderId": "A-1001", "amount": 12.5, "reason": "late delivery"}),
        approve_through_the_api(base_url, api_token),
        ("get_tool_call_status", lambda answers: {"call_id": queued_call_id(answers)}),
    ]


def queued_call_id(answers) -> int:
    """The call number of the last answer that queued a call."""
    queued = [a for a in answers if "queued for approval as call" in a]
    return int(re.search(r"as call (\d+)", queued[-1]).group(1))


def check_outcome(tools, answers, shop):
    assert sorted(tools) == sorted([*TOOL_NAMES, *TOOLS, "get_tool_call_status"])
    assert tools["order_lookup"].inputSchema == LOOKUP_SCHEMA
    assert tools["refund_issue"].inputSchema == REFUND_SCHEMA
    assert "approve" in tools["refund_issue"].description
    lookup, invalid, queued, status = answers
    assert lookup.startswith("The tool order_lookup answered (call ")
    assert json_of(lookup)["status"] == "delivered"
    assert invalid.startswith("The tool gateway did not accept the call of order_lookup: arguments.orderId:")
    assert "```" not in invalid
    assert re.fullmatch(
        r"The call of refund_issue is queued for approval as call \d+; ask get_tool_call_status later\.", queued
    )
    assert status.startswith("The tool refund_issue answered (call ")
    assert json_of(status) == {
        "refundId": "RF-7001",
        "orderId": "A-1001",
        "amount": 12.5,
        "currency": "EUR",
        "status": "refunded",
    }
    assert [(e["path"], e["body"], e["authorized"]) for e in shop.seen] == [
        ("/orders/lookup", {"orderId": "A-1001"}, True),
        ("/refunds", {"orderId": "A-1001", "amount": 12.5, "reason": "late delivery"}, True),
    ]
    assert all(SECRET not in answer for answer in answers)


@pytest.fixture
def ops_token(approver):
    return AuthToken.objects.create(user=approver)[1]


def test_over_stdio_the_read_answers_the_write_waits_and_an_api_approval_releases_it(
    visit_with_tools, live_server, shop, ops_token
):
    _, _, config = visit_with_tools
    tools, answers = run_stdio(config, flow(live_server.url, ops_token))
    check_outcome(tools, answers, shop)


def test_over_http_the_read_answers_the_write_waits_and_an_api_approval_releases_it(
    visit_with_tools, live_server, shop, ops_token
):
    _, _, config = visit_with_tools
    with http_server(live_server.url) as url:
        tools, answers = run_http(url, headers_for(config), flow(live_server.url, ops_token))
    check_outcome(tools, answers, shop)


def test_a_visit_given_no_tools_gets_exactly_the_three_context_tools(live_chain):
    _, config = live_chain()
    tools, _ = run_stdio(config, [])
    assert sorted(tools) == sorted(TOOL_NAMES)


def test_a_tool_outside_the_visits_list_is_answered_with_a_sentence(visit_with_tools, shop):
    _, _, config = visit_with_tools
    _, [answer] = run_stdio(config, [("stock_check", {"sku": "x"})])
    assert answer == "There is no tool named stock_check for this node." and shop.seen == []
