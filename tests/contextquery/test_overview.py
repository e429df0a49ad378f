"""The overview at ``/`` (SPEC §8) through Django's test client: access, each
panel's figures over 24 hours and 7 days, every number opening a list that
shows as many rows, and one query per panel."""

import re
from datetime import timedelta
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from contextquery import overview, recording
from contextquery.models import ToolBinding, ToolCall, Visit
from patterns import marks
from tests.contextquery.factories import CHAIN
from tests.factories import PatternFactory

pytestmark = pytest.mark.django_db

MARKER = "quokka quota trouble"


@pytest.fixture
def history(record, clock, staff_user):
    """Three days ago: an "etl" run whose A failed by the marker pattern. Two hours
    ago: an "etl" run with B failed by the pattern twice (one marked a false
    positive) and finished FAILED; a "report" run whose A the agent failed
    (category incomplete), retried and succeeded; one "report" run RUNNING."""
    pattern = PatternFactory(name="Quokka quota", pattern=MARKER, category="quota", priority=1)
    now = clock.now
    clock.advance(-3 * 24 * 3600)
    old = record(CHAIN, run_id="old1", workflow_id="etl", workflow_name="ETL")
    old.visit("A", final_text=f"{MARKER}: give up")
    recording.run_finish(run=old.run, status="FAILED")
    clock.now = now - timedelta(hours=2)
    etl = record(CHAIN, run_id="etl1", workflow_id="etl", workflow_name="ETL")
    a = etl.visit("A")
    b1 = etl.visit("B", a, final_text=f"{MARKER}: first")
    etl.visit("B", a, final_text=f"{MARKER}: second")
    marks.reply_mark_false_positive(subject=b1.visit_uuid, user=staff_user, note="a good answer")
    recording.run_finish(run=etl.run, status="FAILED")
    report = record(CHAIN, run_id="rep1", workflow_id="report", workflow_name="Report")
    report.visit("A", final_text="half done", agent_result={"completed": False})
    report.visit("A", final_text="done")
    recording.run_finish(run=report.run, status="SUCCESS")
    record(CHAIN, run_id="rep2", workflow_id="report", workflow_name="Report").visit("A", complete=False)
    clock.now = now
    return pattern


def rows_listed(client, href) -> int:
    """How many rows the list at ``href`` shows (runs or visits)."""
    page = client.get(unescape(href)).content.decode()
    return len(re.findall(r'<tr id="(?:run|visit)-', page))


def test_an_anonymous_visitor_is_sent_to_log_in(client):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/?next=/"


def test_a_non_staff_user_is_refused(client, user):
    client.force_login(user)
    assert client.get("/").status_code == 403


def test_logging_in_leads_to_the_overview(client, staff_user):
    response = client.post("/accounts/login/", {"username": staff_user.username, "password": "pass-word-123"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_the_layout_links_to_the_overview(ops):
    page = ops.get("/runs/").content.decode()
    assert '<a href="/" id="nav-overview">' in page


def test_runs_started_in_the_last_24_hours_by_status(history):
    runs = overview.overview_runs(window=overview.window_get(key="24h"))
    assert runs["started"]["count"] == 3
    assert {r["status"]: r["count"] for r in runs["by_status"]} == {
        "RUNNING": 1,
        "SUCCESS": 1,
        "FAILED": 1,
        "CANCELLED": 0,
    }
    # rep2 has been silent for two hours: running, and stale.
    assert runs["running"]["count"] == 1 and runs["stale"]["count"] == 1


def test_seven_days_take_in_the_older_run(history):
    runs = overview.overview_runs(window=overview.window_get(key="7d"))
    assert {r["status"]: r["count"] for r in runs["by_status"]}["FAILED"] == 2


def test_an_unknown_window_is_the_last_24_hours():
    assert overview.window_get(key="1y").key == "24h"


def test_the_window_ends_with_the_bucket_holding_now(clock):
    window = overview.window_get(key="7d")
    assert window.start <= clock.now - timedelta(days=7) < window.start + timedelta(hours=6)
    assert window.end - timedelta(hours=6) <= clock.now < window.end
    assert len(window.buckets()) == 29 and window.start.hour % 6 == 0


def test_failed_visits_are_counted_by_category_in_their_hour(history, clock):
    window = overview.window_get(key="24h")
    failures = overview.overview_failures(window=window)
    assert {c["category"]: c["count"] for c in failures["categories"]} == {"quota": 2, "incomplete": 1}
    assert failures["total"]["count"] == 3
    filled = [bar for bar in failures["chart"].bars if bar.segments]
    assert len(filled) == 1 and filled[0].start <= clock.now - timedelta(hours=2) < filled[0].end
    assert filled[0].total == 3


def test_the_patterns_that_fired_most_carry_their_false_positives(history):
    (row,) = overview.overview_patterns(window=overview.window_get(key="24h"))
    assert (row["name"], row["hits"], row["false_positives"]) == ("Quokka quota", 2, 1)
    assert row["href"] == f"/patterns/{history.pk}/"
    (older,) = overview.overview_patterns(window=overview.window_get(key="7d"))
    assert older["hits"] == 3


def test_the_nodes_that_fail_most_come_first(history):
    rows = overview.overview_nodes(window=overview.window_get(key="24h"))
    assert [(r["workflow_id"], r["node_id"], r["failed"], r["visits"]) for r in rows] == [
        ("etl", "B", 2, 2),
        ("report", "A", 1, 2),
    ]


def test_the_workflows_that_fail_most_count_failed_runs_and_runs_with_failures(history):
    rows = overview.overview_workflows(window=overview.window_get(key="24h"))
    assert [(r["workflow_id"], r["failed_runs"], r["with_failed_visits"], r["runs"]) for r in rows] == [
        ("etl", 1, 1, 1),
        ("report", 0, 1, 2),
    ]


def test_the_approvals_panel_counts_pending_tool_calls_and_links_to_the_approvals_page(ops, history):
    visit = Visit.objects.first()
    binding = ToolBinding.objects.create(
        name="refund_issue", endpoint="http://127.0.0.1:9/refunds", kind="write", approval="required"
    )
    for _ in range(2):
        ToolCall.objects.create(
            visit=visit,
            binding=binding,
            tool_name=binding.name,
            kind="write",
            status="PENDING_APPROVAL",
            requested_at=timezone.now(),
        )
    page = ops.get("/").content.decode()
    panel = page.split('id="panel-approvals"')[1].split("</section>")[0]
    assert 'href="/tools/approvals/"' in panel and '<span class="stat-value">2</span>' in panel


@pytest.mark.parametrize("window", ["24h", "7d"])
def test_every_number_opens_a_list_of_as_many_rows(ops, history, window):
    chosen = overview.window_get(key=window)
    runs = overview.overview_runs(window=chosen)
    failures = overview.overview_failures(window=chosen)
    figures = [runs["started"], *runs["by_status"], runs["running"], runs["stale"], failures["total"]]
    figures += failures["categories"]
    figures += [{"count": s.count, "href": s.href} for bar in failures["chart"].bars for s in bar.segments]
    for row in overview.overview_patterns(window=chosen):
        figures += [
            {"count": row["hits"], "href": row["hits_href"]},
            {"count": row["false_positives"], "href": row["false_positives_href"]},
        ]
    for row in overview.overview_nodes(window=chosen):
        figures += [
            {"count": row["failed"], "href": row["failed_href"]},
            {"count": row["visits"], "href": row["visits_href"]},
        ]
    for row in overview.overview_workflows(window=chosen):
        figures += [
            {"count": row[key], "href": row[f"{key}_href"]} for key in ("runs", "failed_runs", "with_failed_visits")
        ]
    assert len(figures) > 15
    for figure in figures:
        assert rows_listed(ops, figure["href"]) == figure["count"], figure["href"]


def test_the_page_shows_the_figures_with_their_links(ops, history):
    page = ops.get("/?window=7d").content.decode()
    assert 'data-window="7d" aria-current="page"' in page
    assert re.search(r'id="runs-failed" href="[^"]+"><span class="stat-value status-FAILED">2</span>', page)
    assert re.search(
        r'<a href="/visits/\?[^"]*category=quota[^"]*" class="category-link" data-category="quota">3</a>', page
    )
    assert 'class="segment" data-category="quota"' in page
    assert "Quokka quota" in page


def test_each_panel_is_one_query_whatever_the_number_of_rows(ops, history, record):
    for i in range(5):
        rec = record(CHAIN, run_id=f"more{i}", workflow_id=f"wf{i}")
        rec.visit("A", final_text=f"{MARKER} {i}")
    with CaptureQueriesContext(connection) as captured:
        assert ops.get("/").status_code == 200
    names = [
        "the session",  # django.contrib.sessions
        "the user",  # django.contrib.auth
        "runs by status, running and stale now",  # overview_runs: one aggregate
        "failed visits by hour and category",  # overview_failures: one GROUP BY
        "patterns with hits and false positives",  # overview_patterns: one GROUP BY with EXISTS
        "nodes that fail most",  # overview_nodes: one GROUP BY
        "workflows that fail most",  # overview_workflows: one GROUP BY with EXISTS
        "tool calls waiting for approval",  # overview_approvals: one COUNT
    ]
    assert len(captured.captured_queries) == len(names), [q["sql"][:120] for q in captured.captured_queries]


def test_the_page_says_when_it_shows_another_window_than_the_one_asked_for(ops):
    page = ops.get("/?window=3d").content.decode()
    assert 'id="window-error"' in page and "“3d” is not one of 24h, 7d" in page
    chinese = ops.get("/?window=3d", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "“3d”不是 24h, 7d 之一" in chinese
    assert 'id="window-error"' not in ops.get("/?window=7d").content.decode()
