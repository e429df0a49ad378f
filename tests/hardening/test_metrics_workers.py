"""``/metrics`` across two gunicorn workers (SPEC §8): runs recorded and context
queries made through both workers, then scrapes answered by both workers
show the same totals, equal to what was done."""

from __future__ import annotations

import concurrent.futures

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.hardening.conftest import Api, run_with_visit
from tests.support import envelope

pytestmark = pytest.mark.slow

RUNS = 4
GOOD_QUERIES = 3  # per run: B reads its predecessor A
REPLY_429 = "API call failed after 3 retries: HTTP 429: Rate limit reached for requests. Please try again in 20s."


def totals(text: str) -> dict[tuple[str, frozenset], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_two_workers_answer_the_same_totals(database, gunicorn):
    db = database()
    creds = db.seed()
    server = gunicorn(db, workers=2)
    engine, agent = Api(server, creds["engineToken"]), Api(server)
    for _ in range(RUNS):
        run = run_with_visit(engine)
        body = {"runId": run["runId"], "nodeId": "A"}
        for _ in range(GOOD_QUERIES):
            envelope(agent.post("/internal/context/output", body, headers={"X-Context-Token": run["token"]}), 200)
        missing = {"runId": run["runId"], "nodeId": "C"}  # not a predecessor of B
        envelope(agent.post("/internal/context/output", missing, headers={"X-Context-Token": run["token"]}), 404)
        verdict = engine.post(
            f"/api/runs/{run['runId']}/visits/{run['b']}/complete", {"status": "SUCCESS", "finalText": REPLY_429}
        )
        assert envelope(verdict, 200)["effectiveStatus"] == "FAILED"

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        scrapes = list(pool.map(lambda _: Api(server).get("/metrics"), range(16)))
    assert {r.status_code for r in scrapes} == {200}
    assert len({r.text for r in scrapes}) == 1  # every worker answers the same text
    answered = server.answered_by("/metrics")
    print(f"\n/metrics answered by workers {answered}")
    assert len(answered) == 2

    found = totals(scrapes[0].text)

    def value(name, **labels):
        return found.get((name, frozenset(labels.items())), 0)

    assert value("hermes_visits_completed_total", status="SUCCESS", category="") == RUNS  # the A visits
    assert value("hermes_visits_completed_total", status="FAILED", category="rate_limit") == RUNS  # the B visits
    assert value("hermes_context_queries_total", endpoint="output", status="200") == RUNS * GOOD_QUERIES
    assert value("hermes_context_queries_total", endpoint="output", status="404") == RUNS
    assert value("hermes_context_query_duration_seconds_count", endpoint="output", status="200") == RUNS * GOOD_QUERIES
    assert value("hermes_context_tokens_issued_total") == 2 * RUNS
    assert sum(v for (name, _), v in found.items() if name == "hermes_pattern_matches_total") == RUNS
    assert value("hermes_runs_running") == RUNS
