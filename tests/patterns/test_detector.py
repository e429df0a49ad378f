"""The stored detection model at run time: default, newest row, switches (SPEC §3.3a)."""

import os
import subprocess
import sys

import pytest
from django.core.management import call_command

from patterns import detector, training
from patterns.classifier import ModelVerdict
from patterns.detection import model_verdict_named
from patterns.detector import DEFAULT_WEIGHTS_PATH, default_weights_load, detector_store, model_detect, model_score
from patterns.models import DetectorModel
from tests.bench.quality import builtin_matcher
from tests.factories import JudgedReplyFactory

pytestmark = pytest.mark.django_db

ERROR = "Error code: 503 - {'error': {'message': 'The engine is currently overloaded, please try again later.'}}"


def test_migrate_loads_the_shipped_default_when_no_model_is_stored():
    model = DetectorModel.objects.get()
    assert model.version == default_weights_load()["version"] and model.threshold == default_weights_load()["threshold"]


def test_migrate_never_replaces_a_stored_model():
    DetectorModel.objects.update(version="ops-trained")
    detector.default_model_load_after_migrate(sender=None)
    assert list(DetectorModel.objects.values_list("version", flat=True)) == ["ops-trained"]


def test_a_newer_stored_model_takes_effect_at_the_next_detection():
    weights = dict(default_weights_load(), threshold=0.999999, version="strict")
    assert model_detect("The engine is currently overloaded, please try again later.") is not None
    detector_store(weights=weights)
    assert detector.current_model().version == "strict"
    assert model_detect("The engine is currently overloaded, please try again later.") is None


def test_with_no_model_stored_the_model_says_nothing():
    DetectorModel.objects.all().delete()
    assert model_score(ERROR) is None and model_detect(ERROR) is None


def test_the_threshold_setting_overrides_the_stored_threshold(settings):
    settings.HERMES_DETECTION_MODEL_THRESHOLD = 1.0
    assert model_detect(ERROR) is None
    assert model_score(ERROR).probability > 0.5


def test_the_model_switch_turns_both_score_and_detection_off(settings):
    settings.HERMES_DETECTION_MODEL = False
    assert model_score(ERROR) is None and model_detect(ERROR) is None


@pytest.mark.parametrize("value", ["0", "1.5", "high", "-0.2"])
def test_a_bad_threshold_setting_stops_the_start_naming_the_variable(value):
    env = dict(os.environ, HERMES_DETECTION_MODEL_THRESHOLD=value, DJANGO_SETTINGS_MODULE="project.settings")
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "HERMES_DETECTION_MODEL_THRESHOLD" in done.stderr


@pytest.mark.slow
def test_train_detector_learns_from_ops_marks_and_stores_the_newest_model(staff_user, monkeypatch):
    # One fold draw for the threshold instead of three: what is tested is that marks feed training.
    monkeypatch.setattr(training, "THRESHOLD_SEEDS", training.THRESHOLD_SEEDS[:1])
    JudgedReplyFactory(
        text="zorblax quota gone, purchase more zorbs", failed=False, mark="missed_failure", category="quota"
    )
    before = DetectorModel.objects.count()
    call_command("train_detector")
    newest = DetectorModel.objects.order_by("-id").first()
    assert DetectorModel.objects.count() == before + 1
    assert newest.version.startswith("trained-") and newest.note == "1 marks"
    assert newest.weights["version"] != default_weights_load()["version"]


#: Ordinary workflow answers: the demo's (contextquery/management/commands/loaddemo.py) and the
#: issue's examples of short task reports; none of them is in the training data.
ORDINARY_ANSWERS = [
    "Found three sources: IEA Global EV Outlook, a BNEF battery note and Eurostat.",
    "Demand grows about 25% a year, while cathode supply lags behind.",
    "Findings: demand grows 25% a year; cathodes are the bottleneck.",
    "Sales peak in September; the chart shows the monthly totals.",
    "# Q3 report\nDemand grows 25% a year; sales peak in September.",
    "The ticket: login fails for e-mail addresses containing '+'.",
    "Reproduced: test_plus_address fails.",
    "Patched: the address is URL-encoded.",
    "Not approved: fix the parser instead of encoding the address.",
    "Patched the parser; '+' is kept.",
    "Terms: workflow, visit, token.",
    "Translated: 工作流、访问、令牌.",
    "工作流、访问、令牌",
    "Segmented 412 customers without CRM data: 301 small, 111 large.",
    "The ticket: CSV export drops the last row.",
    "Found 3 sources: the changelog, the migration guide and an issue thread.",
    "Reproduced: test_export_keeps_last_row fails on main.",
    "Patched: the build that failed on Windows now passes.",
    "Quota: 92% of the Q3 sales quota reached.",
]


@pytest.mark.parametrize("text", ORDINARY_ANSWERS)
def test_the_shipped_model_does_not_judge_an_ordinary_answer_failed(text):
    assert model_detect(text) is None, model_score(text).probability


def test_the_default_weights_file_ships_with_the_package():
    assert DEFAULT_WEIGHTS_PATH.exists() and DEFAULT_WEIGHTS_PATH.parent.name == "data"


def test_the_model_s_verdict_yields_to_a_reply_that_quotes_an_error():
    detector_store(weights=dict(default_weights_load(), threshold=0.000001, version="eager"))
    quoted = "问：“" + ERROR + "” 是什么意思？\n答：上游繁忙，稍后再试。"
    assert model_detect(ERROR) is not None
    assert model_score(quoted) is not None and model_detect(quoted) is None


PROSE_NAMING_A_RATE_LIMIT = (
    "I tried three times and got nothing useful back; the upstream kept mentioning a rate limit "
    "for my key, so the summary you asked for is not written."
)


def test_pattern_words_outside_an_error_region_name_the_category_but_decide_nothing():
    matcher = builtin_matcher()
    assert matcher.detect(PROSE_NAMING_A_RATE_LIMIT, head_chars=500, tail_chars=800) is None
    named = matcher.name(PROSE_NAMING_A_RATE_LIMIT, head_chars=500, tail_chars=800)
    assert (named.key, named.category) == ("rate-limit", "rate_limit")


def test_a_model_verdict_takes_the_category_of_the_pattern_whose_words_appear_in_the_reply():
    verdict = ModelVerdict(probability=0.93, category="other", retryable=False)
    named = model_verdict_named(PROSE_NAMING_A_RATE_LIMIT, verdict)
    assert (named.category, named.retryable, named.probability) == ("rate_limit", True, 0.93)


def test_a_model_verdict_keeps_its_own_category_when_no_pattern_words_appear():
    verdict = ModelVerdict(probability=0.93, category="timeout", retryable=True)
    assert model_verdict_named("The assistant produced nothing further for this step.", verdict) == verdict


@pytest.mark.parametrize("reply", ["zebra quartz a1b2c3 happened", "工作流、访问、令牌", "令牌已更新"])
def test_the_model_leaves_a_reply_shorter_than_a_sentence_to_the_patterns(reply):
    assert model_score(reply) is not None and model_detect(reply) is None


def test_the_model_still_judges_a_short_provider_sentence_of_a_sentence_s_width():
    reply = "The engine is currently overloaded, please try again later."
    assert model_detect(reply) is not None and model_detect(reply).category == "overloaded"


def test_the_model_leaves_a_node_s_plain_json_output_to_the_patterns():
    reply = '{"sentiment": "positive", "score": 0.87, "language": "en"}'
    assert model_score(reply) is not None and model_detect(reply) is None
