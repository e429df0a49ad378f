"""The real hermes-agent end to end (SPEC §5, issue 5): the tools registered
in its registry, an ``AIAgent`` driven by a fake OpenAI-compatible LLM reading
a live Hermes Ops, two agents at once, a rate-limited LLM, and hermes reaching
the MCP server through its ``mcp_servers`` config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from contextquery.client import context_tools, hermes_runner, mcp_server
from contextquery.client.context_tools import ContextQueryConfig
from demo.fake_llm import FakeLLMServer, answer, http_error, json_block, last_tool_result, tool_calls
from tests.contextquery.agent_fixtures import REPO, http_server, record_a_then_b

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("hermes_process_state"),
]


def reading_script(prefix: str = "") -> list:
    """Paths, then A's output, then an answer quoting A's result (tool names with ``prefix``)."""

    def final(body):
        data = json_block(last_tool_result(body, "get_node_output"))
        return answer(f"According to node A: {data['data']['result']}" if data else "I could not read node A.")

    return [
        tool_calls(prefix + "get_predecessor_paths", reasoning="First I look at what ran before me."),
        tool_calls((prefix + "get_node_output", {"node_id": "A"})),
        final,
    ]


def run_b(client, b, llm, **extra):
    return hermes_runner.visit_agent_run(
        user_message="What did node A find?",
        context_query=b["contextQuery"],
        base_url=llm.base_url,
        api_key="sk-fake",
        model=llm.model,
        engine=client,
        **extra,
    )


def test_the_three_tools_are_registered_once_in_workflow_context_without_check_fn():
    from tools.registry import registry

    context_tools.register_hermes_tools()
    generation = registry._generation
    assert context_tools.register_hermes_tools() == list(context_tools.TOOL_NAMES)
    assert registry._generation == generation
    assert registry.get_tool_names_for_toolset("workflow_context") == sorted(context_tools.TOOL_NAMES)
    for name in context_tools.TOOL_NAMES:
        entry = registry.get_entry(name)
        assert entry.check_fn is None and entry.schema == context_tools.TOOL_SCHEMAS[name]


def test_a_handler_called_with_nothing_bound_returns_a_tool_error():
    from tools.registry import registry

    context_tools.register_hermes_tools()
    result = registry.dispatch("get_node_output", {"node_id": "A"}, task_id="t1")
    assert isinstance(result, str) and "not available" in result


def test_only_an_agent_built_with_the_toolset_sees_the_tools():
    from run_agent import AIAgent

    context_tools.register_hermes_tools()
    options = {
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": "sk-fake",
        "model": "fake-model",
        "quiet_mode": True,
        "skip_context_files": True,
        "skip_memory": True,
    }
    with_tools = AIAgent(enabled_toolsets=["workflow_context"], **options)
    without = AIAgent(enabled_toolsets=["todo"], **options)
    assert sorted(t["function"]["name"] for t in with_tools.tools) == sorted(context_tools.TOOL_NAMES)
    assert not {t["function"]["name"] for t in without.tools} & set(context_tools.TOOL_NAMES)


def test_the_agent_reads_node_a_and_quotes_its_result(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    with FakeLLMServer(reading_script()) as llm:
        result = run_b(client, b, llm)
        first_request = llm.requests[0]
    assert result.final_text == "According to node A: The capital of France is Paris."
    assert result.agent_result == {
        "failed": False,
        "failureReason": None,
        "error": None,
        "completed": True,
        "turnExitReason": "text_response(finish_reason=stop)",
    }
    assert result.tool_calls == ["get_predecessor_paths", "get_node_output"]
    offered = {t["function"]["name"] for t in first_request["tools"]}
    assert offered == set(context_tools.TOOL_NAMES)
    assert "get_predecessor_paths" in first_request["messages"][0]["content"]


def test_the_agent_run_is_recorded_as_visit_logs_and_reads(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    with FakeLLMServer(reading_script()) as llm:
        result = run_b(client, b, llm)
    visit = client.get_visit(run["runId"], b["visitUuid"])
    kinds = [(log["type"], log["message"]) for log in visit["logs"]]
    assert kinds == [
        ("THINKING", "First I look at what ran before me."),
        ("TOOL_CALL", "get_predecessor_paths"),
        ("TOOL_RESULT", "get_predecessor_paths"),
        ("TOOL_CALL", "get_node_output"),
        ("TOOL_RESULT", "get_node_output"),
    ]
    assert visit["logs"][3]["detail"] == {"node_id": "A"}
    assert "Paris" in visit["logs"][4]["detail"]
    assert result.logs_sent == 5
    assert [read["endpoint"] for read in visit["reads"]] == ["path", "output"]
    verdict = client.complete_visit(
        run["runId"], b["visitUuid"], status="SUCCESS", final_text=result.final_text, agent_result=result.agent_result
    )
    assert verdict["effectiveStatus"] == "SUCCESS"


def test_two_agents_in_two_threads_each_read_their_own_visit(engine_api):
    client = engine_api()
    runs = [
        record_a_then_b(client, output={"status": 200, "message": "ok", "data": {"result": city}})
        for city in ("Paris", "Berlin")
    ]
    results, errors = {}, []
    barrier = threading.Barrier(2)

    def work(index):
        try:
            with FakeLLMServer(reading_script(), delay=0.05) as llm:
                barrier.wait(timeout=30)
                results[index] = run_b(client, runs[index][2], llm)
        except Exception as exc:  # surfaced below with its thread's index
            errors.append((index, exc))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert results[0].final_text == "According to node A: Paris"
    assert results[1].final_text == "According to node A: Berlin"


def test_a_rate_limited_llm_ends_as_a_failed_visit(engine_api):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    rate_limited = http_error(429, "Rate limit reached for requests. Please try again later.", retry_after="0.05")
    with FakeLLMServer([rate_limited]) as llm:
        result = run_b(client, b, llm)
    assert result.final_text.startswith("API call failed after")
    assert result.agent_result["failed"] is True and result.agent_result["completed"] is False
    assert result.agent_result["failureReason"] == "rate_limit"
    verdict = client.complete_visit(
        run["runId"], b["visitUuid"], status="SUCCESS", final_text=result.final_text, agent_result=result.agent_result
    )
    assert (verdict["effectiveStatus"], verdict["category"], verdict["retryable"]) == ("FAILED", "rate_limit", True)


def test_without_a_context_query_the_agent_gets_no_workflow_tools(engine_api):
    with FakeLLMServer([answer("Nothing to look up.")]) as llm:
        result = hermes_runner.visit_agent_run(
            user_message="Hi", context_query=None, base_url=llm.base_url, api_key="sk-fake", model=llm.model
        )
        request = llm.requests[0]
    assert result.final_text == "Nothing to look up."
    assert not {t["function"]["name"] for t in request.get("tools") or []} & set(context_tools.TOOL_NAMES)


def test_run_conversation_results_map_to_agent_result():
    assert hermes_runner.agent_result_from(
        {"final_response": "x", "completed": False, "failed": True, "error": "HTTP 401", "failure_reason": "auth"}
    ) == {"failed": True, "failureReason": "auth", "error": "HTTP 401", "completed": False, "turnExitReason": None}
    assert (
        hermes_runner.agent_result_from({"completed": False, "failed": False, "turn_exit_reason": "budget_exhausted"})[
            "turnExitReason"
        ]
        == "budget_exhausted"
    )


def hermes_over_mcp(server_config: dict, llm: FakeLLMServer) -> dict:
    job = {
        "server_name": "hermes_context",
        "server_config": server_config,
        "llm_base_url": llm.base_url,
        "message": "What did node A find?",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.contextquery.hermes_mcp_worker"],
        cwd=REPO,
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=180,
        env={k: v for k, v in os.environ.items() if k != "HERMES_HOME"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_hermes_reaches_the_mcp_server_through_its_mcp_servers_config(engine_api, live_server, transport):
    client = engine_api()
    run, a, b = record_a_then_b(client)
    config = ContextQueryConfig.from_context_query(b["contextQuery"])
    prefix = "mcp__hermes_context__"
    with FakeLLMServer(reading_script(prefix)) as llm:
        if transport == "stdio":
            outcome = hermes_over_mcp(mcp_server.hermes_mcp_config(config), llm)
        else:
            with http_server(live_server.url) as url:
                outcome = hermes_over_mcp(mcp_server.hermes_mcp_config(config, url=url), llm)
    assert outcome["tools"] == sorted(prefix + name for name in context_tools.TOOL_NAMES)
    assert outcome["final"] == "According to node A: The capital of France is Paris."
    visit = client.get_visit(run["runId"], b["visitUuid"])
    # The MCP server asks once, when the session lists its tools, which business tools the visit has (SPEC §7.4).
    assert [read["endpoint"] for read in visit["reads"]] == ["tools/list", "path", "output"]
