"""Hot-path economies of the internal context endpoints (issue 7): each keeps
the answer and the rules of SPEC §4.5 while doing less work per request."""

import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contextquery import queries, tokens
from contextquery.models import ContextToken, Visit

pytestmark = pytest.mark.django_db


def _token_slides(captured) -> int:
    return sum(1 for q in captured.captured_queries if q["sql"].startswith('UPDATE "contextquery_contexttoken"'))


def test_a_burst_of_queries_slides_the_tokens_once(flyback, issue, ask, clock):
    raw = issue(flyback.by["C2"])
    body = {"runId": flyback.run.run_id, "nodeId": "A"}
    clock.advance(30)
    with CaptureQueriesContext(connection) as captured:
        for _ in range(3):
            assert ask("output", raw, body).status_code == 200
    assert _token_slides(captured) == 1
    record = ContextToken.objects.get(token_hash=tokens.token_hash(raw))
    assert record.expires_at == clock.now + timedelta(seconds=tokens.config()["TOKEN_TTL_SECONDS"])


def test_a_query_more_than_a_second_after_the_last_slide_slides_again(flyback, issue, ask, clock):
    raw = issue(flyback.by["C2"])
    body = {"runId": flyback.run.run_id, "nodeId": "A"}
    assert ask("output", raw, body).status_code == 200
    clock.advance(1.5)
    assert ask("output", raw, body).status_code == 200
    record = ContextToken.objects.get(token_hash=tokens.token_hash(raw))
    assert record.expires_at == clock.now + timedelta(seconds=tokens.config()["TOKEN_TTL_SECONDS"])


def test_a_skipped_slide_still_slides_every_token_of_the_visit_within_a_second(flyback, issue, ask, clock):
    first, second = issue(flyback.by["C2"]), issue(flyback.by["C2"])
    clock.advance(10)
    assert ask("output", first, {"runId": flyback.run.run_id, "nodeId": "A"}).status_code == 200
    clock.advance(0.5)
    assert ask("output", second, {"runId": flyback.run.run_id, "nodeId": "A"}).status_code == 200
    ttl = timedelta(seconds=tokens.config()["TOKEN_TTL_SECONDS"])
    for raw in (first, second):
        expires = ContextToken.objects.get(token_hash=tokens.token_hash(raw)).expires_at
        assert clock.now + ttl - tokens.TOUCH_GRANULARITY <= expires <= clock.now + ttl


def test_authentication_reads_neither_the_visit_nor_the_run_json_payloads(flyback, issue):
    raw = issue(flyback.by["C2"])
    with CaptureQueriesContext(connection) as captured:
        token = tokens.token_authenticate(raw=raw)
        assert (token.visit.visit_uuid, token.run.run_id) == (flyback.by["C2"].visit_uuid, flyback.run.run_id)
        assert token.run.graph == flyback.run.graph
    assert len(captured.captured_queries) == 1
    sql = captured.captured_queries[0]["sql"]
    for column in ("input", "output", "registration", "completion"):
        assert not re.search(rf'"contextquery_visit"\."{column}"', sql)


def test_scope_rows_equal_what_the_orm_converts(branches):
    run = branches.run
    expected = [
        (pk, str(uuid), node, order, parents, status, seq)
        for pk, uuid, node, order, parents, status, seq in Visit.objects.filter(run=run).values_list(
            "pk", "visit_uuid", "node_id", "sort_order", "parent_uuids", "status", "iter_seq"
        )
    ]
    assert sorted(queries._scope_rows(run.pk)) == sorted(expected)
    assert json.dumps(sorted(queries._scope_rows(run.pk))) == json.dumps(sorted(expected))


def test_the_scope_query_reads_the_visit_table_alone(flyback):
    with CaptureQueriesContext(connection) as captured:
        queries._scope_rows(flyback.run.pk)
    (query,) = captured.captured_queries
    assert "contextquery_workflowrun" not in query["sql"] and "ORDER BY" not in query["sql"]
