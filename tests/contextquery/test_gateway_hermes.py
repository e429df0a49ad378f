"""A real hermes-agent (fake LLM) reaching the visit's business tools (SPEC §7.4):

* through its ``mcp_servers`` config in a fresh process, while ops approve the
  write in headless Chromium on /tools/approvals/;
* through :func:`hermes_runner.visit_agent_run` with ``mcp_server``, the write
  approved through the API;
* the runner selects toolsets by name only: a JSON manifest is refused with a
  clear error instead of leaving the agent silently without its tools.

The business service sees exactly the approved calls, with the secret header."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest
import requests
from django.contrib.auth.models import Permission
from knox.models import AuthToken
from playwright.sync_api import expect

from contextquery.client import hermes_runner, mcp_server
from contextquery.client.context_tools import ContextQueryConfig
from contextquery.models import ToolCall
from demo.fake_llm import FakeLLMServer, answer, json_block, last_tool_result, tool_calls
from tests.browser import log_in, new_page, shot
from tests.contextquery.agent_fixtures import REPO
from tests.contextquery.gateway_fixtures import SECRET, TOOLS, record_support_run

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("hermes_process_state"),
]

PREFIX = "mcp__hermes_ops__"


def queued_id(text: str) -> int:
    return int(re.search(r"queued for approval as call (\d+)", text).group(1))


def support_script(before_status) -> list:
    """Look the order up, ask for a refund (queued), call ``before_status(call_id)``
    (the approval happens there), ask the call's status, answer from both results."""

    def ask_status(body):
        call_id = queued_id(last_tool_result(body, "refund_issue"))
        before_status(call_id)
        return tool_calls((PREFIX + "get_tool_call_status", {"call_id": call_id}))

    def final(body):
        order = json_block(last_tool_result(body, "order_lookup"))
        refund = json_block(last_tool_result(body, "get_tool_call_status"))
        return answer(
            f"Order {order['orderId']} was {order['status']}; refund {refund['refundId']} is {refund['status']}."
        )

    return [
        tool_calls((PREFIX + "order_lookup", {"orderId": "A-1001"}), reasoning="First, the order."),
        tool_calls((PREFIX + "refund_issue", {"orderId": "A-1001", "amount": 12.5, "reason": "late"})),
        ask_status,
        final,
    ]


@pytest.fixture
def support_visit(engine_api, bindings):
    client = engine_api()
    run, _, b = record_support_run(client)
    return client, run, b, ContextQueryConfig.from_context_query(b["contextQuery"])


def expected_seen(shop):
    assert [(e["path"], e["authorized"]) for e in shop.seen] == [("/orders/lookup", True), ("/refunds", True)]


@pytest.mark.browser
def test_hermes_through_its_mcp_servers_config_and_an_approval_on_the_page_in_chromium(
    support_visit, live_server, shop, browser, tmp_path
):
    _, run, b, config = support_visit
    approved = threading.Event()
    script = support_script(lambda call_id: approved.wait(90))
    with FakeLLMServer(script) as llm:
        job = {
            "server_name": "hermes_ops",
            "server_config": mcp_server.hermes_mcp_config(config),
            "llm_base_url": llm.base_url,
            "message": "Refund order A-1001: it arrived late.",
        }
        (tmp_path / "job.json").write_text(json.dumps(job))
        errors = tmp_path / "worker.err"
        with open(tmp_path / "job.json") as job_in, open(errors, "w") as err_out:
            worker = subprocess.Popen(
                [sys.executable, "-m", "tests.contextquery.hermes_mcp_worker"],
                cwd=REPO,
                stdin=job_in,
                stdout=subprocess.PIPE,
                stderr=err_out,
                text=True,
                env={k: v for k, v in os.environ.items() if k != "HERMES_HOME"},
            )
        deadline = time.monotonic() + 120
        while not ToolCall.objects.filter(status="PENDING_APPROVAL").exists():
            assert worker.poll() is None, errors.read_text()[-3000:]
            assert time.monotonic() < deadline, "the write never reached the gateway"
            time.sleep(0.2)
        call = ToolCall.objects.get(status="PENDING_APPROVAL")
        assert [e["path"] for e in shop.seen] == ["/orders/lookup"]  # the write waits

        context, page = new_page(browser)
        try:
            staff = log_in(page, base_url=live_server.url, path="/tools/")
            staff.user_permissions.add(Permission.objects.get(codename="approve_toolcall"))
            page.goto(f"{live_server.url}/tools/approvals/")
            section = page.locator(f"#pending-{call.pk}")
            expect(section).to_contain_text("refund_issue")
            expect(section.locator("pre.arguments")).to_contain_text('"amount": 12.5')
            shot(page, "tool-approvals-pending")
            page.click(f"#approve-{call.pk}")
            expect(page.locator("ul.messages")).to_contain_text("approved and executed: HTTP 200")
            expect(page.locator("#no-pending")).to_be_visible()
        finally:
            context.close()
            approved.set()
        out, _ = worker.communicate(timeout=120)
    assert worker.returncode == 0, errors.read_text()[-3000:]
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["tools"] == sorted(
        PREFIX + name
        for name in ("get_predecessor_paths", "get_node_output", "get_node_meta", *TOOLS, "get_tool_call_status")
    )
    assert outcome["final"] == "Order A-1001 was delivered; refund RF-7001 is refunded."
    expected_seen(shop)
    assert ToolCall.objects.get(pk=call.pk).decided_by_label == staff.username


def test_visit_agent_run_serves_the_business_tools_over_mcp_and_an_api_approval_releases_the_write(
    support_visit, live_server, shop, approver
):
    client, run, b, config = support_visit
    api_token = AuthToken.objects.create(user=approver)[1]

    def approve(call_id):
        response = requests.post(
            f"{live_server.url}/api/tool-calls/{call_id}/approve",
            headers={"Authorization": f"Token {api_token}"},
            timeout=30,
        )
        assert response.status_code == 200, response.text

    with FakeLLMServer(support_script(approve)) as llm:
        result = hermes_runner.visit_agent_run(
            user_message="Refund order A-1001: it arrived late.",
            context_query=b["contextQuery"],
            base_url=llm.base_url,
            api_key="sk-fake",
            model=llm.model,
            engine=client,
            mcp_server="hermes_ops",
        )
        offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert result.final_text == "Order A-1001 was delivered; refund RF-7001 is refunded."
    assert {PREFIX + "order_lookup", PREFIX + "refund_issue", PREFIX + "get_tool_call_status"} <= offered
    assert result.tool_calls == [PREFIX + "order_lookup", PREFIX + "refund_issue", PREFIX + "get_tool_call_status"]
    expected_seen(shop)
    visit = client.get_visit(run["runId"], b["visitUuid"])
    assert [log["type"] for log in visit["logs"]].count("TOOL_CALL") == 3
    assert all(SECRET not in json.dumps(log) for log in visit["logs"])


# --- toolsets by name only


@pytest.mark.parametrize(
    "toolsets, words",
    [
        (['[{"name": "order_lookup", "parameters": {}}]'], "looks like a JSON manifest"),
        ([{"name": "order_lookup"}], "Got a dict in the list"),
        ("web", "Got one str, not a list of names"),
        (["web", "mcp hermes"], "is not a toolset name"),
        (["web\n"], "is not a toolset name"),
    ],
    ids=["json text", "a dict", "one string", "a space", "a newline"],
)
def test_a_toolset_that_is_not_a_name_is_refused_with_a_clear_error(toolsets, words):
    with pytest.raises(ValueError) as refused:
        hermes_runner.visit_agent_run(
            user_message="Hi",
            context_query=None,
            base_url="http://127.0.0.1:9/v1",
            api_key="k",
            model="m",
            toolsets=toolsets,
        )
    assert words in str(refused.value) and "never a JSON tool manifest" in str(refused.value)


def test_a_toolset_hermes_does_not_know_is_refused_rather_than_dropped_silently():
    with pytest.raises(ValueError) as refused:
        hermes_runner.visit_agent_run(
            user_message="Hi",
            context_query=None,
            base_url="http://127.0.0.1:9/v1",
            api_key="k",
            model="m",
            toolsets=["todo", "order_tools"],
        )
    assert "Unknown hermes toolset(s) 'order_tools'" in str(refused.value)


def test_toolset_names_pass_as_they_are():
    assert hermes_runner.toolsets_check(("web", "mcp-hermes_ops", "workflow_context")) == [
        "web",
        "mcp-hermes_ops",
        "workflow_context",
    ]
