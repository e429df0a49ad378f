"""The recording rules (SPEC §4.1–§4.4), called directly as loaddemo and the API do."""

import json

import pytest
from django.utils import timezone

from contextquery import judgement, recording
from contextquery.canvas import canvas_validate
from contextquery.models import ContextToken, Visit, VisitLog, WorkflowRun
from patterns.models import HermesErrorPattern
from project.errors import Conflict, Forbidden, Invalid, LimitReached
from tests.contextquery.factories import CHAIN, DIAMOND, TWO_BRANCHES, EngineUserFactory, canvas
from tests.factories import UserFactory

RATE_LIMIT_REPLY = "API call failed after 3 retries: HTTP 429: Too Many Requests. Please retry after 20s."
HTTP_404_ANSWER = (  # a legitimate answer from the labelled sample (ok-011)
    "I checked all 212 links in the docs site. Results:\n- 205 OK\n- 4 return HTTP 404 (old /v1/ paths)\n"
    "- 2 return HTTP 403 (pages behind the partner portal)\n\nI opened PR #318 that redirects the /v1/ paths."
)


def stored_state():
    """Everything the recording rules may write, to prove a refusal changed nothing."""
    return (
        list(WorkflowRun.objects.values().order_by("id")),
        list(Visit.objects.values().order_by("id")),
        list(VisitLog.objects.values().order_by("id")),
    )


# --------------------------------------------------------------------------- runs


def test_a_run_without_run_id_gets_an_8_character_id(record):
    run = record().run
    assert len(run.run_id) == 8 and run.status == "RUNNING"


def test_fail_strategy_defaults_to_abort():
    assert canvas_validate({"nodes": [{"id": "A"}]}) == {"nodes": [{"id": "A", "failStrategy": "abort"}], "edges": []}


@pytest.mark.parametrize(
    "graph, field",
    [
        ([], "graph"),
        ({"nodes": []}, "graph.nodes"),
        ({"nodes": [{"id": "A"}], "edges": {}}, "graph.edges"),
        ({"nodes": ["A"]}, "graph.nodes[0]"),
        ({"nodes": [{"id": 7}]}, "graph.nodes[0].id"),
        ({"nodes": [{"id": "A"}, {"id": "A"}]}, "graph.nodes[1].id"),
        ({"nodes": [{"id": "A", "name": 3}]}, "graph.nodes[0].name"),
        ({"nodes": [{"id": "A", "type": ["x"]}]}, "graph.nodes[0].type"),
        ({"nodes": [{"id": "A", "failStrategy": "retry"}]}, "graph.nodes[0].failStrategy"),
        ({"nodes": [{"id": "A"}], "edges": [{"source": "A", "target": "Z"}]}, "graph.edges[0].target"),
        ({"nodes": [{"id": "A"}], "edges": [{"target": "A"}]}, "graph.edges[0].source"),
        ({"nodes": [{"id": "A", "failstrategy": "skip"}]}, "graph.nodes[0].failstrategy"),
        ({"nodes": [{"id": "A"}], "edge": []}, "graph.edge"),
    ],
)
def test_an_invalid_graph_is_refused_naming_the_field(graph, field):
    with pytest.raises(Invalid) as caught:
        canvas_validate(graph)
    assert list(caught.value.errors) == [field]


def test_a_canvas_over_max_graph_nodes_is_refused_naming_the_limit(settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "MAX_GRAPH_NODES": 3}
    with pytest.raises(Invalid) as caught:
        canvas_validate({"nodes": [{"id": n} for n in "ABCD"]})
    assert list(caught.value.errors) == ["graph.nodes"] and "MAX_GRAPH_NODES" in caught.value.message


def test_a_run_id_with_characters_unfit_for_urls_is_refused(engine_user):
    with pytest.raises(Invalid) as caught:
        recording.run_create(user=engine_user, graph=CHAIN, run_id="a/b")
    assert "runId" in caught.value.errors


def test_recording_without_the_permission_is_forbidden(db):
    with pytest.raises(Forbidden):
        recording.run_create(user=UserFactory(), graph=CHAIN)


def test_an_equal_repeated_create_returns_the_stored_run(engine_user):
    first, created = recording.run_create(user=engine_user, graph=CHAIN, run_id="r-1", workflow_name="W")
    again, created_again = recording.run_create(user=engine_user, graph=CHAIN, run_id="r-1", workflow_name="W")
    assert created and not created_again and again.pk == first.pk


def test_a_repeated_create_with_a_different_body_conflicts(engine_user):
    recording.run_create(user=engine_user, graph=CHAIN, run_id="r-1")
    with pytest.raises(Conflict, match="graph"):
        recording.run_create(user=engine_user, graph=DIAMOND, run_id="r-1")


# --------------------------------------------------------------------------- visits


def test_sort_order_and_iter_seq_are_assigned_by_the_server(record):
    rec = record(CHAIN, "AGENTIC")
    a, b, c1, g = rec.visit("A"), rec.visit("B", derive=True), rec.visit("C", derive=True), rec.visit("G", derive=True)
    c2 = rec.visit("C", derive=True)
    assert [v.sort_order for v in (a, b, c1, g, c2)] == [1, 2, 3, 4, 5]
    assert (c1.iter_seq, c2.iter_seq, g.iter_seq) == (1, 2, 1)


def test_agentic_parents_are_derived_from_the_previous_visit(record):
    rec = record(CHAIN, "AGENTIC")
    a = rec.visit("A", derive=True)
    b = rec.visit("B", derive=True, complete=False)
    c = rec.visit("C", derive=True)
    assert (a.parent_uuids, b.parent_uuids, c.parent_uuids) == ([], [str(a.visit_uuid)], [str(b.visit_uuid)])


def test_dag_parents_are_derived_from_ended_predecessor_visits(record):
    rec = record(TWO_BRANCHES, "DAG")
    for node in "ADBECF":
        rec.visit(node, derive=True)
    g = rec.visit("G", derive=True)
    assert g.parent_uuids == [str(rec.by["C1"].visit_uuid), str(rec.by["F1"].visit_uuid)]


def test_a_dag_parent_still_running_is_not_derived(record):
    rec = record(DIAMOND, "DAG")
    a = rec.visit("A")
    rec.visit("B", a, complete=False)
    c = rec.visit("C", a)
    d = rec.visit("D", derive=True)
    assert d.parent_uuids == [str(c.visit_uuid)]


def test_an_empty_parent_list_makes_a_root_even_when_parents_could_be_derived(record):
    rec = record(CHAIN, "AGENTIC")
    rec.visit("A")
    b = rec.visit("B")
    assert b.parent_uuids == []


def test_parents_may_still_be_running(record):
    rec = record(DIAMOND, "DAG")
    a = rec.visit("A", complete=False)
    b = rec.visit("B", a, complete=False)
    assert b.parent_uuids == [str(a.visit_uuid)]


def test_a_node_missing_from_the_graph_is_refused_and_nothing_is_stored(record):
    rec = record(CHAIN)
    before = stored_state()
    with pytest.raises(Invalid) as caught:
        recording.visit_register(run=rec.run, node_id="Z")
    assert "nodeId" in caught.value.errors and "'Z'" in caught.value.message
    assert stored_state() == before


def test_an_unknown_parent_is_refused_and_nothing_is_stored(record):
    rec = record(CHAIN)
    rec.visit("A")
    before = stored_state()
    with pytest.raises(Invalid) as caught:
        recording.visit_register(run=rec.run, node_id="B", from_visit_uuids=["6f1c2d8e-0000-4000-8000-000000000000"])
    assert list(caught.value.errors) == ["fromVisitUuids[0]"]
    assert stored_state() == before


def test_a_parent_from_another_run_is_refused(record):
    other = record(CHAIN).visit("A")
    rec = record(CHAIN)
    with pytest.raises(Invalid, match="another run"):
        recording.visit_register(run=rec.run, node_id="B", from_visit_uuids=[str(other.visit_uuid)])
    assert rec.run.visits.count() == 0


def test_the_visit_beyond_max_visits_per_run_conflicts_naming_the_limit(record, settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "MAX_VISITS_PER_RUN": 3}
    rec = record(CHAIN, "AGENTIC")
    for node in "ABC":
        rec.visit(node, derive=True)
    before = stored_state()
    with pytest.raises(Conflict, match=r"MAX_VISITS_PER_RUN \(3\)"):
        recording.visit_register(run=rec.run, node_id="G")
    assert stored_state() == before


def test_a_finished_run_takes_no_new_visits(record):
    rec = record(CHAIN)
    rec.visit("A")
    recording.run_finish(run=rec.run, status="SUCCESS")
    with pytest.raises(Conflict, match="finished"):
        recording.visit_register(run=rec.run, node_id="B")


def test_an_equal_repeated_register_returns_the_stored_visit_with_a_fresh_token(record):
    rec = record(CHAIN)
    uuid = "0b7a4e0c-1d2f-4c3a-9e8f-5a6b7c8d9e0f"
    first = recording.visit_register(run=rec.run, node_id="A", visit_uuid=uuid, from_visit_uuids=[])
    again = recording.visit_register(run=rec.run, node_id="A", visit_uuid=uuid, from_visit_uuids=[])
    assert first.created and not again.created and again.visit.pk == first.visit.pk
    assert again.context_query["token"] != first.context_query["token"]
    assert Visit.objects.count() == 1


def test_a_repeated_register_with_a_different_body_conflicts(record):
    rec = record(CHAIN)
    uuid = "0b7a4e0c-1d2f-4c3a-9e8f-5a6b7c8d9e0f"
    recording.visit_register(run=rec.run, node_id="A", visit_uuid=uuid)
    with pytest.raises(Conflict, match="different body"):
        recording.visit_register(run=rec.run, node_id="B", visit_uuid=uuid)


def test_a_visit_uuid_taken_in_another_run_conflicts(record):
    uuid = "0b7a4e0c-1d2f-4c3a-9e8f-5a6b7c8d9e0f"
    recording.visit_register(run=record(CHAIN).run, node_id="A", visit_uuid=uuid)
    with pytest.raises(Conflict, match="another run"):
        recording.visit_register(run=record(CHAIN).run, node_id="A", visit_uuid=uuid)


def test_register_returns_the_context_query_object_for_the_bridge(record):
    reg = recording.visit_register(run=record(CHAIN).run, node_id="A")
    assert set(reg.context_query) == {"base_url", "token", "run_id", "visit_uuid", "expires_at"}
    assert reg.context_query["visit_uuid"] == str(reg.visit.visit_uuid)


def test_register_returns_no_context_query_when_disabled(record, settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "ENABLED": False}
    assert recording.visit_register(run=record(CHAIN).run, node_id="A").context_query is None


# --------------------------------------------------------------------------- logs


def test_logs_keep_their_order_and_get_server_seqs(record):
    visit = record(CHAIN).visit("A", complete=False)
    recording.logs_append(
        visit=visit, logs=[{"type": "THINKING", "message": "one"}, {"type": "TEXT", "message": "two"}]
    )
    recording.logs_append(visit=visit, logs=[{"type": "THINKING", "message": "three"}])
    assert list(visit.logs.values_list("seq", "message")) == [(1, "one"), (2, "two"), (3, "three")]


def test_a_retried_batch_with_engine_seqs_adds_nothing_twice(record):
    visit = record(CHAIN).visit("A", complete=False)
    batch = [
        {"seq": 1, "type": "THINKING", "message": "a"},
        {"seq": 2, "type": "TOOL_CALL", "message": "search", "detail": {"q": "x"}},
    ]
    first = recording.logs_append(visit=visit, logs=batch)
    again = recording.logs_append(visit=visit, logs=batch)
    assert (first["added"], again["added"], again["skipped"]) == (2, 0, 2)
    assert visit.logs.count() == 2


def test_a_log_without_seq_follows_the_highest_engine_seq(record):
    visit = record(CHAIN).visit("A", complete=False)
    recording.logs_append(visit=visit, logs=[{"seq": 10, "type": "TEXT"}, {"type": "TEXT"}])
    assert list(visit.logs.values_list("seq", flat=True)) == [10, 11]


def test_an_unknown_log_type_refuses_the_whole_batch(record):
    visit = record(CHAIN).visit("A", complete=False)
    with pytest.raises(Invalid) as caught:
        recording.logs_append(visit=visit, logs=[{"type": "TEXT"}, {"type": "SHOUT"}])
    assert list(caught.value.errors) == ["logs[1].type"]
    assert visit.logs.count() == 0


def test_logs_beyond_max_logs_per_visit_are_429_naming_the_limit_and_store_nothing(record, settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "MAX_LOGS_PER_VISIT": 5}
    visit = record(CHAIN).visit("A", complete=False)
    recording.logs_append(visit=visit, logs=[{"type": "TEXT"}] * 4)
    with pytest.raises(LimitReached) as caught:
        recording.logs_append(visit=visit, logs=[{"type": "TEXT"}] * 2)
    assert "MAX_LOGS_PER_VISIT (5)" in caught.value.message and caught.value.retry_after is None
    assert visit.logs.count() == 4 and Visit.objects.get(pk=visit.pk).log_count == 4
    recording.logs_append(visit=visit, logs=[{"type": "TEXT"}])
    assert Visit.objects.get(pk=visit.pk).log_count == 5


def test_a_retried_batch_at_the_limit_is_skipped_not_refused(record, settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "MAX_LOGS_PER_VISIT": 2}
    visit = record(CHAIN).visit("A", complete=False)
    batch = [{"seq": 1, "type": "TEXT"}, {"seq": 2, "type": "TEXT"}]
    recording.logs_append(visit=visit, logs=batch)
    assert recording.logs_append(visit=visit, logs=batch)["skipped"] == 2


def test_a_todo_list_sent_as_json_text_is_stored_as_the_list(record):
    visit = record(CHAIN).visit("A", complete=False)
    todo = [{"text": "Read the ticket", "status": "completed"}, {"text": "Reply", "status": "pending"}]
    recording.logs_append(visit=visit, logs=[{"type": "TODO_UPDATE", "detail": json.dumps(todo)}])
    assert visit.logs.get().detail == todo


@pytest.mark.parametrize(
    "detail",
    [{"todos": [{"text": "x", "status": "pending"}]}, json.dumps({"todos": []}), "not json", [{"status": "done"}], 7],
)
def test_a_todo_update_of_another_shape_is_refused_naming_the_shape(record, detail):
    visit = record(CHAIN).visit("A", complete=False)
    with pytest.raises(Invalid) as caught:
        recording.logs_append(visit=visit, logs=[{"type": "TEXT"}, {"type": "TODO_UPDATE", "detail": detail}])
    assert list(caught.value.errors) == ["logs[1].detail"] and "[{text, status}" in caught.value.message
    assert visit.logs.count() == 0


def test_a_todo_list_in_json_text_with_a_nul_character_is_refused(record):
    visit = record(CHAIN).visit("A", complete=False)
    with pytest.raises(Invalid) as caught:
        recording.logs_append(visit=visit, logs=[{"type": "TODO_UPDATE", "detail": '[{"text": "a\\u0000b"}]'}])
    assert list(caught.value.errors) == ["logs[0].detail"] and "NUL" in caught.value.message


def test_tool_call_arguments_sent_as_json_text_are_stored_decoded(record):
    visit = record(CHAIN).visit("A", complete=False)
    recording.logs_append(
        visit=visit,
        logs=[
            {"type": "TOOL_CALL", "message": "search", "detail": '{"q": "canberra"}'},
            {"type": "TOOL_CALL", "message": "echo", "detail": "plain words"},
        ],
    )
    assert [log.detail for log in visit.logs.order_by("seq")] == [{"q": "canberra"}, "plain words"]


def test_logs_slide_the_visit_tokens(record, settings):
    reg = recording.visit_register(run=record(CHAIN).run, node_id="A")
    token = ContextToken.objects.get(visit=reg.visit)
    ContextToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() + timezone.timedelta(seconds=5))
    recording.logs_append(visit=reg.visit, logs=[{"type": "TEXT"}])
    token.refresh_from_db()
    assert token.expires_at > timezone.now() + timezone.timedelta(seconds=60)


# --------------------------------------------------------------------------- the failure upgrade (SPEC §4.4)


def complete(rec, node="A", **kwargs):
    visit = rec.visit(node, complete=False)
    kwargs.setdefault("status", "SUCCESS")
    return judgement.visit_complete(visit=visit, **kwargs), Visit.objects.get(pk=visit.pk)


def test_an_agent_that_says_it_failed_is_failed_with_its_reason_and_category(record):
    verdict, visit = complete(
        record(CHAIN),
        final_text="partial",
        agent_result={"failed": True, "failureReason": "rate_limit", "error": "HTTP 429 from provider"},
    )
    assert verdict["effectiveStatus"] == "FAILED"
    assert verdict["category"] == "rate_limit" and verdict["retryable"] is True
    assert "HTTP 429 from provider" in verdict["failureReason"] and verdict["runAction"] == "abort"
    assert visit.output["status"] == 400


def test_an_agent_failure_without_a_known_category_takes_it_from_a_matching_pattern(record):
    verdict, _ = complete(
        record(CHAIN), final_text=RATE_LIMIT_REPLY, agent_result={"failed": True, "failureReason": "provider gave up"}
    )
    assert verdict["category"] == "rate_limit" and verdict["retryable"] is True


def test_an_agent_failure_keeps_the_pattern_its_reply_matches(record):
    verdict, visit = complete(
        record(CHAIN),
        final_text=RATE_LIMIT_REPLY,
        agent_result={"failed": True, "failureReason": "rate_limit", "error": "HTTP 429"},
    )
    assert verdict["category"] == "rate_limit" and verdict["retryable"] is True
    assert verdict["matchedPattern"] is not None
    assert visit.matched_pattern_id == verdict["matchedPattern"]["id"]
    assert visit.matched_pattern.category == "rate_limit"


def test_an_agent_that_stopped_without_finishing_is_failed_as_incomplete(record):
    verdict, _ = complete(
        record(CHAIN),
        final_text="Step 1 done, step 2…",
        agent_result={"failed": False, "completed": False, "turnExitReason": "max_iterations"},
    )
    assert (verdict["effectiveStatus"], verdict["category"], verdict["retryable"]) == ("FAILED", "incomplete", False)
    assert "max_iterations" in verdict["failureReason"]


def test_a_reported_failure_without_output_gets_a_failure_envelope_with_the_error(record):
    verdict, visit = complete(record(CHAIN), status="FAILED", error="Timeout after 30s")
    assert verdict["effectiveStatus"] == "FAILED"
    assert visit.output == {"status": 400, "message": "Timeout after 30s", "data": None}


def test_a_reported_failure_keeps_its_output_with_status_400(record):
    _, visit = complete(record(CHAIN), status="FAILED", output={"status": 200, "message": "x", "data": {"k": 1}})
    assert visit.output == {"status": 400, "message": "x", "data": {"k": 1}}


def test_a_reported_skip_is_skipped_and_continues(record):
    verdict, _ = complete(record(CHAIN), status="SKIPPED")
    assert (verdict["effectiveStatus"], verdict["runAction"]) == ("SKIPPED", "continue")


def test_success_with_a_400_envelope_is_failed_with_the_envelope_message(record):
    verdict, _ = complete(record(CHAIN), output={"status": 400, "message": "quota check failed", "data": None})
    assert verdict["failureReason"] == "Node A failed (envelope.status=400): quota check failed"


def test_a_400_envelope_without_message_says_no_reason_given(record):
    verdict, _ = complete(record(CHAIN), output={"status": 400, "data": None})
    assert verdict["failureReason"] == "Node A failed (envelope.status=400): no reason given"


def test_an_agent_reply_that_is_an_error_text_is_failed_by_pattern(record):
    output = {"status": 200, "message": "ok", "data": {"answer": RATE_LIMIT_REPLY}}
    verdict, visit = complete(record(CHAIN), output=output, final_text=RATE_LIMIT_REPLY)
    assert verdict["effectiveStatus"] == "FAILED"
    assert (verdict["category"], verdict["retryable"]) == ("rate_limit", True)
    pattern = HermesErrorPattern.objects.get(pk=verdict["matchedPattern"]["id"])
    assert pattern.name in verdict["failureReason"] and RATE_LIMIT_REPLY[:60] in verdict["failureReason"]
    assert (visit.matched_pattern_key, visit.matched_pattern_name, visit.matched_pattern_text) == (
        pattern.key or "",
        pattern.name,
        pattern.pattern,
    )
    assert visit.output["status"] == 400
    assert visit.output["data"] == {"originalText": RATE_LIMIT_REPLY, "originalData": {"answer": RATE_LIMIT_REPLY}}


def test_a_pattern_caused_failure_counts_one_hit(record):
    verdict, _ = complete(record(CHAIN), final_text=RATE_LIMIT_REPLY)
    assert HermesErrorPattern.objects.get(pk=verdict["matchedPattern"]["id"]).hit_count == 1


def test_the_reason_quotes_only_the_first_200_characters(record):
    text = RATE_LIMIT_REPLY + " " + "x" * 400
    verdict, _ = complete(record(CHAIN), final_text=text)
    assert text[:200] in verdict["failureReason"] and text[:201] not in verdict["failureReason"]


def test_a_legitimate_answer_about_http_404_stays_success(record):
    verdict, visit = complete(
        record(CHAIN),
        final_text=HTTP_404_ANSWER,
        output={"status": 200, "message": "ok", "data": {"answer": HTTP_404_ANSWER}},
    )
    assert verdict["effectiveStatus"] == "SUCCESS" and verdict["matchedPattern"] is None
    assert visit.output["data"] == {"answer": HTTP_404_ANSWER}


def test_a_node_without_final_text_is_never_judged_on_its_data(record):
    output = {"status": 200, "message": "ok", "data": {"body": RATE_LIMIT_REPLY}}
    verdict, _ = complete(record(CHAIN), output=output)
    assert verdict["effectiveStatus"] == "SUCCESS"
    assert HermesErrorPattern.objects.filter(hit_count__gt=0).count() == 0


def test_a_blank_agent_reply_is_failed_as_empty(record):
    verdict, _ = complete(record(CHAIN), final_text="  \n ")
    assert (verdict["effectiveStatus"], verdict["failureReason"], verdict["category"]) == (
        "FAILED",
        "empty agent reply",
        "incomplete",
    )


def test_an_agent_reply_that_is_an_empty_answer_envelope_is_failed_as_empty(record):
    verdict, _ = complete(record(CHAIN), final_text='{\n  "text": "",\n  "tokens": -24389,\n  "finish_reason": null\n}')
    assert (verdict["effectiveStatus"], verdict["failureReason"], verdict["category"], verdict["matchedPattern"]) == (
        "FAILED",
        "empty agent reply (an answer envelope with no text)",
        "incomplete",
        None,
    )


def test_structured_signals_win_over_patterns(record):
    verdict, _ = complete(record(CHAIN), final_text=RATE_LIMIT_REPLY, agent_result={"completed": False})
    assert verdict["category"] == "incomplete" and verdict["matchedPattern"] is None


def test_a_failure_under_skip_continues_the_run(record):
    rec = record(canvas("AB", skip="A"))
    verdict, _ = complete(rec, status="FAILED", error="boom")
    assert (verdict["effectiveStatus"], verdict["runAction"]) == ("FAILED", "continue")


def test_a_failure_under_abort_aborts_the_run(record):
    verdict, _ = complete(record(canvas("AB")), status="FAILED", error="boom")
    assert verdict["runAction"] == "abort"


def test_downstream_of_a_skipped_failure_runs_on_and_sees_the_failure_envelope(record):
    rec = record(canvas("AB", skip="A"))
    a = rec.visit("A", status="FAILED", error="CRM down")
    b = rec.visit("B", derive=True)
    assert b.parent_uuids == [str(a.visit_uuid)] and b.status == "SUCCESS"
    assert Visit.objects.get(pk=a.pk).output["status"] == 400


def test_an_identical_repeated_completion_answers_the_stored_verdict_without_judging_again(record):
    rec = record(CHAIN)
    visit = rec.visit("A", complete=False)
    first = judgement.visit_complete(visit=visit, status="SUCCESS", final_text=RATE_LIMIT_REPLY)
    again = judgement.visit_complete(visit=visit, status="SUCCESS", final_text=RATE_LIMIT_REPLY)
    assert again == first
    assert HermesErrorPattern.objects.get(pk=first["matchedPattern"]["id"]).hit_count == 1


def test_a_different_second_completion_conflicts_and_changes_nothing(record):
    visit = record(CHAIN).visit("A", complete=False)
    judgement.visit_complete(visit=visit, status="SUCCESS", output={"status": 200, "message": "ok", "data": 1})
    before = stored_state()
    with pytest.raises(Conflict, match="different body"):
        judgement.visit_complete(visit=visit, status="FAILED")
    assert stored_state() == before


def test_a_non_object_output_is_refused(record):
    visit = record(CHAIN).visit("A", complete=False)
    with pytest.raises(Invalid) as caught:
        judgement.visit_complete(visit=visit, status="SUCCESS", output=["not", "an", "envelope"])
    assert "output" in caught.value.errors
    assert Visit.objects.get(pk=visit.pk).status == "RUNNING"


def test_completion_revokes_the_visit_tokens(record):
    reg = recording.visit_register(run=record(CHAIN).run, node_id="A")
    judgement.visit_complete(visit=reg.visit, status="SUCCESS")
    assert ContextToken.objects.get(visit=reg.visit).revoked_at is not None


# --------------------------------------------------------------------------- finish


def test_finish_cancels_visits_still_running(record):
    rec = record(DIAMOND)
    a = rec.visit("A")
    b = rec.visit("B", a, complete=False)
    run, cancelled = recording.run_finish(run=rec.run, status="FAILED")
    assert cancelled == 1 and run.finished_at is not None
    assert Visit.objects.get(pk=b.pk).status == "CANCELLED"
    assert Visit.objects.get(pk=a.pk).status == "SUCCESS"


def test_finish_revokes_the_runs_live_tokens(record):
    rec = record(CHAIN)
    reg = recording.visit_register(run=rec.run, node_id="A")
    recording.run_finish(run=rec.run, status="CANCELLED")
    assert ContextToken.objects.get(visit=reg.visit).revoked_at is not None


def test_finishing_again_with_the_same_status_is_fine_and_another_conflicts(record):
    rec = record(CHAIN)
    recording.run_finish(run=rec.run, status="SUCCESS")
    run, cancelled = recording.run_finish(run=rec.run, status="SUCCESS")
    assert run.status == "SUCCESS" and cancelled == 0
    with pytest.raises(Conflict, match="already finished"):
        recording.run_finish(run=rec.run, status="FAILED")


def test_late_logs_and_completion_are_kept_after_the_run_finished(record):
    rec = record(CHAIN)
    visit = rec.visit("A", complete=False)
    recording.run_finish(run=rec.run, status="FAILED")
    recording.logs_append(visit=visit, logs=[{"type": "TEXT", "message": "late"}])
    verdict = judgement.visit_complete(
        visit=visit, status="SUCCESS", output={"status": 200, "message": "ok", "data": 1}
    )
    assert verdict["effectiveStatus"] == "SUCCESS"
    assert visit.logs.get().message == "late"


def test_late_completion_is_kept_after_an_abort(record):
    rec = record(DIAMOND)
    a = rec.visit("A")
    b = rec.visit("B", a, complete=False)
    rec.visit("C", a, status="FAILED", error="boom")
    verdict = judgement.visit_complete(visit=b, status="SUCCESS")
    assert verdict["effectiveStatus"] == "SUCCESS"


@pytest.mark.parametrize("status", ["RUNNING", "DONE", ""])
def test_a_bad_finish_status_is_refused(record, status):
    rec = record(CHAIN)
    with pytest.raises(Invalid):
        recording.run_finish(run=rec.run, status=status)
    rec.run.refresh_from_db()
    assert rec.run.status == "RUNNING"


def test_writing_to_another_engines_run_is_forbidden(record):
    rec = record(CHAIN)
    with pytest.raises(Forbidden, match="another engine client"):
        recording.run_get_for_writer(run_id=rec.run.run_id, user=EngineUserFactory())


def test_a_superuser_may_write_to_any_run(record):
    rec = record(CHAIN)
    su = UserFactory(is_staff=True, is_superuser=True)
    assert recording.run_get_for_writer(run_id=rec.run.run_id, user=su).pk == rec.run.pk


# --------------------------------------------------------------------------- paths of recorded visits


def test_a_recorded_flight_back_has_the_seed_path(record):
    rec = record(CHAIN, "AGENTIC")
    for node in "ABCG":
        rec.visit(node, derive=True)
    c2 = rec.visit("C", derive=True)
    graph = recording.visit_paths(visit=c2)
    assert [p.sequence for p in graph.paths] == [["A", "B", "C", "G", "C"]]
    assert graph.backtrack_edge_keys == ["G->C"]


def test_a_recorded_chain_longer_than_max_path_depth_is_cut_to_its_last_visits(record, settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "MAX_VISITS_PER_RUN": 250, "ENABLED": False}
    rec = record(CHAIN, "AGENTIC")
    last = None
    for i in range(250):
        last = recording.visit_register(run=rec.run, node_id="ABCG"[i % 4]).visit
    graph = recording.visit_paths(visit=last)
    (path,) = graph.paths
    assert path.truncated and len(path.sequence) == 200 and path.visit_uuids[-1] == str(last.visit_uuid)
    assert len(graph.visit_uuids) == 250 and graph.backtrack_edge_keys == ["G->A"]


def test_a_run_id_with_a_trailing_newline_is_refused(engine_user):
    with pytest.raises(Invalid) as caught:
        recording.run_create(user=engine_user, graph=CHAIN, run_id="run-1\n")
    assert "runId" in caught.value.errors
