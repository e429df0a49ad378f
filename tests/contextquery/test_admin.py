"""The Django admin for runs, visits, tokens and reads (SPEC §4.6)."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from contextquery import judgement, recording, tokens
from contextquery.models import ContextRead, ContextToken
from tests.contextquery.factories import CHAIN, VisitFactory, VisitLogFactory, WorkflowRunFactory

RATE_LIMIT_REPLY = "API call failed after 3 retries: HTTP 429: Too Many Requests."


@pytest.fixture
def admin_client(client, superuser):
    client.force_login(superuser)
    return client


@pytest.fixture
def failed_visit(record):
    """A visit FAILED by a pattern, with a log, a token and a read."""
    rec = record(CHAIN)
    reg = recording.visit_register(run=rec.run, node_id="A", from_visit_uuids=[])
    recording.logs_append(visit=reg.visit, logs=[{"type": "THINKING", "message": "Thinking <b>hard</b>"}])
    ContextRead.objects.create(
        visit=reg.visit, endpoint="path", status_code=200, bytes_returned=42, created_at=timezone.now()
    )
    judgement.visit_complete(visit=reg.visit, status="SUCCESS", final_text=RATE_LIMIT_REPLY)
    reg.visit.refresh_from_db()
    return reg.visit


def test_the_run_list_shows_runs_with_their_visit_counts(admin_client):
    run = WorkflowRunFactory(run_id="adminrun1", workflow_name="Nightly report")
    VisitFactory.create_batch(3, run=run)
    page = admin_client.get(reverse("admin:contextquery_workflowrun_changelist")).content.decode()
    assert "adminrun1" in page and "Nightly report" in page


def test_the_run_page_lists_its_visits_inline(admin_client):
    run = WorkflowRunFactory()
    visit = VisitFactory(run=run, node_id="A")
    page = admin_client.get(reverse("admin:contextquery_workflowrun_change", args=[run.pk])).content.decode()
    assert str(visit.visit_uuid) in page


def test_the_run_list_searches_by_run_id(admin_client):
    WorkflowRunFactory(run_id="findme01")
    WorkflowRunFactory(run_id="other002")
    page = admin_client.get(reverse("admin:contextquery_workflowrun_changelist") + "?q=findme").content.decode()
    assert "findme01" in page and "other002" not in page


def test_the_visit_page_shows_the_failure_the_pattern_link_and_escaped_logs(admin_client, failed_visit):
    page = admin_client.get(reverse("admin:contextquery_visit_change", args=[failed_visit.pk])).content.decode()
    assert failed_visit.failure_reason[:40].replace('"', "&quot;") in page
    assert reverse("admin:patterns_hermeserrorpattern_change", args=[failed_visit.matched_pattern_id]) in page
    assert "Thinking &lt;b&gt;hard&lt;/b&gt;" in page


def test_the_visit_page_shows_its_reads_and_tokens_by_prefix_only(admin_client, failed_visit):
    token = ContextToken.objects.get(visit=failed_visit)
    page = admin_client.get(reverse("admin:contextquery_visit_change", args=[failed_visit.pk])).content.decode()
    assert token.token_hash[:8] in page and token.token_hash not in page
    assert "revoked" in page


def test_visits_filter_by_status(admin_client):
    VisitFactory(node_id="okvisit", status="SUCCESS")
    VisitFactory(node_id="badvisit", status="FAILED")
    page = admin_client.get(reverse("admin:contextquery_visit_changelist") + "?status__exact=FAILED").content.decode()
    assert "badvisit" in page and "okvisit" not in page


def test_the_token_list_shows_hash_prefixes_and_states_never_whole_hashes(admin_client):
    visit = VisitFactory(status="RUNNING")
    live = tokens.token_issue(visit=visit)
    revoked = tokens.token_issue(visit=visit)
    tokens.token_revoke(visit=visit, raw=revoked.token)
    page = admin_client.get(reverse("admin:contextquery_contexttoken_changelist")).content.decode()
    for row in ContextToken.objects.all():
        assert row.token_hash[:8] in page and row.token_hash not in page
    assert live.token not in page and revoked.token not in page
    assert "live" in page and "revoked" in page


def test_the_token_list_filters_by_state(admin_client):
    visit = VisitFactory(status="RUNNING")
    tokens.token_issue(visit=visit)
    revoked = tokens.token_issue(visit=visit)
    tokens.token_revoke(visit=visit, raw=revoked.token)
    url = reverse("admin:contextquery_contexttoken_changelist")
    page = admin_client.get(url + "?state=revoked").content.decode()
    revoked_row = ContextToken.objects.exclude(revoked_at=None).get()
    live_row = ContextToken.objects.filter(revoked_at=None).get()
    assert revoked_row.token_hash[:8] in page and live_row.token_hash[:8] not in page


@pytest.mark.parametrize("model", ["workflowrun", "visit", "contexttoken"])
def test_recorded_history_cannot_be_added_in_the_admin(admin_client, model):
    assert admin_client.get(reverse(f"admin:contextquery_{model}_add")).status_code == 403


def test_a_visit_cannot_be_edited_in_the_admin(admin_client):
    visit = VisitFactory(status="SUCCESS")
    VisitLogFactory(visit=visit)
    response = admin_client.post(reverse("admin:contextquery_visit_change", args=[visit.pk]), {"status": "FAILED"})
    visit.refresh_from_db()
    assert response.status_code == 403 and visit.status == "SUCCESS"


@pytest.mark.parametrize("model", ["visit", "contexttoken"])
def test_visits_and_tokens_offer_no_delete_action(admin_client, failed_visit, model):
    page = admin_client.get(reverse(f"admin:contextquery_{model}_changelist"))
    assert page.status_code == 200 and "delete_selected" not in page.content.decode()


def test_a_visit_cannot_be_deleted_alone_or_in_bulk(admin_client, failed_visit):
    alone = admin_client.post(reverse("admin:contextquery_visit_delete", args=[failed_visit.pk]), {"post": "yes"})
    admin_client.post(
        reverse("admin:contextquery_visit_changelist"),
        {"action": "delete_selected", "_selected_action": [failed_visit.pk], "post": "yes"},
    )
    assert alone.status_code == 403 and type(failed_visit).objects.filter(pk=failed_visit.pk).exists()


def test_a_token_cannot_be_deleted_in_the_admin(admin_client, failed_visit):
    token = ContextToken.objects.get(visit=failed_visit)
    response = admin_client.post(reverse("admin:contextquery_contexttoken_delete", args=[token.pk]), {"post": "yes"})
    assert response.status_code == 403 and ContextToken.objects.filter(pk=token.pk).exists()


def test_a_run_can_still_be_deleted_with_its_visits_logs_tokens_and_reads(admin_client, failed_visit):
    run = failed_visit.run
    changelist = admin_client.get(reverse("admin:contextquery_workflowrun_changelist")).content.decode()
    assert "delete_selected" in changelist
    confirm = admin_client.get(reverse("admin:contextquery_workflowrun_delete", args=[run.pk])).content.decode()
    assert "permission to delete" not in confirm
    response = admin_client.post(reverse("admin:contextquery_workflowrun_delete", args=[run.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not type(run).objects.filter(pk=run.pk).exists()
    assert not type(failed_visit).objects.filter(pk=failed_visit.pk).exists()
    assert not ContextToken.objects.exists() and not ContextRead.objects.exists()


def zh_headers(admin_client, url: str) -> list[str]:
    """The column headers of an admin change list in Chinese, as shown."""
    page = admin_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r'<th scope="col"[^>]*>(.*?)</th>', page, re.S)]


def test_the_run_list_names_the_engine_column_in_chinese(admin_client):
    WorkflowRunFactory(run_id="adminrun2")
    headers = zh_headers(admin_client, reverse("admin:contextquery_workflowrun_changelist"))
    assert "引擎" in headers and "Created by" not in headers and "CREATED BY" not in headers, headers


def test_the_token_list_names_the_run_column_in_chinese(admin_client, failed_visit):
    headers = zh_headers(admin_client, reverse("admin:contextquery_contexttoken_changelist"))
    assert "运行" in headers and "Run" not in headers, headers
