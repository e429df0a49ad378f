"""The query rules: scope, iterSeq, fields, meta kinds, budget (SPEC §4.5)."""

import json
import time

import pytest
from django.conf import settings
from django.test import override_settings

from contextquery import judgement, queries, recording, tokens
from contextquery.models import Visit
from contextquery.queries import field_select, meta_content
from project.errors import NotFound
from tests.contextquery.context_fixtures import CHAIN


def reader_of(visit):
    return queries.reader_authenticate(raw=tokens.token_issue(visit=visit).token)


# --- field_select (pure).

DATA = {
    "result": "hello",
    "user": {"name": "Ada", "langs": ["en", {"code": "zh", "name": "中文"}]},
    "a.b": "the dotted key",
    "a": {"b": "the nested key"},
    "items": [{"id": 7}],
    "cfg": {"v1.2": {"on": True}},
}


@pytest.mark.parametrize(
    "field, expected",
    [
        ("result", "hello"),
        ("user.name", "Ada"),
        ("user.langs.0", "en"),
        ("user.langs.1.name", "中文"),
        ("items.0.id", 7),
        ("a.b", "the dotted key"),
        ("cfg.v1.2.on", True),
    ],
)
def test_a_field_reaches_keys_nested_objects_and_list_indexes(field, expected):
    assert field_select(DATA, field) == expected


def test_a_key_with_dots_is_tried_whole_before_it_is_split():
    assert field_select({"a.b": 1, "a": {"b": 2}}, "a.b") == 1
    assert field_select({"a": {"b": 2}}, "a.b") == 2


def test_a_missing_field_reports_where_it_stopped_and_what_is_there():
    with pytest.raises(LookupError) as caught:
        field_select(DATA, "user.age")
    reached, keys = caught.value.args
    assert reached == "user" and keys == "'name', 'langs'"


def test_a_list_index_out_of_range_reports_the_index_range():
    with pytest.raises(LookupError) as caught:
        field_select(DATA, "user.langs.5")
    assert caught.value.args == ("user.langs", "indexes 0 to 1")


def test_a_field_of_a_scalar_is_missing():
    with pytest.raises(LookupError):
        field_select("plain text", "x")


def test_many_dotted_candidates_resolve_quickly():
    data = {"a": {"a": {"a": {}}}, "a.a": {"a.a": {}}}
    with pytest.raises(LookupError):
        field_select(data, ".".join(["a"] * 400))


def hostile_output(depth: int) -> dict:
    """Nested objects whose keys are every dotted run of "k" (issue 12's example):
    a lookup that tried every split would branch at every level."""
    node: dict = {}
    for _ in range(depth):
        node = {".".join(["k"] * n): node for n in range(1, 6)}
    return node


def test_a_hostile_dotted_field_gives_up_within_the_probe_bound():
    started = time.perf_counter()
    with pytest.raises(queries.FieldNotFound) as caught:
        field_select(hostile_output(60), ".".join(["k"] * 63) + ".missing")
    assert caught.value.bounded and time.perf_counter() - started < 1.0  # a hang guard; milliseconds in fact


def test_a_missing_field_names_at_most_twenty_available_keys():
    with pytest.raises(queries.FieldNotFound) as caught:
        field_select({f"key{i}": i for i in range(500)}, "nope")
    assert caught.value.keys.endswith("and 480 more") and caught.value.keys.count("'key") == 20


# --- meta_content (pure).

LOGS = [
    {"type": "THINKING", "timestamp": None, "message": "one", "detail": None},
    {"type": "TOOL_CALL", "timestamp": None, "message": "search", "detail": {"q": "x"}},
    {"type": "TODO_UPDATE", "timestamp": None, "message": "", "detail": [{"text": "t", "status": "pending"}]},
    {"type": "TOOL_RESULT", "timestamp": None, "message": "search", "detail": "found"},
    {"type": "THINKING", "timestamp": None, "message": "two", "detail": None},
    {"type": "TODO_UPDATE", "timestamp": None, "message": "", "detail": [{"text": "t", "status": "completed"}]},
]


def test_meta_kinds_pick_their_keys():
    assert meta_content(LOGS, "THINKING") == {"thinking": "one\ntwo"}
    assert meta_content(LOGS, "TOOL_CALLS") == {
        "toolCalls": [{"tool": "search", "args": {"q": "x"}}, {"tool": "search", "result": "found"}]
    }
    assert meta_content(LOGS, "TODO") == {"todoList": [{"text": "t", "status": "completed"}]}
    assert set(meta_content(LOGS, "ALL")) == {"thinking", "toolCalls", "todoList", "logs"}


def test_a_visit_without_logs_has_empty_meta():
    assert meta_content([], "ALL") == {"thinking": "", "toolCalls": [], "todoList": None, "logs": []}


# --- Scope, through the ORM.

pytestmark_db = pytest.mark.django_db


@pytestmark_db
def test_every_ancestor_is_readable_and_nothing_else(flyback):
    reader = reader_of(flyback.by["C2"])
    readable = {node: queries.output_query(reader=reader, node_id=node)["iterSeq"] for node in "ABCG"}
    assert readable == {"A": 1, "B": 1, "C": 1, "G": 1}


@pytestmark_db
def test_a_later_visit_is_not_readable_from_an_earlier_one(flyback):
    Visit.objects.filter(pk=flyback.by["C1"].pk).update(status="RUNNING")
    reader = reader_of(flyback.by["C1"])
    with pytest.raises(NotFound, match="is not a predecessor"):
        queries.output_query(reader=reader, node_id="G")
    with pytest.raises(NotFound, match="is not a predecessor"):
        queries.meta_query(reader=reader, visit_uuid=str(flyback.by["C2"].visit_uuid))


@pytestmark_db
def test_a_visit_of_another_run_is_not_readable(flyback, make_run):
    other = make_run(CHAIN)
    foreign = other.visit("A")
    reader = reader_of(flyback.by["C2"])
    with pytest.raises(NotFound, match="is not a predecessor"):
        queries.meta_query(reader=reader, visit_uuid=str(foreign.visit_uuid))


@pytestmark_db
def test_a_sibling_branch_is_not_readable_by_node_or_visit(branches):
    reader = reader_of(branches.by["C"])
    with pytest.raises(NotFound):
        queries.output_query(reader=reader, node_id="E")
    with pytest.raises(NotFound):
        queries.meta_query(reader=reader, visit_uuid=str(branches.by["F"].visit_uuid))


@pytestmark_db
def test_an_explicit_iter_seq_reads_that_visit(make_run):
    rec = make_run(CHAIN)
    a1 = rec.visit("A")
    a2 = rec.visit("A", a1)
    b = rec.visit("B", a2, status="RUNNING")
    reader = reader_of(b)
    assert queries.output_query(reader=reader, node_id="A", iter_seq=1)["visitUuid"] == str(a1.visit_uuid)
    assert queries.output_query(reader=reader, node_id="A")["visitUuid"] == str(a2.visit_uuid)


@pytestmark_db
def test_a_missing_field_names_the_available_keys(flyback):
    reader = reader_of(flyback.by["C2"])
    with pytest.raises(NotFound) as caught:
        queries.output_query(reader=reader, node_id="B", field="result.text")
    assert "available at 'result': none (the value is str)" in caught.value.message
    with pytest.raises(NotFound) as caught:
        queries.output_query(reader=reader, node_id="B", field="nothing")
    # PostgreSQL's jsonb keeps keys in its own order, so only their presence is checked.
    assert "'result'" in caught.value.message and "'count'" in caught.value.message


@pytestmark_db
def test_a_large_path_set_is_cut_at_max_paths(make_run):
    # A ladder of diamonds: each level doubles the number of chains (2**8 = 256 > 100).
    graph = {"nodes": [{"id": f"N{i}"} for i in range(30)], "edges": []}
    rec = make_run(graph, "DAG")
    tops = [rec.visit("N0")]
    for level in range(8):
        left = rec.visit(f"N{1 + 2 * level}", *tops)
        right = rec.visit(f"N{2 + 2 * level}", *tops)
        tops = [left, right]
    last = rec.visit("N29", *tops, status="RUNNING")
    graph_answer = queries.path_query(reader=reader_of(last))
    assert len(graph_answer["paths"]) == 100 and graph_answer["truncated"] is True
    assert all(p["visitUuids"][-1] == str(last.visit_uuid) for p in graph_answer["paths"])


@pytestmark_db
@override_settings(HERMES_CONTEXT_QUERY={**settings.HERMES_CONTEXT_QUERY, "MAX_QUERIES_PER_VISIT": 3})
def test_the_budget_is_taken_until_it_is_spent(flyback):
    visit = flyback.by["C2"]
    assert [queries.query_budget_take(visit_id=visit.pk) for _ in range(5)] == [True, True, True, False, False]
    visit.refresh_from_db()
    assert visit.query_count == 3


@pytestmark_db
def test_output_and_meta_take_a_few_database_queries(flyback, django_assert_max_num_queries):
    reader = reader_of(flyback.by["C2"])
    with django_assert_max_num_queries(2):
        queries.output_query(reader=reader, node_id="B")
    with django_assert_max_num_queries(2):
        queries.meta_query(reader=reader, node_id="B", kind="ALL")
    with django_assert_max_num_queries(1):
        queries.path_query(reader=reader)


@pytestmark_db
def test_a_todo_list_sent_as_json_text_is_read_back_as_the_list(record):
    rec = record(CHAIN)
    a = rec.visit("A", complete=False)
    todo = [{"text": "Read the ticket", "status": "completed"}]
    recording.logs_append(visit=a, logs=[{"type": "TODO_UPDATE", "detail": json.dumps(todo)}])
    judgement.visit_complete(visit=a, status="SUCCESS", output={"status": 200, "message": "ok", "data": {}})
    b = rec.visit("B", a, complete=False)
    assert queries.meta_query(reader=reader_of(b), node_id="A", kind="TODO")["todoList"] == todo
