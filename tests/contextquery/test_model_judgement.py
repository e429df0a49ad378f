"""The detection model as the last step before blank in the failure upgrade (SPEC §3.3a, §4.4)."""

import re

import pytest

from contextquery import judgement
from contextquery.models import Visit
from patterns.models import HermesErrorPattern, JudgedReply
from tests.contextquery.factories import CHAIN

pytestmark = pytest.mark.django_db

#: A provider error no pattern matches once the patterns are gone.
UNSEEN_ERROR = "Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests'}}"


def complete(rec, **kwargs):
    visit = rec.visit("A", complete=False)
    kwargs.setdefault("status", "SUCCESS")
    return judgement.visit_complete(visit=visit, **kwargs), Visit.objects.get(pk=visit.pk)


@pytest.fixture
def no_patterns(db):
    HermesErrorPattern.objects.all().delete()


def test_a_reply_no_pattern_matched_but_the_model_did_fails_with_the_models_reason(record, no_patterns):
    verdict, visit = complete(record(CHAIN), final_text=UNSEEN_ERROR)
    assert verdict["effectiveStatus"] == "FAILED" and verdict["matchedPattern"] is None
    assert re.match(
        r"The agent reply looks like a failed LLM call \(model score [01]\.\d\d\)", verdict["failureReason"]
    )
    assert verdict["failureReason"].endswith(f'): "{UNSEEN_ERROR[:200]}"')
    assert (verdict["category"], verdict["retryable"]) == ("rate_limit", True)
    judged = JudgedReply.objects.get(subject=visit.visit_uuid)
    assert judged.decided_by == "model" and judged.failed_by_model and judged.model_score >= 0.9


def test_the_model_switched_off_lets_the_reply_pass(record, no_patterns, settings):
    settings.HERMES_DETECTION_MODEL = False
    verdict, visit = complete(record(CHAIN), final_text=UNSEEN_ERROR)
    assert verdict["effectiveStatus"] == "SUCCESS"
    assert JudgedReply.objects.get(subject=visit.visit_uuid).model_score is None


def test_a_threshold_set_above_the_score_lets_the_reply_pass(record, no_patterns, settings):
    settings.HERMES_DETECTION_MODEL_THRESHOLD = 1.0
    verdict, _visit = complete(record(CHAIN), final_text=UNSEEN_ERROR)
    assert verdict["effectiveStatus"] == "SUCCESS"


def test_a_pattern_still_decides_first(record):
    verdict, visit = complete(
        record(CHAIN), final_text="API call failed after 3 retries: HTTP 429: Rate limit exceeded."
    )
    assert verdict["matchedPattern"] is not None
    judged = JudgedReply.objects.get(subject=visit.visit_uuid)
    assert judged.decided_by == "pattern" and 0 <= judged.model_score <= 1


def test_an_ordinary_answer_passes_and_keeps_its_model_score(record):
    verdict, visit = complete(record(CHAIN), final_text="The capital of France is Paris.")
    assert verdict["effectiveStatus"] == "SUCCESS"
    assert JudgedReply.objects.get(subject=visit.visit_uuid).model_score < 0.5


def test_a_blank_reply_is_still_blank_not_the_models(record, no_patterns):
    verdict, _visit = complete(record(CHAIN), final_text="   ")
    assert (verdict["effectiveStatus"], verdict["category"]) == ("FAILED", "incomplete")
