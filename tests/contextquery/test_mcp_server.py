"""``python -m contextquery.client.mcp_server`` through the official MCP SDK client,
over stdio and streamable HTTP, against a live Hermes Ops (SPEC §5)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from contextquery.client import mcp_server
from contextquery.client.context_tools import TOOL_NAMES, ContextQueryConfig
from tests.contextquery.agent_fixtures import OUTPUT_A, REPO, free_port, http_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CALLS = [
    ("get_predecessor_paths", {}),
    ("get_node_output", {"node_id": "A", "field": "result"}),
    ("get_node_meta", {"node_id": "A", "kind": "THINKING"}),
]


def stdio_params(config: ContextQueryConfig | None, **env) -> StdioServerParameters:
    values = (
        {
            "HERMES_CONTEXT_BASE_URL": config.base_url,
            "HERMES_CONTEXT_TOKEN": config.token,
            "HERMES_CONTEXT_RUN_ID": config.run_id,
            "HERMES_CONTEXT_VISIT_UUID": config.visit_uuid,
        }
        if config
        else {}
    )
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "contextquery.client.mcp_server"],
        cwd=str(REPO),
        env={**os.environ, **values, **env},
    )


async def session_run(streams, calls):
    """List the tools, then make ``calls``; returns ``(tool names, schemas, answer texts)``."""
    read, write = streams[0], streams[1]
    async with ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        answers = []
        for name, args in calls:
            result = await session.call_tool(name, args)
            answers.append("".join(block.text for block in result.content if block.type == "text"))
        return [t.name for t in listed.tools], {t.name: t.inputSchema for t in listed.tools}, answers


def over_stdio(config, calls):
    async def go():
        async with stdio_client(stdio_params(config)) as streams:
            return await session_run(streams, calls)

    return asyncio.run(asyncio.wait_for(go(), 60))


def over_http(url, headers, calls):
    async def go():
        async with (
            httpx.AsyncClient(headers=headers, timeout=30) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            return await session_run(streams, calls)

    return asyncio.run(asyncio.wait_for(go(), 60))


def headers_for(config: ContextQueryConfig) -> dict:
    return {
        "X-Context-Token": config.token,
        "X-Context-Run-Id": config.run_id,
        "X-Context-Visit-Uuid": config.visit_uuid,
    }


def json_of(answer: str) -> dict:
    return json.loads(answer.split("```json\n", 1)[1].rsplit("\n```", 1)[0])


def test_over_stdio_the_server_lists_exactly_the_three_tools_and_answers_each(live_chain):
    rec, config = live_chain()
    names, schemas, answers = over_stdio(config, CALLS)
    assert sorted(names) == sorted(TOOL_NAMES)
    assert schemas["get_node_output"]["required"] == ["node_id"]
    assert json_of(answers[0])["nodeIds"] == ["A", "B"]
    assert json_of(answers[1])["data"] == OUTPUT_A["data"]["result"]
    assert json_of(answers[2])["thinking"] == "Look it up."


def test_over_stdio_a_failure_is_one_sentence(live_chain):
    rec, config = live_chain()
    _, _, [answer] = over_stdio(config, [("get_node_output", {"node_id": "G"})])
    assert "```" not in answer and "node G" in answer


def test_over_stdio_without_the_environment_the_server_exits_naming_the_variables():
    result = subprocess.run(
        [sys.executable, "-m", "contextquery.client.mcp_server"],
        cwd=REPO,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("HERMES_CONTEXT_")},
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert b"HERMES_CONTEXT_TOKEN" in result.stderr


def test_over_http_the_server_lists_exactly_the_three_tools_and_answers_each(live_chain, live_server):
    rec, config = live_chain()
    with http_server(live_server.url) as url:
        names, _, answers = over_http(url, headers_for(config), CALLS)
    assert sorted(names) == sorted(TOOL_NAMES)
    assert json_of(answers[0])["nodeIds"] == ["A", "B"]
    assert json_of(answers[1])["data"] == OUTPUT_A["data"]["result"]
    assert json_of(answers[2])["thinking"] == "Look it up."


def test_over_http_each_connection_reads_its_own_visit(live_chain, live_flyback, live_server):
    chain, chain_config = live_chain()
    flyback, flyback_config = live_flyback
    with http_server(live_server.url) as url:
        _, _, [chain_paths] = over_http(url, headers_for(chain_config), CALLS[:1])
        _, _, [flyback_paths] = over_http(url, headers_for(flyback_config), CALLS[:1])
    assert json_of(chain_paths)["nodeIds"] == ["A", "B"]
    assert [p["sequence"] for p in json_of(flyback_paths)["paths"]] == [["A", "B", "C", "G", "C"]]


def test_over_http_a_connection_without_context_headers_gets_a_sentence(live_server):
    with http_server(live_server.url) as url:
        _, _, [answer] = over_http(url, {}, CALLS[:1])
    assert "did not send the workflow context headers" in answer and "```" not in answer


def test_over_http_a_base_url_off_the_loopback_is_refused_at_start():
    result = subprocess.run(
        [sys.executable, "-m", "contextquery.client.mcp_server", "--http", "--port", str(free_port())],
        cwd=REPO,
        capture_output=True,
        timeout=60,
        env={**os.environ, "HERMES_CONTEXT_BASE_URL": "http://hermes-ops.invalid:8000"},
    )
    assert result.returncode == 2
    assert b"loopback" in result.stderr


def test_one_visit_keeps_one_call_budget_across_requests():
    budgets = mcp_server._Budgets()
    first = ContextQueryConfig("http://127.0.0.1:1", "a" * 48, "r1", "v1")
    assert budgets.for_config(first) is budgets.for_config(
        ContextQueryConfig("http://127.0.0.1:1", "a" * 48, "r1", "v1")
    )
    assert budgets.for_config(first) is not budgets.for_config(
        ContextQueryConfig("http://127.0.0.1:1", "b" * 48, "r1", "v1")
    )
