"""Missed-failure marks and the model's false positives, on the visit page and the API (SPEC §3.3a)."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from patterns import marks
from patterns.models import HermesErrorPattern, JudgedReply
from project.errors import Conflict, Forbidden, Invalid
from tests.contextquery.factories import CHAIN
from tests.support import envelope_body

pytestmark = pytest.mark.django_db

UNSEEN_ERROR = "Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests'}}"


@pytest.fixture
def passed(record):
    return record(CHAIN, run_id="passed01").visit("A", final_text="The report is ready: three sources agree.")


def visit_url(visit, name="contextquery:visit"):
    return reverse(name, args=[visit.run.run_id, visit.visit_uuid])


def api_url(visit):
    return f"/api/runs/{visit.run.run_id}/visits/{visit.visit_uuid}/missed-failure"


def test_marking_a_passed_reply_as_a_missed_failure_keeps_who_the_note_and_the_category(passed, staff_user):
    row = marks.reply_mark_missed_failure(subject=passed.visit_uuid, user=staff_user, note="a relay", category="quota")
    assert (row.mark, row.mark_note, row.category, row.marked_by) == ("missed_failure", "a relay", "quota", staff_user)


def test_a_missed_failure_without_a_category_is_other(passed, staff_user):
    assert marks.reply_mark_missed_failure(subject=passed.visit_uuid, user=staff_user).category == "other"


def test_a_failed_reply_cannot_be_a_missed_failure(record, staff_user):
    visit = record(CHAIN).visit("A", final_text="API call failed after 3 retries: HTTP 429: Rate limit exceeded.")
    with pytest.raises(Conflict, match="already failed"):
        marks.reply_mark_missed_failure(subject=visit.visit_uuid, user=staff_user)


def test_an_unknown_category_is_refused_naming_the_field(passed, staff_user):
    with pytest.raises(Invalid) as refused:
        marks.reply_mark_missed_failure(subject=passed.visit_uuid, user=staff_user, category="gremlins")
    assert "category" in refused.value.errors


def test_only_staff_mark_missed_failures(passed, user):
    with pytest.raises(Forbidden):
        marks.reply_mark_missed_failure(subject=passed.visit_uuid, user=user)


def test_marks_become_training_rows(passed, record, staff_user):
    marks.reply_mark_missed_failure(subject=passed.visit_uuid, user=staff_user, category="quota")
    rows = marks.marked_rows()
    assert [(r["isError"], r["category"], r["text"]) for r in rows] == [(True, "quota", passed.final_text)]


def test_the_models_verdict_can_be_marked_as_a_false_positive(record, staff_user):
    HermesErrorPattern.objects.all().delete()
    visit = record(CHAIN).visit("A", final_text=UNSEEN_ERROR)
    row = marks.reply_mark_false_positive(subject=visit.visit_uuid, user=staff_user, note="a quoted log")
    assert row.mark == "false_positive" and row.failed_by_model


def test_the_visit_page_offers_staff_the_missed_failure_form_and_the_model_score(ops, passed):
    page = ops.get(visit_url(passed)).content.decode()
    assert 'id="mark-missed-failure"' in page and 'id="model-score"' in page


def test_the_visit_page_marks_and_unmarks_a_missed_failure(ops, passed, staff_user):
    url = visit_url(passed, "contextquery:visit-missed-failure")
    response = ops.post(url, {"action": "mark", "note": "relay error", "category": "rate_limit"})
    assert response.status_code == 302 and response["Location"].endswith("#verdict")
    row = JudgedReply.objects.get(subject=passed.visit_uuid)
    assert (row.mark, row.category, row.marked_by) == ("missed_failure", "rate_limit", staff_user)
    assert 'id="unmark-missed-failure"' in ops.get(visit_url(passed)).content.decode()
    ops.post(url, {"action": "unmark"})
    assert JudgedReply.objects.get(subject=passed.visit_uuid).mark == ""


def test_the_visit_page_shows_a_failure_decided_by_the_model_with_the_false_positive_form(ops, record):
    HermesErrorPattern.objects.all().delete()
    visit = record(CHAIN).visit("A", final_text=UNSEEN_ERROR)
    page = ops.get(visit_url(visit)).content.decode()
    assert "looks like a failed LLM call" in page and 'id="mark-false-positive"' in page


def test_the_api_marks_and_unmarks_a_missed_failure(staff_client, passed):
    body = envelope_body(staff_client.post(api_url(passed), {"note": "relay", "category": "quota"}, format="json"))
    assert (body["data"]["mark"], body["data"]["category"], body["data"]["note"]) == (
        "missed_failure",
        "quota",
        "relay",
    )
    body = envelope_body(staff_client.delete(api_url(passed)))
    assert body["data"]["mark"] is None


def test_the_api_refuses_a_reader_who_is_not_staff(user, user_client, passed):
    user.user_permissions.add(Permission.objects.get(codename="read_all_runs"))
    assert user_client.post(api_url(passed), {}, format="json").status_code == 403


def test_the_api_refuses_an_unknown_key_with_a_422(staff_client, passed):
    assert staff_client.post(api_url(passed), {"colour": "red"}, format="json").status_code == 422
