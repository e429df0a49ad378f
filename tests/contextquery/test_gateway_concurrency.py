"""Two approvals at once execute a call once (SPEC §7.1, §7.3), on SQLite and on
PostgreSQL: a real gunicorn (2 workers × 4 threads), approvals fired from
threads at the same moment, each call claimed by one conditional UPDATE. The
business service sees each approved call exactly once."""

from __future__ import annotations

import threading

import pytest

from demo.business import LOOKUP_SCHEMA, REFUND_SCHEMA, BusinessService
from tests.contextquery.gateway_fixtures import SECRET, SECRET_REF
from tests.hardening.conftest import GRAPH, Api
from tests.support import envelope

pytestmark = pytest.mark.slow

CALLS = 6
APPROVERS = 4


def approve_all_at_once(server, token: str, call_id: int) -> list[int]:
    """``APPROVERS`` threads POST approve for ``call_id`` at the same moment; their statuses."""
    barrier = threading.Barrier(APPROVERS)
    statuses: list[int] = []
    lock = threading.Lock()

    def approve():
        api = Api(server, token)
        barrier.wait(timeout=30)
        status = api.post(f"/api/tool-calls/{call_id}/approve").status_code
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=approve) for _ in range(APPROVERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return sorted(statuses)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_approvals_racing_from_threads_execute_each_call_once(database, gunicorn, backend):
    db = database(backend)
    creds = db.seed()
    with BusinessService(SECRET) as shop:
        env = {"HERMES_TOOL_ALLOWED_HOSTS": f"127.0.0.1:{shop.port}", "HERMES_TOOL_SECRET_" + SECRET_REF: SECRET}
        server = gunicorn(db, workers=2, env=env)
        ops, engine = Api(server, creds["superToken"]), Api(server, creds["engineToken"])
        for name, kind, schema, path in (
            ("order_lookup", "read", LOOKUP_SCHEMA, "/orders/lookup"),
            ("refund_issue", "write", REFUND_SCHEMA, "/refunds"),
        ):
            body = {"name": name, "kind": kind, "inputSchema": schema, "endpoint": shop.url + path, "secretRef": "SHOP"}
            envelope(ops.post("/api/tool-bindings", body), 201)
        run = envelope(engine.post("/api/runs", {"graph": GRAPH, "mode": "DAG"}), 201)
        b = envelope(
            engine.post(
                f"/api/runs/{run['runId']}/visits",
                {"nodeId": "B", "fromVisitUuids": [], "tools": ["order_lookup", "refund_issue"]},
            ),
            201,
        )
        agent = Api(server)
        call_ids = []
        for i in range(CALLS):
            answer = agent.post(
                "/internal/tools/call",
                {"runId": run["runId"], "name": "refund_issue", "arguments": {"orderId": "A-1001", "amount": i + 1}},
                headers={"X-Context-Token": b["contextQuery"]["token"]},
            )
            data = envelope(answer, 200)
            assert data["status"] == "PENDING_APPROVAL"
            call_ids.append(data["callId"])
        outcomes = [approve_all_at_once(server, creds["superToken"], call_id) for call_id in call_ids]
    assert outcomes == [[200] + [409] * (APPROVERS - 1)] * CALLS
    assert sorted(entry["body"]["amount"] for entry in shop.seen) == list(range(1, CALLS + 1))
    assert all(entry["authorized"] for entry in shop.seen)
    assert db.sql("SELECT status, COUNT(*) FROM contextquery_toolcall GROUP BY status") == [("SUCCEEDED", CALLS)]
