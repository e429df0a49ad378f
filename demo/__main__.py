"""``make demo`` (``python -m demo``): the agent side end to end, on a throw-away Hermes Ops.

1. Starts Hermes Ops on SQLite in a temporary folder (migrate, then gunicorn
   on a free loopback port) and creates an engine client.
2. Records a run A → B → C with A's output, then runs node B as a real
   hermes-agent ``AIAgent`` against a local fake OpenAI-compatible LLM whose
   script calls ``get_predecessor_paths``, then ``get_node_output`` for A,
   then answers quoting A's result. B's logs and completion are recorded.
3. Runs node C against a scripted LLM that answers HTTP 429: hermes-agent
   gives up with its failure text and its structured ``agentResult``
   (failed, ``rate_limit``). The engine sends both, and the server records C
   as FAILED with the agent's own reason, and the pattern its reply matches
   with that pattern's category and retryable flag (SPEC §4.4 step 1).

Nothing outside the temporary folder is touched; every server listens on 127.0.0.1.
"""

import contextlib
import io
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
GRAPH = {
    "nodes": [
        {"id": "A", "type": "llm", "name": "Look up the capital"},
        {"id": "B", "type": "agent", "name": "Answer from A"},
        {"id": "C", "type": "agent", "name": "Polish the answer"},
    ],
    "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "C"}],
}
A_OUTPUT = {
    "status": 200,
    "message": "success",
    "data": {"result": "The capital of Australia is Canberra.", "source": "atlas"},
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def quiet():
    """hermes-agent prints its retry chatter even in quiet mode; keep the demo's output readable."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def say(text: str = ""):
    print(text, flush=True)


def start_hermes_ops(workdir: Path) -> tuple[subprocess.Popen, str, dict]:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        {
            "HERMES_OPS_VAR_DIR": str(workdir),
            "SQLITE_PATH": str(workdir / "db.sqlite3"),
            "SECRET_KEY": secrets.token_urlsafe(40),
            "HERMES_CONTEXT_QUERY_BASE_URL": base_url,
            "HERMES_HOME": str(workdir / "hermes-home"),
            "LOG_LEVEL": "WARNING",
        }
    )
    manage = [sys.executable, str(REPO / "manage.py")]
    subprocess.run(manage + ["migrate", "--no-input", "-v", "0"], cwd=REPO, env=env, check=True)
    gunicorn = [
        sys.executable,
        "-m",
        "gunicorn",
        "project.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "2",
        "--threads",
        "4",
        "--log-level",
        "warning",
        "--no-control-socket",
    ]
    server = subprocess.Popen(gunicorn, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("Hermes Ops did not start (gunicorn exited).")
        try:
            if requests.get(base_url + "/healthz", timeout=1).status_code == 200:
                return server, base_url, env
        except requests.RequestException:
            pass
        time.sleep(0.2)
    server.terminate()
    raise SystemExit("Hermes Ops did not answer /healthz within 60 seconds.")


def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="hermes-ops-demo-"))
    os.environ["HERMES_HOME"] = str(workdir / "hermes-home")
    (workdir / "hermes-home").mkdir()
    sys.path.insert(0, str(REPO))
    # Imported after HERMES_HOME is set: hermes-agent reads it at import time.
    from contextquery.client.engine import EngineClient
    from contextquery.client.hermes_runner import visit_agent_run
    from demo.fake_llm import FakeLLMServer, answer, http_error, json_block, last_tool_result, tool_calls

    server, base_url, env = start_hermes_ops(workdir)
    try:
        say(f"Hermes Ops is up at {base_url} (SQLite in {workdir})")
        created = subprocess.run(
            [sys.executable, str(REPO / "manage.py"), "create_engine_client", "demo-engine"],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        client = EngineClient(base_url, created.stdout.strip().splitlines()[-1])
        say("Engine client 'demo-engine' created.")

        run = client.create_run(graph=GRAPH, workflow_name="Capital question", mode="DAG")
        run_id = run["runId"]
        a = client.register_visit(run_id, node_id="A", from_visit_uuids=[])
        client.complete_visit(run_id, a["visitUuid"], status="SUCCESS", output=A_OUTPUT)
        say(f"Run {run_id}: node A recorded with output {A_OUTPUT['data']}")

        # --- Node B: a real AIAgent reads A through the context tools.
        b = client.register_visit(
            run_id, node_id="B", from_visit_uuid=a["visitUuid"], input={"prompt": "What did node A find? Quote it."}
        )

        def quote_a(body):
            data = json_block(last_tool_result(body, "get_node_output"))
            return answer(f'Node A found: "{data["data"]["result"]}" (source: {data["data"]["source"]}).')

        script = [
            tool_calls("get_predecessor_paths", reasoning="I should see which nodes ran before me."),
            tool_calls(("get_node_output", {"node_id": "A"}), reasoning="A is my predecessor; read it."),
            quote_a,
        ]
        with FakeLLMServer(script) as llm, quiet():
            result_b = visit_agent_run(
                user_message="What did node A find? Quote it.",
                context_query=b["contextQuery"],
                base_url=llm.base_url,
                api_key="sk-demo",
                model=llm.model,
                engine=client,
            )
        verdict_b = client.complete_visit(
            run_id,
            b["visitUuid"],
            status="SUCCESS",
            final_text=result_b.final_text,
            output={"status": 200, "message": "success", "data": {"answer": result_b.final_text}},
            agent_result=result_b.agent_result,
        )
        visit_b = client.get_visit(run_id, b["visitUuid"])
        say()
        say("Node B (hermes-agent AIAgent against a fake LLM):")
        for path in visit_b["paths"]["paths"]:
            say(f"  path:        {' -> '.join(path['sequence'])}")
        say(f"  tool calls:  {', '.join(result_b.tool_calls)}")
        say(f"  logs:        {', '.join(log['type'] for log in visit_b['logs'])}")
        say(
            f"  reads:       {', '.join(read['endpoint'] + ' ' + str(read['statusCode']) for read in visit_b['reads'])}"
        )
        say(f"  answer:      {result_b.final_text}")
        say(f"  recorded as: {verdict_b['effectiveStatus']}")

        # --- Node C: the LLM provider answers 429 until hermes-agent gives up.
        c = client.register_visit(run_id, node_id="C", from_visit_uuid=b["visitUuid"])
        rate_limited = http_error(429, "Rate limit reached for requests. Please retry later.", retry_after="0.2")
        with FakeLLMServer([rate_limited]) as llm, quiet():
            result_c = visit_agent_run(
                user_message="Polish B's answer.",
                context_query=c["contextQuery"],
                base_url=llm.base_url,
                api_key="sk-demo",
                model=llm.model,
                engine=client,
            )
            llm_calls = len(llm.requests)
        # The engine reports what the bridge saw: a "successful" text plus
        # hermes' structured signals. The agent's own failure decides (SPEC
        # §4.4 step 1); the pattern its reply matches is kept beside it.
        agent_c = result_c.agent_result
        verdict_c = client.complete_visit(
            run_id, c["visitUuid"], status="SUCCESS", final_text=result_c.final_text, agent_result=agent_c
        )
        pattern = verdict_c.get("matchedPattern") or {}
        say()
        say(f"Node C (the LLM answered HTTP 429 to all {llm_calls} attempts of hermes-agent):")
        say(f"  hermes-agent replied: {result_c.final_text.splitlines()[0][:160]}")
        say(
            f"  its agentResult:      failed={agent_c.get('failed')}, failureReason={agent_c.get('failureReason')}, "
            f"completed={agent_c.get('completed')}"
        )
        say("  sent to /complete:    status SUCCESS, finalText and agentResult")
        say(f"  recorded as:          {verdict_c['effectiveStatus']} (the agent's own failure decides)")
        say(f"  reason:               {verdict_c['failureReason'][:160]}")
        say(f"  category:             {verdict_c['category']}")
        say(f"  pattern that agrees:  {pattern.get('name') or '(none)'} [{pattern.get('key') or '-'}]")
        say(
            f"  retryable:            {verdict_c['retryable']} (from the pattern)"
            if pattern
            else f"  retryable:            {verdict_c['retryable']} (from the category)"
        )
        say(f"  run action:           {verdict_c['runAction']}")
        finished = client.finish_run(run_id, status="FAILED")
        say()
        say(f"Run {run_id} finished as {finished['status']}.")
        return 0 if (verdict_b["effectiveStatus"], verdict_c["effectiveStatus"]) == ("SUCCESS", "FAILED") else 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
