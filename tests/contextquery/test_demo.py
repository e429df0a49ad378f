"""``make demo`` (``python -m demo``) end to end: a real gunicorn,
a real hermes-agent against the fake LLM (SPEC §5, §4.4), and business tools
through the gateway with a write released by ops (SPEC §7)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_output() -> str:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-m", "demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def field(output: str, section: str, name: str) -> str:
    block = output.split(section, 1)[1]
    return re.search(rf"^  {re.escape(name)}:\s+(.*)$", block, re.M).group(1)


@pytest.mark.slow
def test_the_demo_completes_c_with_the_agents_result_so_its_own_reason_is_recorded(demo_output):
    node_c = "Node C ("
    assert field(demo_output, node_c, "its agentResult").startswith("failed=True, failureReason=rate_limit")
    assert field(demo_output, node_c, "recorded as").startswith("FAILED")
    assert field(demo_output, node_c, "reason").startswith("rate_limit: HTTP 429")
    assert field(demo_output, node_c, "category") == "rate_limit"
    assert field(demo_output, node_c, "pattern that agrees") == "Rate limit [rate-limit]"
    assert field(demo_output, node_c, "retryable").startswith("True")
    assert field(demo_output, node_c, "run action") == "abort"


@pytest.mark.slow
def test_the_demo_shows_b_reading_a_through_the_context_tools(demo_output):
    node_b = "Node B ("
    assert field(demo_output, node_b, "path") == "A -> B"
    assert field(demo_output, node_b, "reads") == "path 200, output 200"
    assert "Canberra" in field(demo_output, node_b, "answer")
    assert field(demo_output, node_b, "recorded as") == "SUCCESS"


@pytest.mark.slow
def test_the_demo_shows_s_reading_an_order_and_a_refund_released_by_ops(demo_output):
    node_s = "Node S ("
    assert field(demo_output, node_s, "tool calls") == (
        "mcp__hermes_ops__order_lookup, mcp__hermes_ops__refund_issue, mcp__hermes_ops__get_tool_call_status"
    )
    assert re.fullmatch(
        r"The call of refund_issue is queued for approval as call \d+; ask get_tool_call_status later\.",
        field(demo_output, node_s, "write queued"),
    )
    assert field(demo_output, node_s, "ops approved").endswith("-> SUCCEEDED (HTTP 200)")
    assert field(demo_output, node_s, "status seen").startswith("The tool refund_issue answered (call ")
    assert field(demo_output, node_s, "answer") == (
        "Order A-1001 was delivered (42.5 EUR); refund RF-7001 of 12.5 EUR is refunded."
    )
    assert field(demo_output, node_s, "service saw") == "POST /orders/lookup (bearer ok), POST /refunds (bearer ok)"
    assert field(demo_output, node_s, "recorded as") == "SUCCESS"
