"""The overview and the live run pages in headless Chromium against a live
server, on the data ``manage.py loaddemo`` records (SPEC §8, issue 17): a
chart's bar opens the failed visits behind it, the numbers open their lists,
the page in Chinese, and a RUNNING run's and visit's pages updating
themselves when a log arrives."""

import os
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from contextquery import recording
from contextquery.models import Visit, WorkflowRun
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
    """A staff user logged in through the login page, on the overview."""
    context, page = new_page(browser)
    log_in(page, base_url=demo.url, path="/")
    page.base = demo.url
    yield page
    context.close()


def running_visit() -> Visit:
    return Visit.objects.select_related("run").get(status="RUNNING")


def test_the_overview_shows_the_demo_and_a_bar_opens_the_failed_visits_behind_it(ops):
    expect(ops.locator("h1")).to_have_text("Overview")
    expect(ops.locator("#runs-started .stat-value")).to_have_text("5")
    expect(ops.locator("#runs-running-now .stat-value")).to_have_text("1")
    expect(ops.locator("#failures-total")).to_have_text("2")
    expect(ops.locator("#pattern-table")).to_contain_text("retry-in-seconds")
    shot(ops, "overview", full_page=True)  # docs/screenshot-overview.png
    ops.locator('#failures-chart a.segment[data-category="rate_limit"]').click()
    expect(ops).to_have_url(re.compile(r"/visits/\?.*status=FAILED.*category=rate_limit.*endedBefore="))
    expect(ops.locator("#visit-list tbody tr")).to_have_count(1)
    expect(ops.locator("#visit-list")).to_contain_text("Translate release notes")
    expect(ops.locator('select[name="category"]')).to_have_value("rate_limit")


def test_the_numbers_open_the_runs_and_visits_they_count(ops):
    ops.click("#runs-running-now")
    expect(ops).to_have_url(re.compile(r"/runs/\?status=RUNNING$"))
    expect(ops.locator("#run-table .run-link")).to_have_count(1)
    ops.go_back()
    ops.locator("#node-table .failed-link").first.click()
    expect(ops).to_have_url(re.compile(r"/visits/\?.*status=FAILED"))
    expect(ops.locator("#visit-list tbody tr")).to_have_count(1)
    ops.go_back()
    ops.locator("#pattern-table .pattern-link").first.click()
    expect(ops).to_have_url(re.compile(r"/patterns/\d+/$"))


def test_the_window_switches_to_seven_days(ops):
    ops.click('#window-switch a[data-window="7d"]')
    expect(ops).to_have_url(re.compile(r"/\?window=7d$"))
    expect(ops.locator('#window-switch a[data-window="7d"]')).to_have_class(re.compile(r"\bcurrent\b"))
    expect(ops.locator("#failures-chart a.segment")).to_have_count(2)


def test_the_overview_speaks_simplified_chinese_at_1400_pixels(ops):
    ops.select_option("#language-form select", "zh-hans")
    ops.click("#language-form button[type=submit]")
    expect(ops.locator("h1")).to_have_text("概览")
    expect(ops.locator("#panel-failures h2")).to_contain_text("按类别统计的失败访问")
    expect(ops.locator("#failures-legend")).to_contain_text("限流")
    assert ops.evaluate("document.documentElement.scrollWidth") <= 1400  # nothing spills sideways
    shot(ops, "overview-zh-hans", full_page=True)


def test_a_running_runs_page_updates_when_a_log_is_appended(ops):
    visit = running_visit()
    ops.goto(f"{ops.base}/runs/{visit.run.run_id}/")
    expect(ops.locator("#live-state")).to_be_visible()
    row = ops.locator(f"#visit-{visit.visit_uuid}")
    expect(row.locator(".visit-logs")).to_have_text("1")
    ops.evaluate("window.notReloaded = true")
    # The last sign of life was a minute ago, so the log is written as a new one.
    Visit.objects.filter(pk=visit.pk).update(last_seen_at=timezone.now() - timedelta(minutes=1))
    recording.logs_append(visit=visit, logs=[{"type": "THINKING", "message": "Now write the failing test."}])
    expect(row.locator(".visit-logs")).to_have_text("2", timeout=20_000)
    seen = Visit.objects.get(pk=visit.pk).last_seen_at
    expect(row.locator("time.seen")).to_have_attribute("datetime", seen.isoformat())
    assert ops.evaluate("window.notReloaded") is True  # updated in place, not reloaded
    shot(ops, "run-live")


def test_a_running_visits_page_shows_new_thinking_and_stops_when_the_run_ends(ops):
    visit = running_visit()
    ops.goto(f"{ops.base}/runs/{visit.run.run_id}/visits/{visit.visit_uuid}/")
    expect(ops.locator("#thinking")).not_to_contain_text("Found the off-by-one")
    recording.logs_append(visit=visit, logs=[{"type": "THINKING", "message": "Found the off-by-one in the export."}])
    expect(ops.locator("#thinking")).to_contain_text("Found the off-by-one", timeout=20_000)
    recording.run_finish(run=WorkflowRun.objects.get(pk=visit.run_id), status="CANCELLED")
    expect(ops.locator("#visit-status")).to_have_text("Cancelled", timeout=20_000)
    expect(ops.locator("#live-state")).to_have_class(re.compile(r"\bstopped\b"))


def test_a_silent_run_is_marked_stale_in_the_list(ops):
    visit = running_visit()
    Visit.objects.filter(run_id=visit.run_id).update(last_seen_at=timezone.now() - timedelta(hours=1))
    WorkflowRun.objects.filter(pk=visit.run_id).update(started_at=timezone.now() - timedelta(hours=2))
    ops.goto(f"{ops.base}/runs/?stale=true")
    expect(ops.locator("#run-table .run-link")).to_have_count(1)
    expect(ops.locator(f"#run-{visit.run.run_id} .tag.stale")).to_be_visible()
