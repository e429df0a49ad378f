"""Hot-path economies of the internal context endpoints (issue 7): each keeps
the answer and the rules of SPEC §4.5 while doing less work per request."""

import importlib
import json
import re
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextquery import queries, recording, tokens
from contextquery.api.internal_views import MetaQueryView, OutputQueryView, PathQueryView
from contextquery.models import ContextToken, Visit
from contextquery.paths import ancestry_sort_orders
from tests.contextquery.context_fixtures import CHAIN

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


def test_authentication_is_one_select_that_reads_no_json_payload(flyback, issue):
    raw = issue(flyback.by["C2"])
    with CaptureQueriesContext(connection) as captured:
        reader = queries.reader_authenticate(raw=raw)
    assert (reader.visit_uuid, reader.run_id) == (str(flyback.by["C2"].visit_uuid), flyback.run.run_id)
    (query,) = captured.captured_queries
    for column in ("input", "output", "registration", "completion", "meta_content", "graph"):
        assert not re.search(rf'"{column}"', query["sql"]), column


def _statements(captured) -> list[str]:
    return [
        q["sql"].split()[0].upper()
        for q in captured.captured_queries
        if not q["sql"].startswith(("SAVEPOINT", "RELEASE", "SET LOCAL"))
    ]


@pytest.mark.parametrize(
    ("endpoint", "body", "on_sqlite", "on_postgresql"),
    [
        ("output", {"nodeId": "B"}, 4, 2),
        ("path", {}, 4, 3),
        ("meta", {"nodeId": "B", "kind": "ALL"}, 5, 3),
        ("meta", {"nodeId": "B", "kind": "THINKING"}, 4, 2),
    ],
)
def test_a_context_query_is_a_few_plain_statements(
    flyback, issue, ask, clock, endpoint, body, on_sqlite, on_postgresql
):
    raw = issue(flyback.by["C2"])
    ask("output", raw, {"runId": flyback.run.run_id, "nodeId": "A"})  # slides now: the next query need not
    with CaptureQueriesContext(connection) as captured:
        assert ask(endpoint, raw, {"runId": flyback.run.run_id, **body}).status_code == 200
    statements = _statements(captured)
    if connection.vendor == "postgresql":
        # One statement reads the token, counts the query and reads the row
        # the answer needs (path: none, it reads the ancestors); the logs for
        # meta ALL; the audit INSERT.
        assert statements[0] == "WITH" and statements[-1] == "INSERT"
        assert len(statements) == on_postgresql, captured.captured_queries
    else:
        # token SELECT, budget UPDATE, the answer's SELECT(s), audit INSERT
        assert statements[:2] == ["SELECT", "UPDATE"] and statements[-1] == "INSERT"
        assert len(statements) == on_sqlite, captured.captured_queries


def test_a_query_opens_one_atomic_block_on_sqlite_and_none_on_postgresql(flyback, issue, ask):
    raw = issue(flyback.by["C2"])
    with CaptureQueriesContext(connection) as captured:
        assert ask("output", raw, {"runId": flyback.run.run_id, "nodeId": "B"}).status_code == 200
    savepoints = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("SAVEPOINT")]
    # SQLite: one atomic block (a commit outside tests) around budget, answer
    # and audit. PostgreSQL: the count and the audit row are each one
    # statement that commits alone, so no transaction is opened at all.
    assert len(savepoints) == (0 if connection.vendor == "postgresql" else 1)


@pytest.mark.postgresql_only
@pytest.mark.django_db(transaction=True)
def test_the_hot_path_statements_are_prepared_on_the_server(flyback, issue, ask):
    raw = issue(flyback.by["C2"])
    for _ in range(3):
        assert ask("output", raw, {"runId": flyback.run.run_id, "nodeId": "B"}).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = " ".join(row[0] for row in cursor.fetchall())
    assert "WITH t AS" in prepared and 'INSERT INTO "contextquery_contextread"' in prepared


@pytest.mark.postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_query_leaves_the_connection_waiting_for_the_disk_on_every_later_commit(flyback, issue, ask):
    raw = issue(flyback.by["C2"])
    assert ask("output", raw, {"runId": flyback.run.run_id, "nodeId": "B"}).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    assert Visit.objects.get(pk=flyback.by["C2"].pk).query_count == 1


def _ancestors_walked(visits, visit) -> set[int]:
    by_uuid = {str(v.visit_uuid): v for v in visits}
    seen, stack = set(), [str(p) for p in visit.parent_uuids or ()]
    while stack:
        parent = by_uuid[stack.pop()]
        if parent.sort_order not in seen:
            seen.add(parent.sort_order)
            stack.extend(str(p) for p in parent.parent_uuids or ())
    return seen


@pytest.mark.parametrize("fixture", ["flyback", "branches"])
def test_a_visits_stored_ancestry_is_every_visit_its_parents_lead_back_to(request, fixture):
    run = request.getfixturevalue(fixture).run
    visits = list(Visit.objects.filter(run=run))
    for visit in visits:
        assert set(ancestry_sort_orders(bytes(visit.ancestry))) == _ancestors_walked(visits, visit), visit.node_id


def test_the_lineage_migration_computes_what_registration_stores(flyback):
    stored = {v.pk: (bytes(v.ancestry), v.hop_kinds) for v in Visit.objects.filter(run=flyback.run)}
    Visit.objects.filter(run=flyback.run).update(ancestry=b"", hop_kinds=[])
    type(flyback.run).objects.filter(pk=flyback.run.pk).update(visit_counter=len(stored))
    migration = importlib.import_module("contextquery.migrations.0008_visit_lineage_and_meta")
    migration.lineage_fill(django_apps, None)
    again = {v.pk: (bytes(v.ancestry), v.hop_kinds) for v in Visit.objects.filter(run=flyback.run)}
    assert again == stored


def test_meta_kept_as_logs_arrive_equals_meta_read_from_every_log(record):
    a = record(CHAIN).visit("A", complete=False)
    batches = [
        [{"seq": 3, "type": "TOOL_CALL", "message": "search", "detail": {"q": "x"}}],
        [
            {"seq": 1, "type": "THINKING", "message": "first"},
            {"seq": 2, "type": "TODO_UPDATE", "detail": [{"text": "look", "status": "pending"}]},
        ],
        [{"seq": 4, "type": "TOOL_RESULT", "message": "search", "detail": {"hits": 2}}],
        [{"seq": 5, "type": "THINKING", "message": "second"}],
    ]
    for batch in batches:
        recording.logs_append(visit=a, logs=batch)
    a.refresh_from_db()
    logs = list(a.logs.order_by("seq").values("type", "message", "detail"))
    assert a.meta_content == queries.meta_kept(logs)
    assert a.meta_content["thinking"] == ["first", "second"]


def test_every_body_key_is_a_serializer_field():
    for endpoint, view in (("path", PathQueryView), ("output", OutputQueryView), ("meta", MetaQueryView)):
        assert queries.BODY_KEYS[endpoint] == set(view.serializer_class().fields), endpoint


_TEXT = st.one_of(
    st.none(),
    st.integers(-3, 70000),
    st.booleans(),
    st.text(max_size=6),
    st.sampled_from(["r1", " r1", "B", "B ", "a.b", "x" * 201, "all", "thinking", "Todo", "NOPE", "." * 64]),
    st.sampled_from(["550e8400-e29b-41d4-a716-446655440000", "550E8400-E29B-41D4-A716-446655440000", "550e8400"]),
)
_BODIES = st.dictionaries(
    st.sampled_from(["runId", "nodeId", "field", "iterSeq", "maxBytes", "visitUuid", "kind", "other", "run_id"]),
    _TEXT,
    max_size=6,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_BODIES, endpoint=st.sampled_from(["path", "output", "meta"]))
def test_the_fast_field_check_never_disagrees_with_the_serializer(endpoint, body):
    fast = queries.fields_fast(endpoint, body)
    if fast is None:
        return
    view = {"path": PathQueryView, "output": OutputQueryView, "meta": MetaQueryView}[endpoint]
    serializer = view.serializer_class(data=body)
    assert serializer.is_valid(), serializer.errors
    expected = {key: serializer.validated_data.get(key) for key in queries.BODY_KEYS[endpoint]}
    assert fast == {key: (str(v) if key == "visitUuid" and v is not None else v) for key, v in expected.items()}


def test_a_visit_past_the_kept_entries_keeps_its_todo_list_only_and_meta_reads_the_logs(record, monkeypatch):
    monkeypatch.setattr(queries, "MAX_KEPT_ENTRIES", 3)
    rec = record(CHAIN)
    a = rec.visit("A", complete=False)
    todo = [{"text": "look", "status": "pending"}]
    recording.logs_append(visit=a, logs=[{"type": "THINKING", "message": f"thought {n}"} for n in range(5)])
    recording.logs_append(visit=a, logs=[{"type": "TODO_UPDATE", "detail": todo}])
    a.refresh_from_db()
    assert a.meta_content == {"overflow": True, "todoList": todo}
    b = rec.visit("B", a, complete=False)
    reader = queries.reader_authenticate(raw=tokens.token_issue(visit=b).token)
    thinking = queries.meta_query(reader=reader, node_id="A", kind="THINKING")["thinking"]
    assert thinking == "\n".join(f"thought {n}" for n in range(5))
    assert queries.meta_query(reader=reader, node_id="A", kind="TODO")["todoList"] == todo


def test_a_token_at_its_lifetime_cap_is_not_slid_by_every_query(flyback, issue, ask, clock):
    raw = issue(flyback.by["C2"])
    body = {"runId": flyback.run.run_id, "nodeId": "A"}
    lifetime, ttl = tokens.config()["TOKEN_MAX_LIFETIME_SECONDS"], tokens.config()["TOKEN_TTL_SECONDS"]
    for _ in range(int(lifetime // (ttl / 2))):  # stay alive up to the last TTL of the lifetime
        clock.advance(ttl / 2)
        if clock.now + timedelta(seconds=ttl) > ContextToken.objects.get().issued_at + timedelta(seconds=lifetime):
            break
        tokens.tokens_touch(visit=flyback.by["C2"])  # heartbeats keep it alive
    assert ask("output", raw, body).status_code == 200  # slides to the cap
    record = ContextToken.objects.get(token_hash=tokens.token_hash(raw))
    assert record.expires_at == record.issued_at + timedelta(seconds=lifetime)
    clock.advance(2)
    with CaptureQueriesContext(connection) as captured:
        assert ask("output", raw, body).status_code == 200
    assert _token_slides(captured) == 0


@pytest.mark.postgresql_only
def test_a_long_body_is_read_only_after_the_token_and_gets_the_same_answer(flyback, issue, ask):
    raw = issue(flyback.by["C2"])
    body = {"runId": flyback.run.run_id, "nodeId": "B"}
    short = ask("output", raw, body)
    padded = (json.dumps(body) + " " * queries.EARLY_BODY_MAX_BYTES).encode()
    with CaptureQueriesContext(connection) as captured:
        long = ask("output", raw, raw=padded)
    assert (long.status_code, long.json()) == (short.status_code, short.json())
    # The token's statement reads no target; the answer's own SELECT does.
    assert _statements(captured) == ["WITH", "SELECT", "INSERT"]
