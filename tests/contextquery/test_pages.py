"""The run inspection pages under /runs/ (SPEC §4.6) through Django's test client:
access, the run list and its filters, the run page's picture and timeline, the
visit page, false-positive marks, the pattern side, escaping and query counts."""

import json
import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from contextquery import judgement, recording
from contextquery.models import ContextRead, Visit, WorkflowRun
from patterns.models import HermesErrorPattern, JudgedReply
from tests.contextquery.factories import CHAIN, TWO_BRANCHES, VisitFactory, VisitLogFactory, WorkflowRunFactory, canvas
from tests.factories import PatternFactory

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
MARKER = "zebra-crossing fault"


@pytest.fixture
def marker(db):
    return PatternFactory(name="Zebra fault", pattern=MARKER, priority=1)


@pytest.fixture
def flagged(record, marker):
    """A run whose A visit FAILED by ``marker``."""
    return record(CHAIN, run_id="flagged1").visit("A", final_text=f"{MARKER}: upstream said no")


@pytest.fixture
def flyback(record):
    """AGENTIC A→B→C→G, then back to C (SPEC §4.2 example)."""
    rec = record(CHAIN, mode="AGENTIC", run_id="flyback1")
    a = rec.visit("A")
    b = rec.visit("B", a)
    c = rec.visit("C", b)
    g = rec.visit("G", c)
    rec.visit("C", g)
    return rec


def html(response, status=200) -> str:
    assert response.status_code == status
    return response.content.decode()


def view_on_site(client, admin_url) -> str:
    """Follow the admin change page's "View on site" link; return where it leads."""
    page = html(client.get(admin_url))
    href = re.search(r'<a href="([^"]+)" class="viewsitelink">', page).group(1)
    response = client.get(href)
    assert response.status_code == 302
    return urlsplit(response["Location"]).path


def visit_url(visit):
    return reverse("contextquery:visit", args=[visit.run.run_id, visit.visit_uuid])


# --- access ---------------------------------------------------------------------------------


def test_an_anonymous_visitor_is_sent_to_the_login_page(client):
    response = client.get("/runs/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/?next=/runs/"


@pytest.mark.parametrize("path", ["/runs/", "/runs/flyback1/"])
def test_a_non_staff_user_is_refused(client, user, flyback, path):
    client.force_login(user)
    assert client.get(path).status_code == 403


def test_an_unknown_run_is_404(ops):
    assert ops.get("/runs/nosuchrun/").status_code == 404


def test_an_unknown_or_malformed_visit_is_404(ops, flyback):
    assert ops.get("/runs/flyback1/visits/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert ops.get("/runs/flyback1/visits/not-a-uuid/").status_code == 404


def test_a_visit_of_another_run_is_404(ops, flyback, flagged):
    assert ops.get(f"/runs/flyback1/visits/{flagged.visit_uuid}/").status_code == 404


# --- the run list ---------------------------------------------------------------------------


def test_the_list_shows_each_run_with_its_visit_and_failure_counts(ops, flagged, flyback):
    page = html(ops.get("/runs/"))
    assert 'href="/runs/flyback1/"' in page and 'href="/runs/flagged1/"' in page
    row = page.split('id="run-flagged1"')[1].split("</tr>")[0]
    assert '<td class="num">1</td>' in row and '<td class="num bad">1</td>' in row
    row = page.split('id="run-flyback1"')[1].split("</tr>")[0]
    assert '<td class="num">5</td>' in row and '<td class="num">0</td>' in row


@pytest.mark.parametrize(
    "query, shown, hidden",
    [
        ("status=FAILED", "run-b", "run-a"),
        ("mode=AGENTIC", "run-b", "run-a"),
        ("workflowId=wf-two", "run-b", "run-a"),
        ("search=UN-B", "run-b", "run-a"),
        ("startedAfter=2031-01-01T00:00", "run-b", "run-a"),
        ("startedBefore=2031-01-01T00:00", "run-a", "run-b"),
    ],
)
def test_the_list_filters_with_the_api_filterset(ops, query, shown, hidden):
    WorkflowRunFactory(
        run_id="run-a", workflow_id="wf-one", status="SUCCESS", mode="DAG", started_at=timezone.now().replace(year=2030)
    )
    WorkflowRunFactory(
        run_id="run-b",
        workflow_id="wf-two",
        status="FAILED",
        mode="AGENTIC",
        started_at=timezone.now().replace(year=2032),
    )
    page = html(ops.get(f"/runs/?{query}"))
    assert f'id="run-{shown}"' in page and f'id="run-{hidden}"' not in page


def test_an_unknown_status_is_a_form_error_and_lists_nothing(ops, flyback):
    page = html(ops.get("/runs/?status=EXPLODED"))
    assert 'id="filter-errors"' in page and "EXPLODED" in page
    assert 'id="run-flyback1"' not in page


def test_the_list_is_paginated(ops):
    WorkflowRunFactory.create_batch(51)
    first = html(ops.get("/runs/"))
    assert first.count('class="run-link"') == 50 and "page=2" in first
    assert html(ops.get("/runs/?page=2")).count('class="run-link"') == 1


def test_the_list_costs_the_same_queries_for_many_runs(ops, django_assert_max_num_queries):
    for run in WorkflowRunFactory.create_batch(30):
        VisitFactory(run=run, status="FAILED")
    with django_assert_max_num_queries(8):
        assert html(ops.get("/runs/")).count('class="run-link"') == 30


def test_the_list_escapes_workflow_names(ops):
    WorkflowRunFactory(workflow_name=SCRIPT)
    page = html(ops.get("/runs/"))
    assert SCRIPT not in page and ESCAPED in page


# --- the run page ---------------------------------------------------------------------------


def test_the_picture_draws_the_flight_back_as_a_backtrack(ops, flyback):
    page = html(ops.get("/runs/flyback1/"))
    assert '<svg xmlns="http://www.w3.org/2000/svg" id="run-graph"' in page
    assert 'data-hop="G-&gt;C" data-kind="backtrack" data-count="1"' in page
    assert 'class="hop hop-backtrack"' in page
    assert 'data-hop="C-&gt;G" data-kind="edge" data-count="1"' in page
    assert 'data-node="C" data-visits="2"' in page


def test_a_hop_without_a_canvas_edge_is_a_dashed_jump(ops, record):
    rec = record(canvas("AB BC"), mode="AGENTIC", run_id="jumper")
    rec.visit("C", rec.visit("A"))
    page = html(ops.get("/runs/jumper/"))
    assert 'class="hop hop-jump" data-hop="A-&gt;C" data-kind="jump"' in page
    assert 'class="hop hop-idle" data-hop="A-&gt;B"' in page


def test_a_failed_node_is_marked_and_links_to_its_visit(ops, flagged):
    page = html(ops.get("/runs/flagged1/"))
    assert 'class="node node-FAILED node-has-failure"' in page and 'class="failed-mark"' in page
    assert f'<a href="{visit_url(flagged)}" class="node-link">' in page


def test_a_node_visited_twice_links_to_its_visits_in_the_timeline(ops, flyback):
    page = html(ops.get("/runs/flyback1/"))
    assert '<a href="/runs/flyback1/?nodeId=C#timeline" class="node-link">' in page


def test_an_unvisited_node_has_no_link(ops, record):
    record(TWO_BRANCHES, run_id="half").visit("A")
    page = html(ops.get("/runs/half/"))
    assert 'class="node node-unvisited" id="node-2" data-node="D" data-visits="0"' in page
    assert page.count('class="node-link"') == 1


def test_the_timeline_lists_visits_by_sort_order_with_parents_and_reasons(ops, flagged):
    rec_run = flagged.run
    page = html(ops.get(f"/runs/{rec_run.run_id}/"))
    row = page.split(f'id="visit-{flagged.visit_uuid}"')[1].split("</tr>")[0]
    assert "Failed" in row and "upstream said no" in row
    assert f'href="/patterns/{flagged.matched_pattern_id}/" class="pattern-link"' in row


def test_the_timeline_filters_by_node(ops, flyback):
    page = html(ops.get("/runs/flyback1/?nodeId=C"))
    assert page.count('class="visit-row') == 2
    assert f'id="visit-{flyback.by["G1"].visit_uuid}"' not in page


def test_the_run_page_escapes_node_names_and_failure_reasons(ops, record):
    graph = {"nodes": [{"id": "A", "name": SCRIPT}], "edges": []}
    rec = record(graph, run_id="escaper")
    rec.visit("A", status="FAILED", error=SCRIPT)
    page = html(ops.get("/runs/escaper/"))
    assert SCRIPT not in page and ESCAPED in page


def test_the_run_page_costs_the_same_queries_for_many_visits(ops, record, django_assert_max_num_queries):
    rec = record(canvas("AB BC CA"), mode="AGENTIC", run_id="busy")
    previous = rec.visit("A")
    for i in range(40):
        previous = rec.visit("BCA"[i % 3], previous)
    with django_assert_max_num_queries(10):
        assert html(ops.get("/runs/busy/")).count('class="visit-row') == 41


def test_the_run_page_links_to_the_admin_and_back(ops, superuser, flyback):
    run = flyback.run
    assert f'href="/admin/contextquery/workflowrun/{run.pk}/change/"' in html(ops.get("/runs/flyback1/"))
    ops.force_login(superuser)
    assert view_on_site(ops, f"/admin/contextquery/workflowrun/{run.pk}/change/") == "/runs/flyback1/"


# --- the visit page -------------------------------------------------------------------------


@pytest.fixture
def rich_visit(record):
    """B after A, with input, logs of every kind, a read and a live token."""
    rec = record(CHAIN, run_id="rich1")
    a = rec.visit("A")
    reg = recording.visit_register(
        run=rec.run, node_id="B", from_visit_uuids=[str(a.visit_uuid)], input={"prompt": "Summarise the sources"}
    )
    recording.logs_append(
        visit=reg.visit,
        logs=[
            {"type": "THINKING", "message": "Read A's output first."},
            {"type": "TOOL_CALL", "message": "get_node_output", "detail": {"node_id": "A"}},
            {"type": "TOOL_RESULT", "message": "get_node_output", "detail": "A said: three sources"},
            {
                "type": "TODO_UPDATE",
                "detail": [
                    {"text": "Read sources", "status": "completed"},
                    {"text": "Write summary", "status": "in_progress"},
                ],
            },
        ],
    )
    ContextRead.objects.create(
        visit=reg.visit,
        endpoint="output",
        node_id="A",
        status_code=200,
        bytes_returned=321,
        duration_ms=4.5,
        created_at=timezone.now(),
    )
    reg.visit.raw_token = reg.context_query["token"]
    return reg.visit


def test_the_visit_page_shows_thinking_tool_calls_todo_and_logs(ops, rich_visit):
    page = html(ops.get(visit_url(rich_visit)))
    thinking = page.split('id="thinking"')[1].split("</section>")[0]
    assert "Read A&#x27;s output first." in thinking
    calls = page.split('id="tool-call-table"')[1].split("</table>")[0]
    assert calls.count("<code>get_node_output</code>") == 2 and "A said: three sources" in calls
    assert "&quot;node_id&quot;: &quot;A&quot;" in calls
    todo = page.split('id="todo-list"')[1].split("</ul>")[0]
    assert "Write summary" in todo and 'class="todo-in_progress"' in todo
    assert page.split('id="log-table"')[1].count('<tr class="log-') == 4


def test_the_visit_page_shows_input_paths_reads_and_token_prefixes(ops, rich_visit):
    page = html(ops.get(visit_url(rich_visit)))
    assert "&quot;prompt&quot;: &quot;Summarise the sources&quot;" in page
    paths = page.split('id="paths"')[1].split("</section>")[0]
    assert "A#1</a>" in paths and "B#1</a>" in paths
    reads = page.split('id="read-table"')[1].split("</table>")[0]
    assert "<td>output</td>" in reads and "321" in reads
    stored = rich_visit.tokens.get()
    assert f"<code>{stored.token_hash[:8]}…</code>" in page and 'class="token-live"' in page
    assert stored.token_hash not in page and rich_visit.raw_token not in page


def test_the_visit_page_marks_a_backtrack_on_its_path(ops, flyback):
    page = html(ops.get(visit_url(flyback.by["C2"])))
    paths = page.split('id="paths"')[1].split("</section>")[0]
    assert 'class="path has-backtrack"' in paths and 'class="arrow-back"' in paths


def test_the_visit_page_links_the_failure_to_its_pattern(ops, flagged, marker):
    page = html(ops.get(visit_url(flagged)))
    assert f'<a href="/patterns/{marker.pk}/" id="matched-pattern">Zebra fault</a>' in page
    assert 'id="mark-false-positive"' in page


@pytest.mark.parametrize(("language", "label"), [("en", "Rate limit"), ("zh-Hans", "限流")])
def test_the_visit_page_shows_the_category_label_not_its_slug(ops, record, language, label):
    PatternFactory(pattern="slow-down marker", category="rate_limit", retryable=True, priority=1)
    visit = record(CHAIN).visit("A", final_text="slow-down marker: try later")
    page = html(ops.get(visit_url(visit), HTTP_ACCEPT_LANGUAGE=language))
    assert f'<span id="failure-category">{label}</span>' in page and "rate_limit" not in page


def test_the_visit_page_offers_no_mark_on_a_visit_failed_otherwise(ops, record):
    visit = record(CHAIN).visit("A", status="FAILED", error="CRM answered 503")
    page = html(ops.get(visit_url(visit)))
    assert "CRM answered 503" in page and 'id="mark-false-positive"' not in page


def test_the_visit_page_escapes_outputs_logs_and_replies(ops, record):
    rec = record(CHAIN, run_id="escaped2")
    visit = rec.visit("A", complete=False)
    recording.logs_append(
        visit=visit,
        logs=[
            {"type": "THINKING", "message": SCRIPT},
            {"type": "TOOL_CALL", "message": SCRIPT, "detail": {"q": SCRIPT}},
        ],
    )
    judgement.visit_complete(
        visit=visit,
        status="SUCCESS",
        output={"status": 200, "message": SCRIPT, "data": {"html": SCRIPT}},
        final_text=SCRIPT,
    )
    page = html(ops.get(visit_url(visit)))
    assert SCRIPT not in page and "<script" not in page.lower()


def test_a_megabyte_output_is_cut_on_the_page_and_whole_in_the_download(ops, record):
    rec = record(CHAIN, run_id="bigone")
    big = {"status": 200, "message": "ok", "data": {"rows": ["x" * 1000 for _ in range(1100)]}}
    visit = rec.visit("A", output=big)
    page = html(ops.get(visit_url(visit)))
    assert len(page) < 400_000
    output = page.split('id="output"')[1].split("</section>")[0]
    assert '<details class="big" id="output-json">' in output and 'class="muted cut-note"' in output
    download = ops.get(reverse("contextquery:visit-output", args=["bigone", visit.visit_uuid]))
    assert download.status_code == 200 and download["Content-Type"].startswith("application/json")
    assert "attachment" in download["Content-Disposition"]
    assert json.loads(download.content) == big


def test_a_small_output_is_shown_open(ops, flyback):
    page = html(ops.get(visit_url(flyback.by["A1"])))
    output = page.split('id="output"')[1].split("</section>")[0]
    assert '<pre id="output-json">' in output and "<details" not in output


def test_the_visit_page_costs_the_same_queries_for_many_logs(ops, rich_visit, django_assert_max_num_queries):
    for _ in range(60):
        VisitLogFactory(visit=rich_visit)
    # session, user, run, visit; the log page and its count; the first thoughts, the first
    # tool calls, the last todo list; the run's visits for the paths and those on them;
    # tokens, reads, the judged reply; the neighbours and the node's other visits;
    # its business tool calls: 16, however many logs.
    with django_assert_max_num_queries(16):
        ops.get(visit_url(rich_visit))


def test_the_visit_page_links_to_the_admin_and_the_admin_back(ops, superuser, flagged):
    assert f'href="/admin/contextquery/visit/{flagged.pk}/change/"' in html(ops.get(visit_url(flagged)))
    ops.force_login(superuser)
    assert view_on_site(ops, f"/admin/contextquery/visit/{flagged.pk}/change/") == visit_url(flagged)


# --- false positives ------------------------------------------------------------------------


def mark_url(visit):
    return reverse("contextquery:visit-false-positive", args=[visit.run.run_id, visit.visit_uuid])


def test_marking_a_false_positive_records_who_when_and_the_note(ops, staff_user, flagged):
    response = ops.post(mark_url(flagged), {"action": "mark", "note": "It quoted a <b>log</b>."})
    assert response.status_code == 302 and response["Location"].endswith("#verdict")
    stored = JudgedReply.objects.get(subject=flagged.visit_uuid)
    assert stored.marked_by == staff_user and stored.mark_note == "It quoted a <b>log</b>."
    page = html(ops.get(visit_url(flagged)))
    assert 'id="unmark-false-positive"' in page and "It quoted a &lt;b&gt;log&lt;/b&gt;." in page
    assert staff_user.username in page.split('class="false-positive-mark"')[1]


def test_unmarking_takes_the_mark_back(ops, staff_user, flagged):
    ops.post(mark_url(flagged), {"action": "mark", "note": "x"})
    ops.post(mark_url(flagged), {"action": "unmark"})
    assert JudgedReply.objects.get(subject=flagged.visit_uuid).mark == ""


def test_marking_a_successful_visit_is_refused_with_a_message(ops, record):
    visit = record(CHAIN).visit("A", final_text="Fine.")
    response = ops.post(mark_url(visit), {"action": "mark", "note": ""}, follow=True)
    assert "only a pattern" in response.content.decode()
    assert JudgedReply.objects.get(subject=visit.visit_uuid).mark == ""


def test_marking_needs_the_csrf_token(staff_user, flagged):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    assert client.post(mark_url(flagged), {"action": "mark"}).status_code == 403
    assert JudgedReply.objects.get(subject=flagged.visit_uuid).mark == ""


def test_a_non_staff_user_cannot_mark(client, user, flagged):
    client.force_login(user)
    assert client.post(mark_url(flagged), {"action": "mark"}).status_code == 403
    assert JudgedReply.objects.get(subject=flagged.visit_uuid).mark == ""


def test_marking_is_post_only(ops, flagged):
    assert ops.get(mark_url(flagged)).status_code == 405


# --- the pattern side -----------------------------------------------------------------------


def test_the_pattern_page_counts_false_positives_next_to_hits(ops, flagged, marker):
    ops.post(mark_url(flagged), {"action": "mark", "note": "wrong"})
    page = html(ops.get(f"/patterns/{marker.pk}/"))
    assert '<span id="false-positive-count">1</span>' in page
    assert f'href="/runs/matched/{marker.pk}/" id="pattern-hit-visits">' in page
    assert f'href="/runs/matched/{marker.pk}/?falsePositive=true" id="pattern-false-positives"' in page


def test_the_lists_of_a_patterns_visits_link_back_to_the_visits(ops, record, marker):
    rec = record(CHAIN)
    first = rec.visit("A", final_text=f"{MARKER} one")
    second = rec.visit("B", first, final_text=f"{MARKER} two")
    ops.post(mark_url(second), {"action": "mark", "note": "wrong"})
    every = html(ops.get(f"/runs/matched/{marker.pk}/"))
    assert f'href="{visit_url(first)}"' in every and f'href="{visit_url(second)}"' in every
    marked = html(ops.get(f"/runs/matched/{marker.pk}/?falsePositive=true"))
    assert f'href="{visit_url(second)}"' in marked and f'href="{visit_url(first)}"' not in marked


def test_a_draft_is_tried_from_the_form_without_saving(ops, record):
    good = record(CHAIN).visit("A", final_text="The quarterly sources agree.")
    form = {
        "name": "Draft",
        "pattern": "sources agree",
        "description": "",
        "category": "other",
        "priority": 100,
        "enabled": "on",
        "scope": "anywhere",
        "trial": "",
    }
    page = html(ops.post("/patterns/trial/", form))
    trial = page.split('id="draft-trial"')[1].split("</section>")[0]
    assert "1 would now fail" in trial and f'href="{visit_url(good)}"' in trial
    assert 'action="/patterns/new/"' in page and "sources agree</textarea>" in page
    assert not HermesErrorPattern.objects.filter(name="Draft").exists()


def test_an_edited_pattern_lists_the_replies_it_would_no_longer_fail(ops, flagged, marker):
    form = {
        "name": marker.name,
        "pattern": "zebra-crossing outage",
        "description": "",
        "category": "other",
        "priority": 1,
        "enabled": "on",
    }
    page = html(ops.post(f"/patterns/{marker.pk}/trial/", form))
    gone = page.split('id="trial-no-longer-failing"')[1].split("</table>")[0]
    assert f'href="{visit_url(flagged)}"' in gone
    marker.refresh_from_db()
    assert marker.pattern == MARKER


def test_a_draft_that_does_not_compile_shows_the_form_error(ops):
    form = {"name": "Bad", "pattern": "regex:(unclosed", "category": "other", "priority": 100}
    page = html(ops.post("/patterns/trial/", form))
    assert "does not compile" in page and 'id="draft-trial"' not in page


def test_a_draft_is_tried_without_a_name_or_any_other_field(ops, record):
    # With no scope given the draft has the default, error: the reply is the phrase.
    record(CHAIN).visit("A", final_text="Sources agree.")
    response = ops.post("/patterns/trial/", {"pattern": "sources agree", "trial": ""})
    page = html(response)
    assert 'id="draft-trial"' in page and "1 would now fail" in page
    assert "This field is required." not in page and not response.context["form"].errors


def test_an_empty_draft_is_refused_on_the_pattern_field_alone(ops):
    response = ops.post("/patterns/trial/", {"name": "", "pattern": "", "trial": ""})
    assert list(response.context["form"].errors) == ["pattern"]
    assert 'id="draft-trial"' not in html(response)


def test_the_pattern_form_offers_the_trial_button(ops, marker):
    page = html(ops.get(f"/patterns/{marker.pk}/edit/"))
    assert f'formaction="/patterns/{marker.pk}/trial/"' in page


# --- language -------------------------------------------------------------------------------


def test_the_pages_speak_simplified_chinese(ops, flagged):
    ops.post("/i18n/setlang/", {"language": "zh-hans", "next": "/runs/"})
    assert "运行" in html(ops.get("/runs/"))
    page = html(ops.get(visit_url(flagged)))
    assert "误报" in page and "思考" in page


def test_an_expired_token_is_shown_as_expired(ops, rich_visit):
    rich_visit.tokens.update(expires_at=timezone.now() - timedelta(seconds=1))
    page = html(ops.get(visit_url(rich_visit)))
    assert 'class="token-expired"' in page and 'class="token-live"' not in page


def test_huge_logs_are_cut_so_the_page_stays_small(ops, rich_visit):
    for _ in range(40):
        VisitLogFactory(visit=rich_visit, type="TOOL_RESULT", message="fetch", detail="y" * 100_000)
    VisitLogFactory(visit=rich_visit, message="z" * 1_000_000)
    page = html(ops.get(visit_url(rich_visit)))
    assert len(page) < 1_000_000 and "Only the first 5,000 characters are shown here." in page


# --- hostile ids in links and file names (issue 12) ---------------------------------------


def test_a_node_id_with_url_characters_is_encoded_in_the_graphs_links(ops, record):
    node = "X&status=FAILED #1"
    rec = record({"nodes": [{"id": node}], "edges": []}, run_id="odd-ids")
    first = rec.visit(node)
    rec.visit(node, first)
    page = html(ops.get("/runs/odd-ids/"))
    assert "?nodeId=X%26status%3DFAILED+%231#timeline" in page
    filtered = html(ops.get("/runs/odd-ids/?nodeId=X%26status%3DFAILED+%231"))
    assert filtered.count('class="visit-row ') == 2


def test_the_output_download_of_a_non_ascii_node_keeps_the_attachment(ops, record):
    visit = record({"nodes": [{"id": "节点/一"}], "edges": []}, run_id="zh-node").visit("节点/一")
    disposition = ops.get(reverse("contextquery:visit-output", args=["zh-node", visit.visit_uuid]))[
        "Content-Disposition"
    ]
    assert disposition.startswith("attachment;")
    assert "filename*=utf-8''zh-node-%E8%8A%82%E7%82%B9_%E4%B8%80-1-output.json" in disposition


# --- live pages, stale runs, visits across runs (SPEC §8) ------------------------------------


@pytest.fixture
def live_run(record):
    """A RUNNING run: A done, B RUNNING."""
    rec = record(CHAIN, run_id="live1")
    rec.visit("B", rec.visit("A"), complete=False)
    return rec


def test_a_running_runs_page_polls_its_live_view_and_refreshes_without_javascript(ops, live_run):
    page = html(ops.get("/runs/live1/"))
    assert 'data-live-url="/runs/live1/live.json"' in page
    assert '<noscript><meta http-equiv="refresh" content="15"></noscript>' in page
    assert "hermes/live.js" in page
    row = page.split(f'id="visit-{live_run.by["B1"].visit_uuid}"')[1].split("</tr>")[0]
    assert 'class="seen"' in row and "second" in row


def test_a_finished_runs_page_does_not_refresh(ops, flyback):
    recording.run_finish(run=flyback.run, status="SUCCESS")
    page = html(ops.get("/runs/flyback1/"))
    assert "data-live-url" not in page and "http-equiv" not in page


def test_the_live_view_changes_its_fingerprint_when_a_log_arrives(ops, live_run):
    first = ops.get("/runs/live1/live.json").json()["data"]
    assert first["live"] is True and first["status"] == "RUNNING"
    assert [v["nodeId"] for v in first["visits"]] == ["A", "B"]
    recording.logs_append(visit=live_run.by["B1"], logs=[{"type": "TEXT", "message": "step 2"}])
    second = ops.get("/runs/live1/live.json").json()["data"]
    assert second["fingerprint"] != first["fingerprint"]
    assert second["visits"][1]["logCount"] == first["visits"][1]["logCount"] + 1


def test_the_live_view_of_a_finished_run_says_it_is_no_longer_live(ops, live_run):
    recording.run_finish(run=live_run.run, status="CANCELLED")
    body = ops.get("/runs/live1/live.json").json()
    assert body["code"] == 200 and body["data"]["live"] is False and body["data"]["status"] == "CANCELLED"


def test_a_running_visits_page_polls_its_live_view(ops, live_run):
    visit = live_run.by["B1"]
    page = html(ops.get(visit_url(visit)))
    assert f'data-live-url="/runs/live1/visits/{visit.visit_uuid}/live.json"' in page
    assert 'id="visit-last-seen"' in page
    before = ops.get(f"/runs/live1/visits/{visit.visit_uuid}/live.json").json()["data"]
    recording.logs_append(visit=visit, logs=[{"type": "THINKING", "message": "hmm"}])
    after = ops.get(f"/runs/live1/visits/{visit.visit_uuid}/live.json").json()["data"]
    assert (before["live"], after["logCount"]) == (True, before["logCount"] + 1)
    assert after["fingerprint"] != before["fingerprint"]


def test_the_live_views_are_for_staff_only(client, user, live_run):
    assert client.get("/runs/live1/live.json").status_code == 302
    client.force_login(user)
    assert client.get("/runs/live1/live.json").status_code == 403


def test_the_run_list_marks_a_stale_run(ops, live_run, clock):
    clock.advance(31 * 60)
    page = html(ops.get("/runs/"))
    row = page.split('id="run-live1"')[1].split("</tr>")[0]
    assert 'class="tag stale"' in row
    assert 'id="run-live1"' in html(ops.get("/runs/?stale=true"))
    assert 'id="run-live1"' not in html(ops.get("/runs/?stale=false"))
    assert 'class="stale-note"' in html(ops.get("/runs/live1/"))


def test_the_visit_list_filters_failed_visits_by_category_across_runs(ops, flagged, flyback):
    page = html(ops.get("/visits/?status=FAILED&category=other"))
    assert f'id="visit-{flagged.visit_uuid}"' in page
    assert page.count('<tr id="visit-') == 1
    assert html(ops.get("/visits/?status=FAILED&category=quota")).count('<tr id="visit-') == 0
    assert html(ops.get("/visits/?nodeId=C")).count('<tr id="visit-') == 2


def test_the_visit_list_filters_by_pattern_and_false_positive_mark(ops, flagged, staff_user):
    pattern = flagged.matched_pattern_id
    assert html(ops.get(f"/visits/?patternId={pattern}&falsePositive=true")).count('<tr id="visit-') == 0
    marks_page = html(ops.get(f"/visits/?patternId={pattern}"))
    assert 'id="filter-pattern"' in marks_page and marks_page.count('<tr id="visit-') == 1
    JudgedReply.objects.filter(subject=flagged.visit_uuid).update(mark="false_positive")
    assert html(ops.get(f"/visits/?patternId={pattern}&falsePositive=true")).count('<tr id="visit-') == 1


def test_the_visit_list_filters_by_end_time_with_an_exclusive_end(ops, flagged):
    ended = flagged.ended_at.replace(second=0, microsecond=0)
    start, end = ended.strftime("%Y-%m-%dT%H:%M"), (ended + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")
    assert html(ops.get(f"/visits/?endedAfter={start}&endedBefore={end}")).count('<tr id="visit-') == 1
    assert html(ops.get(f"/visits/?endedAfter={end}")).count('<tr id="visit-') == 0
    assert html(ops.get(f"/visits/?endedBefore={start}")).count('<tr id="visit-') == 0


def test_a_bad_filter_value_on_the_visit_list_is_a_form_error(ops, flagged):
    page = html(ops.get("/visits/?category=weather&falsePositive=perhaps"))
    assert 'id="filter-errors"' in page and page.count('<tr id="visit-') == 0


# --- navigation and the matched text (issue 13) -------------------------------------------


def test_a_failed_visit_links_to_its_retry_and_back(ops, record, marker):
    rec = record(CHAIN, run_id="retry1")
    a = rec.visit("A")
    failed = rec.visit("B", a, final_text=f"{MARKER}: upstream said no")
    retry = rec.visit("B", a, final_text="All good now.")
    first = html(ops.get(visit_url(failed)))
    nav = first.split('id="node-visits"')[1].split("</span>")[0]
    assert f'href="{visit_url(retry)}"' in nav and "#2" in nav
    back = html(ops.get(visit_url(retry))).split('id="node-visits"')[1].split("</span>")[0]
    assert f'href="{visit_url(failed)}"' in back


def test_a_visit_links_to_the_previous_and_next_visit_of_its_run(ops, flyback):
    page = html(ops.get(visit_url(flyback.by["C1"])))
    assert (
        'id="previous-visit" rel="prev"' in page
        and visit_url(flyback.by["B1"]) in page.split('id="previous-visit"')[0][-200:]
    )
    assert visit_url(flyback.by["G1"]) in page.split('id="next-visit"')[0][-200:]
    first = html(ops.get(visit_url(flyback.by["A1"])))
    assert 'id="previous-visit"' not in first and 'id="next-visit"' in first


def test_the_matched_text_is_marked_in_the_reply(ops, flagged):
    page = html(ops.get(visit_url(flagged)))
    reply = page.split('<pre id="final-text">')[1].split("</pre>")[0]
    assert f'<mark id="reply-match">{MARKER}</mark>: upstream said no' in reply


def test_an_empty_section_takes_one_line(ops, record):
    page = html(ops.get(visit_url(record(CHAIN).visit("A"))))
    assert '<section id="thinking" data-live-region class="empty">' in page
    assert '<section id="reads" data-live-region class="empty">' in page


def test_the_run_list_sorts_by_a_column_and_shows_durations(ops, record):
    short, long = record(CHAIN, run_id="short1"), record(CHAIN, run_id="long1")
    for rec in (short, long):
        rec.visit("A")
        recording.run_finish(run=rec.run, status="SUCCESS")
    WorkflowRun.objects.filter(run_id="long1").update(finished_at=F("started_at") + timedelta(minutes=3, seconds=5))
    WorkflowRun.objects.filter(run_id="short1").update(finished_at=F("started_at") + timedelta(seconds=4))
    page = html(ops.get("/runs/?sort=-duration"))
    assert page.index('id="run-long1"') < page.index('id="run-short1"')
    assert "3 min 05 s" in page and "4.0 s" in page
    assert 'aria-sort="descending"' in page and "sort=duration" in page  # the header now sorts the other way
    ascending = html(ops.get("/runs/?sort=duration"))
    assert ascending.index('id="run-short1"') < ascending.index('id="run-long1"')


def test_the_runs_api_sorts_too_and_says_duration_and_failed_visits(staff_client, record):
    rec = record(CHAIN, run_id="api-sort")
    rec.visit("A", status="FAILED", error="boom")
    recording.run_finish(run=rec.run, status="FAILED")
    rows = staff_client.get("/api/runs", {"sort": "-failed"}).json()["data"]["results"]
    assert rows[0]["runId"] == "api-sort" and rows[0]["failedVisitCount"] == 1
    assert isinstance(rows[0]["durationSeconds"], float)
    assert staff_client.get("/api/runs", {"sort": "weather"}).status_code == 422


def test_the_run_pages_visit_durations_read_like_the_run_lists_in_both_languages(ops, record):
    rec = record(CHAIN, run_id="durations1")
    visit = rec.visit("A")
    Visit.objects.filter(pk=visit.pk).update(ended_at=F("started_at") + timedelta(milliseconds=250))
    page = html(ops.get("/runs/durations1/"))
    cell = re.search(rf'id="visit-{visit.visit_uuid}".*?<td class="num duration">(.*?)</td>', page, re.S)
    assert cell and cell.group(1).strip() == "250 ms", cell and cell.group(1)
    chinese = html(ops.get("/runs/durations1/", HTTP_ACCEPT_LANGUAGE="zh-hans"))
    assert "250 毫秒" in chinese and "0.25 s" not in chinese
    visit_page = html(ops.get(f"/runs/durations1/visits/{visit.visit_uuid}/", HTTP_ACCEPT_LANGUAGE="zh-hans"))
    assert "(250 毫秒)" in visit_page


def test_a_visit_without_output_yet_says_so_on_one_line(ops, record):
    running = record(CHAIN).visit("A", complete=False)
    page = html(ops.get(visit_url(running)))
    assert '<section id="output" data-live-region class="empty">' in page
    assert "No output recorded yet." in page


def test_the_run_page_shows_no_failure_reason_column_until_some_visit_has_one(ops, record):
    rec = record(CHAIN, run_id="allgood1")
    rec.visit("A")
    assert "Failure reason" not in html(ops.get("/runs/allgood1/")).split('id="visit-table"')[1]
    rec.visit("B", rec.by["A1"], status="FAILED", final_text="boom")
    assert "Failure reason" in html(ops.get("/runs/allgood1/")).split('id="visit-table"')[1]
