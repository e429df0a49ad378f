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
4. The tool gateway (SPEC §7): ops declare two business tools of a fake shop
   (``demo/business.py``, on loopback, its bearer secret known only to the
   server) through the API — ``order_lookup`` (a read) and ``refund_issue``
   (a write, so it needs approval). Node S of a support run is given both; its
   agent reaches them over MCP (the runner's ``mcp_server``), looks the order
   up, asks for a refund, which waits for a person; ops approve it through
   ``POST /api/tool-calls/{id}/approve``; the agent's status check sees the
   refund and its reply quotes both answers.

Nothing outside the temporary folder is touched; every server listens on 127.0.0.1.
"""

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
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


SUPPORT_GRAPH = {"nodes": [{"id": "S", "type": "agent", "name": "Customer support"}], "edges": []}
MCP_SERVER = "hermes_ops"
PREFIX = f"mcp__{MCP_SERVER}__"


def start_hermes_ops(workdir: Path, extra_env: dict) -> tuple[subprocess.Popen, str, dict]:
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
            **extra_env,
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
    from demo.business import LOOKUP_SCHEMA, REFUND_SCHEMA, BusinessService
    from demo.fake_llm import FakeLLMServer, answer, http_error, json_block, last_tool_result, tool_calls

    shop_secret = secrets.token_urlsafe(24)
    shop = BusinessService(shop_secret).__enter__()
    gateway_env = {"HERMES_TOOL_ALLOWED_HOSTS": f"127.0.0.1:{shop.port}", "HERMES_TOOL_SECRET_SHOP": shop_secret}
    server, base_url, env = start_hermes_ops(workdir, gateway_env)
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

        # --- Node S: business tools through the gateway, a write approved by ops.
        verdict_s = support_node(
            base_url=base_url,
            env=env,
            client=client,
            shop=shop,
            schemas=(LOOKUP_SCHEMA, REFUND_SCHEMA),
            llm=(FakeLLMServer, answer, json_block, last_tool_result, tool_calls),
            run_agent=visit_agent_run,
        )
        outcome = (verdict_b["effectiveStatus"], verdict_c["effectiveStatus"], verdict_s["effectiveStatus"])
        return 0 if outcome == ("SUCCESS", "FAILED", "SUCCESS") else 1
    finally:
        shop.__exit__(None, None, None)
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def ops_client(env: dict, base_url: str) -> requests.Session:
    """An API session of a superuser ``demo-ops`` (it may approve tool calls)."""
    manage = [sys.executable, str(REPO / "manage.py")]
    password = secrets.token_urlsafe(16)
    subprocess.run(
        manage + ["createsuperuser", "--no-input", "--username", "demo-ops", "--email", "ops@example.com"],
        cwd=REPO,
        env={**env, "DJANGO_SUPERUSER_PASSWORD": password},
        check=True,
        capture_output=True,
    )
    created = subprocess.run(
        manage + ["create_api_token", "demo-ops"], cwd=REPO, env=env, check=True, capture_output=True, text=True
    )
    session = requests.Session()
    session.trust_env = False
    session.headers["Authorization"] = "Token " + created.stdout.strip().splitlines()[-1]
    return session


def api(session: requests.Session, method: str, url: str, **kwargs):
    response = session.request(method, url, timeout=30, **kwargs)
    body = response.json()
    if response.status_code >= 400:
        raise SystemExit(f"{method} {url} answered {response.status_code}: {body.get('message')}")
    return body["data"]


class Approver(threading.Thread):
    """Ops at the approvals queue: approves the first call that waits, through the API."""

    def __init__(self, session: requests.Session, base_url: str):
        super().__init__(daemon=True)
        self.session, self.base_url = session, base_url
        self.approved = threading.Event()
        self.call: dict | None = None

    def run(self):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            waiting = api(self.session, "GET", f"{self.base_url}/api/tool-calls", params={"status": "PENDING_APPROVAL"})
            if waiting["results"]:
                call_id = waiting["results"][0]["id"]
                self.call = api(self.session, "POST", f"{self.base_url}/api/tool-calls/{call_id}/approve")
                self.approved.set()
                return
            time.sleep(0.2)


def support_node(*, base_url, env, client, shop, schemas, llm, run_agent) -> dict:
    """Node S: ops declare the shop's tools, the agent reads an order and asks for a
    refund, ops approve it, the agent reads the outcome. Prints what happened."""
    fake_llm_server, answer, json_block, last_tool_result, tool_calls = llm
    lookup_schema, refund_schema = schemas
    ops = ops_client(env, base_url)
    for name, kind, schema, path, description in (
        ("order_lookup", "read", lookup_schema, "/orders/lookup", "Look an order up: status, total, items."),
        ("refund_issue", "write", refund_schema, "/refunds", "Refund (part of) an order."),
    ):
        body = {
            "name": name,
            "description": description,
            "kind": kind,
            "inputSchema": schema,
            "endpoint": shop.url + path,
            "secretRef": "SHOP",
        }
        api(ops, "POST", f"{base_url}/api/tool-bindings", json=body)
    bindings = api(ops, "GET", f"{base_url}/api/tool-bindings")["results"]

    run = client.create_run(graph=SUPPORT_GRAPH, workflow_name="Order support", mode="DAG")
    s = client.register_visit(
        run["runId"],
        node_id="S",
        from_visit_uuids=[],
        input={"prompt": "Order A-1001 arrived late; refund 12.50 EUR."},
        tools=["order_lookup", "refund_issue"],
    )
    approver = Approver(ops, base_url)
    answers = {}

    def ask_status(body):
        answers["queued"] = last_tool_result(body, "refund_issue")
        call_id = int(re.search(r"queued for approval as call (\d+)", answers["queued"]).group(1))
        approver.approved.wait(120)  # the agent comes back once ops have decided
        return tool_calls((PREFIX + "get_tool_call_status", {"call_id": call_id}), reasoning="Has ops decided?")

    def final(body):
        answers["status"] = last_tool_result(body, "get_tool_call_status")
        order = json_block(last_tool_result(body, "order_lookup"))
        refund = json_block(answers["status"])
        return answer(
            f"Order {order['orderId']} was {order['status']} ({order['total']} {order['currency']}); "
            f"refund {refund['refundId']} of {refund['amount']} {refund['currency']} is {refund['status']}."
        )

    script = [
        tool_calls((PREFIX + "order_lookup", {"orderId": "A-1001"}), reasoning="Look the order up first."),
        tool_calls(
            (PREFIX + "refund_issue", {"orderId": "A-1001", "amount": 12.5, "reason": "late delivery"}),
            reasoning="It was delivered; refund the delivery fee.",
        ),
        ask_status,
        final,
    ]
    approver.start()
    with fake_llm_server(script) as fake, quiet():
        result = run_agent(
            user_message="Order A-1001 arrived late; refund 12.50 EUR.",
            context_query=s["contextQuery"],
            base_url=fake.base_url,
            api_key="sk-demo",
            model=fake.model,
            engine=client,
            mcp_server=MCP_SERVER,
        )
    approver.join(timeout=10)
    verdict = client.complete_visit(
        run["runId"],
        s["visitUuid"],
        status="SUCCESS",
        final_text=result.final_text,
        output={"status": 200, "message": "success", "data": {"answer": result.final_text}},
        agent_result=result.agent_result,
    )
    finished = client.finish_run(run["runId"], status="SUCCESS")
    decided = approver.call or {}
    say()
    say("Node S (hermes-agent reaching two business tools over MCP; the write needs approval):")
    say(
        "  tools given:   "
        + ", ".join(f"{b['name']} ({b['kind']}, approval {b['approval']})" for b in bindings)
        + " — secret SHOP held by the server"
    )
    say(f"  tool calls:    {', '.join(result.tool_calls)}")
    say(f"  write queued:  {unwrap(answers.get('queued', ''))}")
    say(
        f"  ops approved:  call {decided.get('id')} through POST /api/tool-calls/{decided.get('id')}/approve "
        f"-> {decided.get('status')} (HTTP {decided.get('httpStatus')})"
    )
    say(f"  status seen:   {unwrap(answers.get('status', '')).splitlines()[0]}")
    say(f"  answer:        {result.final_text}")
    say(
        "  service saw:   "
        + ", ".join(f"POST {e['path']} (bearer {'ok' if e['authorized'] else 'WRONG'})" for e in shop.seen)
    )
    say(f"  recorded as:   {verdict['effectiveStatus']}")
    say()
    say(f"Run {run['runId']} finished as {finished['status']}.")
    return verdict


def unwrap(text: str) -> str:
    """A tool result as the MCP server wrote it (hermes wraps MCP results as untrusted data)."""
    wrapped = text.find('{"result":')
    if wrapped >= 0:
        try:
            inner, _ = json.JSONDecoder().raw_decode(text[wrapped:])
            if isinstance(inner.get("result"), str):
                return inner["result"]
        except ValueError:
            pass
    return text


if __name__ == "__main__":
    sys.exit(main())
