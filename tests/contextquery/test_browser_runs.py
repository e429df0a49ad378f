"""The run inspection pages in headless Chromium against a live server, on the
data ``manage.py loaddemo`` records (SPEC §4.6, issue 6): list filters and
search, the AGENTIC flight back drawn as a backtrack, failed node → pattern →
visit, a false-positive mark on the pattern page, a draft tried against
recorded replies, thinking / tool calls / todo list, a 1 MB output, and the
Chinese pages."""

import os
import re
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from contextquery import judgement, recording
from contextquery.management.commands.loaddemo import demo_engine
from contextquery.models import Visit, WorkflowRun
from patterns.models import HermesErrorPattern
from patterns.seeding import seed_builtins
from tests.browser import log_in, new_page, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(live_server):
    """Built-ins seeded and the demo runs recorded by ``manage.py loaddemo``."""
    seed_builtins()
    call_command("loaddemo", stdout=open(os.devnull, "w"))
    return live_server


@pytest.fixture
def ops(browser, demo):
    """A staff user logged in through the login page, on /runs/."""
    context, page = new_page(browser)
    log_in(page, base_url=demo.url, path="/runs/")
    page.base = demo.url
    yield page
    context.close()


def run_named(name) -> WorkflowRun:
    return WorkflowRun.objects.get(workflow_name=name)


def test_the_run_list_filters_by_mode_and_searches_by_run_id(ops):
    expect(ops.locator("#run-table .run-link")).to_have_count(5)
    ops.select_option("select[name=mode]", "AGENTIC")
    ops.click("#run-filters button[type=submit]")
    expect(ops.locator("#run-table .run-link")).to_have_count(2)
    expect(ops.locator("#run-table")).to_contain_text("Bug-fix planner")
    shot(ops, "runs-list-agentic")

    translate = run_named("Translate release notes")
    ops.goto(f"{ops.base}/runs/")
    ops.fill("input[name=search]", translate.run_id)
    ops.click("#run-filters button[type=submit]")
    expect(ops.locator("#run-table .run-link")).to_have_count(1)
    expect(ops.locator(f"#run-{translate.run_id} td.num.bad")).to_have_text("1")

    ops.goto(f"{ops.base}/runs/")
    ops.select_option("select[name=status]", "RUNNING")
    ops.click("#run-filters button[type=submit]")
    expect(ops.locator("#run-table .run-link")).to_have_count(1)
    expect(ops.locator("#run-table")).to_contain_text("Bug-fix planner (live)")


def test_the_agentic_runs_picture_shows_the_hop_from_g_to_c_as_a_backtrack(ops):
    run = run_named("Bug-fix planner")
    ops.click(f"#run-{run.run_id} .run-link")
    expect(ops.locator("#run-graph")).to_be_visible()
    hop = ops.locator('#run-graph [data-hop="G->C"]')
    expect(hop).to_have_attribute("data-kind", "backtrack")
    expect(hop).to_have_class(re.compile(r"\bhop-backtrack\b"))
    # Highlighted: drawn thicker and in the backtrack colour, unlike a plain edge.
    stroke = hop.locator("path").evaluate("p => getComputedStyle(p).stroke")
    edge_stroke = ops.locator('#run-graph [data-hop="C->G"] path').evaluate("p => getComputedStyle(p).stroke")
    assert stroke != edge_stroke
    expect(ops.locator('#run-graph [data-node="C"]')).to_have_attribute("data-visits", "2")
    expect(ops.locator("#backtracks")).to_contain_text("G->C")
    expect(ops.locator("#visit-table .visit-row")).to_have_count(5)
    shot(ops, "run-agentic-flyback")


def test_a_repeated_edge_is_counted_in_the_edge_colour_not_the_backtrack_colour(ops):
    run = run_named("Translate release notes")
    ops.goto(f"{ops.base}/runs/{run.run_id}/")
    hop = ops.locator('#run-graph [data-hop="A->B"]')
    expect(hop.locator("text.hop-label")).to_have_text("×2")
    label_fill = hop.locator("text.hop-label").evaluate("t => getComputedStyle(t).fill")
    assert label_fill == hop.locator("path").evaluate("p => getComputedStyle(p).stroke")
    shot(ops, "run-rate-limited")


def test_the_skip_runs_hop_from_a_to_c_goes_over_b(ops):
    run = run_named("Customer enrichment")
    ops.goto(f"{ops.base}/runs/{run.run_id}/")
    hop = ops.locator('#run-graph [data-hop="A->C"] path').bounding_box()
    node_b = ops.locator('#run-graph [data-node="B"] rect').bounding_box()
    assert hop["y"] + 1 < node_b["y"]  # the hop's highest point is above B's box
    crossing = ops.locator('#run-graph [data-hop="A->C"] path').evaluate(
        """(path, box) => {
            const length = path.getTotalLength();
            for (let i = 0; i <= 200; i++) {
                const p = path.getPointAtLength(length * i / 200);
                if (p.x >= box.x && p.x <= box.x + box.width && p.y >= box.y && p.y <= box.y + box.height) return true;
            }
            return false;
        }""",
        ops.locator('#run-graph [data-node="B"] rect').evaluate(
            "r => ({x: r.x.baseVal.value, y: r.y.baseVal.value, width: r.width.baseVal.value,"
            " height: r.height.baseVal.value})"
        ),
    )
    assert crossing is False
    shot(ops, "run-skipped-failure")


def test_a_failed_node_links_to_its_pattern_and_the_pattern_back_to_the_visit(ops):
    run = run_named("Translate release notes")
    failed = Visit.objects.get(run=run, status="FAILED")
    ops.goto(f"{ops.base}/runs/{run.run_id}/")
    node = ops.locator('#run-graph [data-node="B"]')
    expect(node).to_have_class(re.compile(r"\bnode-has-failure\b"))
    expect(node.locator(".failed-mark")).to_have_count(1)
    node.click()
    expect(ops).to_have_url(re.compile(r"\?nodeId=B#timeline$"))
    expect(ops.locator("#visit-table .visit-row")).to_have_count(2)
    ops.click(f"#visit-{failed.visit_uuid} .visit-link")
    expect(ops.locator("#visit-status")).to_have_text("Failed")
    expect(ops.locator("#failure-reason")).to_contain_text("API call failed after 3 retries")
    ops.click("#matched-pattern")
    expect(ops).to_have_url(f"{ops.base}/patterns/{failed.matched_pattern_id}/")
    ops.click("#pattern-hit-visits")
    ops.click(f"#visit-{failed.visit_uuid} .visit-link")
    expect(ops).to_have_url(f"{ops.base}/runs/{run.run_id}/visits/{failed.visit_uuid}/")


def test_marking_a_false_positive_shows_on_the_pattern_page(ops):
    failed = Visit.objects.select_related("run").get(run__workflow_name="Translate release notes", status="FAILED")
    ops.goto(f"{ops.base}/runs/{failed.run.run_id}/visits/{failed.visit_uuid}/")
    ops.fill("#id_note", "The provider really was rate limiting; testing the mark.")
    ops.click("#mark-false-positive")
    expect(ops.locator(".false-positive-mark")).to_contain_text("Marked as a false positive by")
    expect(ops.locator("#false-positive-note")).to_contain_text("testing the mark")
    shot(ops, "visit-false-positive")
    ops.click("#matched-pattern")
    expect(ops.locator("#false-positive-count")).to_have_text("1")
    ops.click("#pattern-false-positives")
    expect(ops.locator(f"#visit-{failed.visit_uuid}")).to_contain_text("testing the mark")
    ops.goto(f"{ops.base}/runs/{failed.run.run_id}/visits/{failed.visit_uuid}/")
    ops.click("#unmark-false-positive")
    expect(ops.locator("#mark-false-positive")).to_be_visible()


def test_a_draft_is_tried_against_recorded_replies_before_saving(ops):
    ops.goto(f"{ops.base}/patterns/new/")
    ops.fill("#id_name", "Sources draft")
    ops.fill("#id_pattern", "three sources")
    ops.select_option("#id_scope", "anywhere")  # with scope error, prose that mentions it never fails
    ops.click("#try-draft")
    expect(ops.locator("#trial-summary")).to_contain_text("1 would now fail")
    expect(ops.locator("#trial-now-failing .visit-link")).to_have_count(1)
    expect(ops.locator("#id_pattern")).to_have_value("three sources")
    shot(ops, "pattern-draft-trial", full_page=True)
    assert not HermesErrorPattern.objects.filter(name="Sources draft").exists()
    ops.click("#trial-now-failing .visit-link")
    expect(ops.locator("#final-text")).to_contain_text("Found three sources")


def test_the_visit_page_shows_thinking_tool_calls_and_the_todo_list(ops):
    visit = Visit.objects.select_related("run").get(run__workflow_name="Quarterly research report", node_id="A")
    ops.goto(f"{ops.base}/runs/{visit.run.run_id}/")
    ops.locator('#run-graph [data-node="A"]').click()
    expect(ops).to_have_url(f"{ops.base}/runs/{visit.run.run_id}/visits/{visit.visit_uuid}/")
    expect(ops.locator("#thinking")).to_contain_text("Start with industry reports")
    expect(ops.locator("#tool-call-table")).to_contain_text("web_search")
    expect(ops.locator("#tool-call-table")).to_contain_text("EU battery demand 2026 report")
    expect(ops.locator("#todo-list li")).to_have_count(2)
    expect(ops.locator("#todo-list")).to_contain_text("Search news")
    expect(ops.locator("#input-json")).to_contain_text("Find three recent sources")
    shot(ops, "visit-research-a", full_page=True)


def test_a_one_megabyte_output_opens_quickly(ops):
    run, _ = recording.run_create(
        user=demo_engine(), graph={"nodes": [{"id": "A"}], "edges": []}, workflow_name="Big output"
    )
    visit = recording.visit_register(run=run, node_id="A", from_visit_uuids=[]).visit
    rows = [{"row": i, "text": "lorem ipsum dolor sit amet " * 3} for i in range(11_000)]
    judgement.visit_complete(visit=visit, status="SUCCESS", output={"status": 200, "message": "ok", "data": rows})
    started = time.monotonic()
    ops.goto(f"{ops.base}/runs/{run.run_id}/visits/{visit.visit_uuid}/")
    expect(ops.locator("#output-json")).to_be_attached()
    ops.locator("#output-json > summary").click()
    expect(ops.locator("#output-json pre")).to_be_visible()
    elapsed = time.monotonic() - started
    assert elapsed < 20, f"the page took {elapsed:.1f} s"  # anti-hang bound, not a speed target
    expect(ops.locator("#output-json .cut-note")).to_be_visible()
    with ops.expect_download() as download:
        ops.click("#output-download")
    assert Path(download.value.path()).stat().st_size > 1_000_000


def test_the_pages_speak_simplified_chinese(ops):
    ops.select_option("#language-form select", "zh-hans")
    ops.click("#language-form button[type=submit]")
    expect(ops.locator("h1")).to_have_text("运行记录")
    run = run_named("Bug-fix planner")
    ops.click(f"#run-{run.run_id} .run-link")
    expect(ops.locator("#graph h2")).to_have_text("工作流图")
    expect(ops.locator("#graph-legend")).to_contain_text("回退：规划器飞回")
    shot(ops, "run-agentic-zh-hans")
    visit = Visit.objects.get(run=run, node_id="C", iter_seq=2)
    ops.goto(f"{ops.base}/runs/{run.run_id}/visits/{visit.visit_uuid}/")
    expect(ops.locator("#paths h2")).to_have_text("前驱路径")
    expect(ops.locator("#thinking h2")).to_have_text("思考")


# Lines each element's text takes on screen (a Range over its text has one box per line).
LINES = """els => els.map(e => { const r = document.createRange(); r.selectNodeContents(e);
  const tops = new Set(Array.from(r.getClientRects()).filter(b => b.width > 0).map(b => Math.round(b.top)));
  return [e.textContent.trim(), tops.size]; })"""


def wrapped(page, selector) -> list:
    """The elements under ``selector`` whose text takes more than one line."""
    shown = page.locator(selector).evaluate_all(LINES)
    assert shown, f"nothing matches {selector}"
    return [text for text, lines in shown if lines > 1]


def test_statuses_and_run_ids_stay_on_one_line_beside_a_long_failure_reason(ops):
    ops.goto(f"{ops.base}/visits/")
    assert wrapped(ops, "#visit-list .status") == []
    assert wrapped(ops, "#visit-list td a > code") == []
    translate = run_named("Translate release notes")
    ops.goto(f"{ops.base}/runs/{translate.run_id}/")
    assert wrapped(ops, "#visit-table .status") == []
    shot(ops, "run-failure-reason-columns")
    rate_limit = HermesErrorPattern.objects.get(key="rate-limit")
    ops.goto(f"{ops.base}/runs/matched/{rate_limit.pk}/")
    assert wrapped(ops, "#matched-visits tbody td:first-child") == []


def test_the_tool_forms_endpoint_box_is_as_wide_as_its_other_boxes(ops):
    ops.goto(f"{ops.base}/tools/new/")
    name = ops.locator("#id_name").bounding_box()
    endpoint = ops.locator("#id_endpoint").bounding_box()
    assert endpoint["width"] == pytest.approx(name["width"], abs=2), (endpoint, name)
