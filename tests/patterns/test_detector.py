"""The stored detection model at run time: default, newest row, switches (SPEC §3.3a)."""

import os
import subprocess
import sys

import pytest
from django.core.management import call_command

from patterns import detector
from patterns.detector import DEFAULT_WEIGHTS_PATH, default_weights_load, detector_store, model_detect, model_score
from patterns.models import DetectorModel
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
def test_train_detector_learns_from_ops_marks_and_stores_the_newest_model(staff_user):
    JudgedReplyFactory(
        text="zorblax quota gone, purchase more zorbs", failed=False, mark="missed_failure", category="quota"
    )
    before = DetectorModel.objects.count()
    call_command("train_detector")
    newest = DetectorModel.objects.order_by("-id").first()
    assert DetectorModel.objects.count() == before + 1
    assert newest.version.startswith("trained-") and newest.note == "1 marks"
    assert newest.weights["version"] != default_weights_load()["version"]


def test_the_default_weights_file_ships_with_the_package():
    assert DEFAULT_WEIGHTS_PATH.exists() and DEFAULT_WEIGHTS_PATH.parent.name == "data"
