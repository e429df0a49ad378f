"""The three context tools against a live Hermes Ops (SPEC §5): answers,
failures as plain sentences, the binding, schemas and the prompt section."""

from __future__ import annotations

import inspect
import json
import logging
import threading
import typing

import pytest

from contextquery import tokens
from contextquery.client import context_tools
from contextquery.client.context_tools import (
    ContextQueryConfig,
    bind,
    get_node_meta,
    get_node_output,
    get_predecessor_paths,
)
from tests.contextquery.agent_fixtures import CHAIN, OUTPUT_A

pytestmark = pytest.mark.django_db(transaction=True)


def split_answer(text: str) -> tuple[str, dict]:
    """A success answer: one summary sentence, a blank line, a ```json block."""
    summary, block = text.split("\n\n", 1)
    assert "\n" not in summary and summary.endswith(".")
    assert block.startswith("```json\n") and block.endswith("\n```")
    return summary, json.loads(block[len("```json\n") : -len("\n```")])


def assert_failure_sentence(text: str):
    assert "```" not in text and "{" not in text and "\n" not in text
    assert text.endswith(".")


def test_get_predecessor_paths_lists_the_fly_back_as_one_path_with_a_backtrack(live_flyback):
    rec, config = live_flyback
    with bind(config):
        summary, data = split_answer(get_predecessor_paths())
    assert [p["sequence"] for p in data["paths"]] == [["A", "B", "C", "G", "C"]]
    assert data["paths"][0]["hasBacktrack"] is True
    assert data["backtrackEdgeKeys"] == ["G->C"]
    assert "4 earlier visits" in summary and "A, B, C, G" in summary


def test_get_node_output_returns_the_envelope_of_the_node(live_chain):
    rec, config = live_chain()
    with bind(config):
        summary, data = split_answer(get_node_output("A"))
    assert data["data"] == OUTPUT_A["data"]
    assert (data["nodeId"], data["iterSeq"], data["status"]) == ("A", 1, 200)
    assert data["visitUuid"] == str(rec.by["A"].visit_uuid)
    assert summary == "The output of node A (visit 1, status 200)."


def test_get_node_output_with_a_field_returns_only_that_field(live_chain):
    rec, config = live_chain()
    with bind(config):
        summary, data = split_answer(get_node_output("A", field="result"))
    assert data["data"] == "The capital of France is Paris."
    assert data["requestedField"] == "result"
    assert summary.startswith("Field result of the output of node A")


def test_get_node_output_with_iter_seq_reads_that_visit(live_flyback):
    rec, config = live_flyback
    with bind(config):
        _, data = split_answer(get_node_output("C", iter_seq=1))
    assert data["visitUuid"] == str(rec.by["C1"].visit_uuid)
    assert data["data"] == {"draft": 1}


def test_get_node_meta_returns_thinking_tool_calls_and_todo_list(live_flyback):
    rec, config = live_flyback
    with bind(config):
        summary, data = split_answer(get_node_meta(node_id="B"))
    assert data["thinking"] == "第一步\n第二步"
    assert data["toolCalls"][:2] == [{"tool": "search", "args": "{q:1}"}, {"tool": "search", "result": "结果摘要"}]
    assert data["todoList"][-1] == {"text": "任务B", "status": "pending"}
    assert summary.startswith("Thinking, tool calls, todo list and logs of node B")


def test_get_node_meta_by_visit_uuid_and_kind_reads_only_that_kind(live_flyback):
    rec, config = live_flyback
    with bind(config):
        _, data = split_answer(get_node_meta(visit_uuid=str(rec.by["B"].visit_uuid), kind="thinking"))
    assert data["thinking"] == "第一步\n第二步"
    assert "toolCalls" not in data and "logs" not in data


def test_a_node_never_visited_gives_one_sentence_without_json(live_chain):
    rec, config = live_chain()
    with bind(config):
        answer = get_node_output("G")
    assert_failure_sentence(answer)
    assert "node G" in answer


def test_a_missing_field_names_the_available_keys(live_chain):
    rec, config = live_chain()
    with bind(config):
        answer = get_node_output("A", field="nope")
    assert_failure_sentence(answer)
    assert "result" in answer and "count" in answer


def test_a_revoked_token_gives_a_sentence_about_the_token(live_chain):
    rec, config = live_chain()
    tokens.tokens_revoke_for_visit(visit=rec.by["B"])
    with bind(config):
        answer = get_predecessor_paths()
    assert_failure_sentence(answer)
    assert "token" in answer and config.token not in answer


def test_a_spent_server_budget_gives_a_sentence_about_the_budget(live_chain, settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "MAX_QUERIES_PER_VISIT": 1}
    rec, config = live_chain()
    with bind(config):
        get_predecessor_paths()
        answer = get_predecessor_paths()
    assert_failure_sentence(answer)
    assert "budget" in answer


def test_a_tool_called_with_nothing_bound_returns_an_error_sentence():
    answer = get_predecessor_paths()
    assert_failure_sentence(answer)
    assert "not available" in answer


def test_invalid_arguments_are_refused_before_any_request():
    config = ContextQueryConfig("http://127.0.0.1:9", "a" * 48, "r1", "v1")
    with bind(config):
        assert "iter_seq" in get_node_output("A", iter_seq=0)
        assert "kind" in get_node_meta(node_id="A", kind="EVERYTHING")
        assert "node_id or visit_uuid" in get_node_meta()
        assert "node_id" in get_node_output("")


def test_a_base_url_off_the_loopback_is_refused():
    config = ContextQueryConfig("http://hermes-ops.invalid:8000", "a" * 48, "r1", "v1")
    with bind(config):
        answer = get_predecessor_paths()
    assert_failure_sentence(answer)
    assert "loopback" in answer


@pytest.mark.parametrize(
    "url, loopback",
    [
        ("http://127.0.0.1:8000", True),
        ("http://127.8.9.10", True),
        ("https://localhost:1/x", True),
        ("http://[::1]:8000", True),
        ("http://10.0.0.5:8000", False),
        ("http://example.com", False),
        ("ftp://127.0.0.1", False),
        ("http://user:pw@127.0.0.1", False),
        ("http://127.0.0.1.nip.io", False),
    ],
)
def test_only_loopback_urls_are_accepted(url, loopback):
    assert context_tools.is_loopback_url(url) is loopback


def test_bind_resets_the_context_after_the_block():
    config = ContextQueryConfig("http://127.0.0.1:9", "a" * 48, "r1", "v1")
    with bind(config):
        assert context_tools.current_config() is config
    assert context_tools.current_config() is None


def test_a_binding_is_invisible_to_a_thread_started_without_its_context():
    config = ContextQueryConfig("http://127.0.0.1:9", "a" * 48, "r1", "v1")
    seen = []
    with bind(config):
        thread = threading.Thread(target=lambda: seen.append(context_tools.current_config()))
        thread.start()
        thread.join()
    assert seen == [None]


def test_the_token_appears_in_no_answer_no_log_line_and_no_repr(live_chain, caplog):
    rec, config = live_chain()
    caplog.set_level(logging.DEBUG, logger="hermes_ops")
    with bind(config):
        answers = [get_predecessor_paths(), get_node_output("A"), get_node_output("G"), get_node_meta(node_id="A")]
    tokens.tokens_revoke_for_visit(visit=rec.by["B"])
    with bind(config):
        answers.append(get_node_output("A"))
    assert all(config.token not in answer for answer in answers)
    assert config.token not in caplog.text
    assert config.token not in repr(config)


def test_the_config_is_built_from_the_recording_api_context_query_object():
    config = ContextQueryConfig.from_context_query(
        {
            "base_url": "http://127.0.0.1:8000",
            "token": "f" * 48,
            "run_id": "r1",
            "visit_uuid": "v1",
            "expires_at": "2026-01-01T00:00:00Z",
        }
    )
    assert (config.base_url, config.run_id, config.visit_uuid) == ("http://127.0.0.1:8000", "r1", "v1")
    with pytest.raises(ValueError, match="token"):
        ContextQueryConfig.from_context_query({"base_url": "http://127.0.0.1", "run_id": "r", "visit_uuid": "v"})


# --------------------------------------------------------------------------- schemas and prompt

JSON_TYPES = {str: "string", int: "integer"}


@pytest.mark.parametrize("name", context_tools.TOOL_NAMES)
def test_each_schema_matches_its_function_signature(name):
    fn = getattr(context_tools, name)
    schema = context_tools.TOOL_SCHEMAS[name]
    params = inspect.signature(fn).parameters
    hints = typing.get_type_hints(fn)
    assert schema["name"] == fn.__name__ == name
    assert list(schema["parameters"]["properties"]) == list(params)
    assert schema["parameters"]["required"] == [
        p for p, spec in params.items() if spec.default is inspect.Parameter.empty
    ]
    for param, prop in schema["parameters"]["properties"].items():
        base = [t for t in typing.get_args(hints[param]) if t is not type(None)] or [hints[param]]
        assert prop["type"] == JSON_TYPES[base[0]]
        assert prop["description"]


def test_the_schemas_are_the_three_exact_tool_names_in_openai_function_form():
    tools = context_tools.openai_tools()
    assert [t["function"]["name"] for t in tools] == ["get_predecessor_paths", "get_node_output", "get_node_meta"]
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in tools)
    assert context_tools.TOOL_SCHEMAS["get_node_meta"]["parameters"]["properties"]["kind"]["enum"] == list(
        context_tools.META_KINDS
    )


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_prompt_section_names_the_tools_as_the_agent_sees_them(language):
    plain = context_tools.system_prompt_section(language)
    over_mcp = context_tools.system_prompt_section(language, mcp_server="hermes-context")
    for name in context_tools.TOOL_NAMES:
        assert f"`{name}(" in plain
        assert f"`mcp__hermes_context__{name}(" in over_mcp
    assert ("truncated" in plain) and ("few times" in plain if language == "en" else "最多调用几次" in plain)


def test_a_truncated_output_says_so_in_its_one_sentence(make_run, issue, live_server):
    rec = make_run(CHAIN, "DAG")
    a = rec.visit("A", output={"status": 200, "message": "ok", "data": {"text": "x" * 20000, "note": "short"}})
    b = rec.visit("B", a, status="RUNNING")
    config = ContextQueryConfig(live_server.url, issue(b), rec.run.run_id, str(b.visit_uuid))
    with bind(config):
        summary, data = split_answer(get_node_output("A"))
    assert data["truncated"] is True and data["originalBytes"] > 20000
    assert "truncated from" in summary and "narrower" in summary
