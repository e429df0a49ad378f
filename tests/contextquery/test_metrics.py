"""``GET /metrics`` (SPEC §8): the Prometheus text format read from the
database — the demo's counts after ``loaddemo``, context queries with their
latency histogram, counters that purges do not lower, and the client check."""

import ipaddress
import os
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from contextquery import tokens
from contextquery.management.commands.loaddemo import demo_load
from contextquery.models import ToolBinding, ToolCall, Visit
from contextquery.retention import runs_purge
from patterns.seeding import seed_builtins

pytestmark = pytest.mark.django_db

LOOPBACK = {"REMOTE_ADDR": "127.0.0.1"}


def scrape(client, **extra) -> dict:
    """``{(sample name, frozenset of label pairs): value}`` of one scrape."""
    response = client.get("/metrics", **{**LOOPBACK, **extra})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples, name, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0)


@pytest.fixture
def c2(flyback, issue):
    """The token of C's second (running) visit in the flight-back run, with its run id."""
    return issue(flyback.by["C2"]), flyback.run.run_id


@pytest.fixture
def demo(db):
    seed_builtins()
    return demo_load()


def test_a_scrape_after_loaddemo_shows_the_demos_counts(client, demo):
    samples = scrape(client)
    registered = sum(len(visits) for _run, visits in demo.runs.values())  # 7 + 5 + 4 + 3 + 2
    rate_limited = demo.runs["rate_limited"][1]["B1"].visit
    assert registered == 21
    # Every visit ended but the running run's B; one 429 reply failed by the rate-limit pattern,
    # one CRM call failed under skip with no category.
    assert value(samples, "hermes_visits_completed_total", status="SUCCESS", category="") == 18
    assert value(samples, "hermes_visits_completed_total", status="FAILED", category="rate_limit") == 1
    assert value(samples, "hermes_visits_completed_total", status="FAILED", category="") == 1
    assert value(samples, "hermes_pattern_matches_total", key=rate_limited.matched_pattern_key) == 1
    assert value(samples, "hermes_context_tokens_issued_total") == registered  # one token per registration
    assert value(samples, "hermes_runs_running") == 1
    assert value(samples, "hermes_runs_stale") == 0


def test_loaddemo_run_as_a_command_is_counted_too(client, db):
    seed_builtins()
    call_command("loaddemo", stdout=open(os.devnull, "w"))
    assert value(scrape(client), "hermes_visits_completed_total", status="FAILED", category="rate_limit") == 1


def test_a_client_outside_the_allowed_addresses_gets_403(client, demo):
    response = client.get("/metrics", REMOTE_ADDR="10.0.0.7")
    assert response.status_code == 403
    assert b"HERMES_METRICS_ALLOWED_CLIENTS" in response.content
    assert b"hermes_" not in response.content


def test_an_allowed_network_is_answered(client, demo, settings):
    settings.HERMES_METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network("10.0.0.0/24")]
    assert client.get("/metrics", REMOTE_ADDR="10.0.0.7").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


def test_context_queries_are_counted_by_endpoint_and_status_with_their_latency(client, c2, ask):
    token, run_id = c2
    for _ in range(3):
        assert ask("output", token, {"runId": run_id, "nodeId": "B"}).status_code == 200
    assert ask("output", token, {"runId": run_id, "nodeId": "nowhere"}).status_code == 404
    samples = scrape(client)
    assert value(samples, "hermes_context_queries_total", endpoint="output", status="200") == 3
    assert value(samples, "hermes_context_queries_total", endpoint="output", status="404") == 1
    name = "hermes_context_query_duration_seconds"
    assert value(samples, f"{name}_count", endpoint="output", status="200") == 3
    assert value(samples, f"{name}_bucket", endpoint="output", status="200", le="+Inf") == 3
    buckets = sorted(
        (float(dict(labels)["le"]), v)
        for (n, labels), v in samples.items()
        if n == f"{name}_bucket" and dict(labels)["status"] == "200"
    )
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)  # cumulative
    assert value(samples, f"{name}_sum", endpoint="output", status="200") > 0


def test_purging_runs_lowers_no_counter(client, demo):
    before = scrape(client)
    runs_purge(older_than=timedelta(minutes=1), now=demo.runs["research"][0].started_at + timedelta(days=1))
    after = scrape(client)
    assert set(Visit.objects.values_list("run__status", flat=True)) == {"RUNNING"}  # only the running run is left
    for key in (k for k in before if k[0].endswith("_total")):
        assert after[key] == before[key], key


def test_purging_dead_tokens_keeps_them_counted_as_issued(client, demo):
    issued = value(scrape(client), "hermes_context_tokens_issued_total")
    assert tokens.tokens_purge(now=demo.runs["research"][0].started_at + timedelta(days=3)) > 0
    assert value(scrape(client), "hermes_context_tokens_issued_total") == issued


def test_a_prometheus_server_asking_for_openmetrics_gets_it(client, demo):
    response = client.get(
        "/metrics", HTTP_ACCEPT="application/openmetrics-text;version=1.0.0,text/plain;q=0.5", **LOOPBACK
    )
    assert response["Content-Type"].startswith("application/openmetrics-text")
    assert response.content.rstrip().endswith(b"# EOF")


def test_tool_calls_by_status_and_pending_approvals_are_scraped(client, demo):
    visit = Visit.objects.first()
    binding = ToolBinding.objects.create(name="order_lookup", endpoint="http://127.0.0.1:9/orders")
    for status in ("PENDING_APPROVAL", "PENDING_APPROVAL", "SUCCEEDED"):
        ToolCall.objects.create(
            visit=visit,
            binding=binding,
            tool_name=binding.name,
            kind="read",
            status=status,
            requested_at=timezone.now(),
        )
    samples = scrape(client)
    assert value(samples, "hermes_tool_calls_total", status="PENDING_APPROVAL") == 2.0
    assert value(samples, "hermes_tool_calls_total", status="SUCCEEDED") == 1.0
    assert value(samples, "hermes_tool_approvals_pending") == 2.0


def test_a_scrape_costs_a_fixed_number_of_queries(client, demo, django_assert_num_queries):
    # tallies, visits by status and category, pattern hits, context reads, tokens, runs now, tool calls
    with django_assert_num_queries(7):
        client.get("/metrics", **LOOPBACK)
