"""The agent side of the tool gateway against a local scripted server (SPEC §7.4,
with the safety rules of §5): the request it sends, the sentences it answers,
and every odd answer turned into one plain sentence without the token."""

from __future__ import annotations

import json

import pytest

from contextquery.client import business_tools
from contextquery.client.business_tools import call_business_tool, describe_call, get_tool_call_status, list_tools
from contextquery.client.context_tools import ContextQueryConfig
from tests.contextquery.agent_fixtures import wire_envelope

TOKEN = "fedcba9876543210" * 3
CALL = {
    "callId": 7,
    "tool": "order_lookup",
    "status": "SUCCEEDED",
    "result": {"status": "delivered"},
    "httpStatus": 200,
}


@pytest.fixture(autouse=True)
def quick_retry(monkeypatch):
    monkeypatch.setattr(business_tools, "RETRY_BACKOFF_SECONDS", 0.01)


def config_for(server) -> ContextQueryConfig:
    return ContextQueryConfig(server.url, TOKEN, "r1", "v2")


def test_a_call_sends_the_token_the_run_the_arguments_and_a_fresh_idempotency_key(scripted_server):
    server = scripted_server({"status": 200, "body": wire_envelope(CALL)})
    answer = call_business_tool(config_for(server), "order_lookup", {"orderId": "A-1001"})
    assert answer == 'The tool order_lookup answered (call 7, HTTP 200).\n\n```json\n{\n  "status": "delivered"\n}\n```'
    path, headers, body = server.seen[0]
    sent = json.loads(body)
    assert path == "/internal/tools/call" and headers["X-Context-Token"] == TOKEN
    assert {k: sent[k] for k in ("runId", "name", "arguments")} == {
        "runId": "r1",
        "name": "order_lookup",
        "arguments": {"orderId": "A-1001"},
    }
    assert len(sent["idempotencyKey"]) == 32


def test_a_retry_after_a_5xx_repeats_the_same_idempotency_key(scripted_server):
    server = scripted_server({"status": 502, "body": "bad gateway"}, {"status": 200, "body": wire_envelope(CALL)})
    assert call_business_tool(config_for(server), "order_lookup", {}).startswith("The tool order_lookup answered")
    keys = [json.loads(body)["idempotencyKey"] for _, _, body in server.seen]
    assert len(keys) == 2 and keys[0] == keys[1]


@pytest.mark.parametrize(
    "data, sentence",
    [
        (
            {"callId": 3, "tool": "refund_issue", "status": "PENDING_APPROVAL"},
            "The call of refund_issue is queued for approval as call 3; ask get_tool_call_status later.",
        ),
        (
            {"callId": 3, "tool": "refund_issue", "status": "REJECTED", "note": "Too much."},
            "A person rejected call 3 of refund_issue, so it was never executed; their note: Too much.",
        ),
        (
            {"callId": 3, "tool": "refund_issue", "status": "EXPIRED"},
            "Call 3 of refund_issue expired before anyone approved it; it was never executed.",
        ),
        (
            {
                "callId": 3,
                "tool": "refund_issue",
                "status": "FAILED",
                "error": "The business service answered HTTP 500.",
            },
            "The tool refund_issue failed (call 3): The business service answered HTTP 500.",
        ),
        (
            {"callId": 3, "tool": "refund_issue", "status": "EXECUTING"},
            "Call 3 of refund_issue is being executed now; ask get_tool_call_status again in a moment.",
        ),
    ],
    ids=["pending", "rejected", "expired", "failed", "executing"],
)
def test_each_status_is_one_sentence(data, sentence):
    assert describe_call(data) == sentence


@pytest.mark.parametrize(
    "step, words",
    [
        (
            {"status": 404, "body": wire_envelope(None, 404, "The tool 'x' is not available to this node.")},
            "not available",
        ),
        ({"status": 422, "body": wire_envelope(None, 422, "arguments: 'orderId' is a required property")}, "orderId"),
        ({"status": 429, "body": wire_envelope(None, 429, "spent")}, "budget of this visit is spent"),
        ({"status": 401, "body": wire_envelope(None, 401, "expired")}, "token was refused"),
        ({"status": 302, "headers": {"Location": "http://127.0.0.1:1/x"}}, "discarded"),
        ({"status": 200, "body": wire_envelope(CALL), "headers": {"Set-Cookie": "a=b"}}, "discarded"),
        ({"status": 200, "body": b"x" * (200 * 1024)}, "larger than 128 KiB"),
        ({"status": 200, "body": "not json"}, "not the expected JSON"),
    ],
    ids=["404", "422", "429", "401", "redirect", "cookie", "too big", "not json"],
)
def test_an_odd_answer_is_one_sentence_without_the_token(scripted_server, step, words):
    server = scripted_server(step)
    answer = call_business_tool(config_for(server), "x", {})
    assert words in answer and "```" not in answer and TOKEN not in answer


def test_a_status_answered_too_soon_says_to_wait(scripted_server):
    server = scripted_server(
        {"status": 429, "body": wire_envelope(None, 429, "too soon"), "headers": {"Retry-After": "1"}}
    )
    assert get_tool_call_status(config_for(server), 4) == (
        "Asked about call 4 too soon; wait a moment before asking get_tool_call_status again."
    )


def test_a_call_id_that_is_not_a_number_is_refused_without_a_request(scripted_server):
    server = scripted_server({"status": 200, "body": wire_envelope(CALL)})
    assert "call_id must be" in get_tool_call_status(config_for(server), "seven")
    assert get_tool_call_status(config_for(server), "7").startswith("The tool order_lookup answered")
    assert server.hits == 1


def test_a_base_url_off_the_loopback_is_refused_without_a_request():
    config = ContextQueryConfig("http://10.0.0.8:8000", TOKEN, "r1", "v2")
    assert "loopback only" in call_business_tool(config, "order_lookup", {})


def test_the_listing_keeps_only_well_formed_tools(scripted_server):
    tools = [
        {"name": "order_lookup", "description": "Look up.", "inputSchema": {"type": "object"}, "kind": "read"},
        {"name": "Bad Name", "inputSchema": {"type": "object"}},
        {"name": "no_schema", "inputSchema": "nope"},
        "junk",
    ]
    server = scripted_server({"status": 200, "body": wire_envelope({"tools": tools, "extra": 1})})
    listed = list_tools(config_for(server))
    assert [t["name"] for t in listed] == ["order_lookup"]
    assert set(listed[0]) == {"name", "description", "inputSchema", "kind", "approval"}


def test_a_write_that_needs_approval_says_so_in_its_description():
    text = business_tools.tool_description({"name": "refund_issue", "description": "Refund.", "approval": "required"})
    assert text.startswith("Refund. A person must approve each call first") and "get_tool_call_status" in text
