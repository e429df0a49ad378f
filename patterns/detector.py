"""The stored detection model at run time (SPEC §3.3a).

* :func:`model_detect` — the model's verdict on a reply no pattern matched, or
  None when the model is switched off (``HERMES_DETECTION_MODEL=false``), no
  model is stored, the reply is blank, or its probability is below the
  threshold (``HERMES_DETECTION_MODEL_THRESHOLD``, else the stored one).
* :func:`model_score` — the verdict whatever the threshold (for "Try a reply").
* :func:`current_model` — the newest :class:`DetectorModel`'s weights, loaded
  once per new row in each worker (one small query per call checks the id).
* :func:`detector_store` — store new weights (``train_detector``).
* :func:`default_model_load_after_migrate` — ``migrate`` loads the shipped
  weights (``patterns/data/detector-default.json``) when no model is stored.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from patterns.classifier import ModelVerdict, model_judge
from patterns.matching import model_may_judge
from patterns.models import DetectorModel

DEFAULT_WEIGHTS_PATH = Path(__file__).resolve().parent / "data" / "detector-default.json"


@dataclass(frozen=True)
class StoredModel:
    """The weights of one stored model, its id, version label and stored threshold."""

    id: int
    created: object
    version: str
    weights: dict
    threshold: float


_lock = threading.Lock()
_cached: StoredModel | None = None


def current_model() -> StoredModel | None:
    """The newest stored model (None when none is stored); reloads only when the newest row's
    id or creation time differs from the one loaded (one small query per call)."""
    global _cached
    newest = DetectorModel.objects.order_by("-id").values_list("id", "created").first()
    if newest is None:
        return None
    cached = _cached
    if cached is not None and (cached.id, cached.created) == newest:
        return cached
    with _lock:
        if _cached is not None and (_cached.id, _cached.created) == newest:
            return _cached
        row = (
            DetectorModel.objects.filter(pk=newest[0])
            .values("id", "created", "version", "weights", "threshold")
            .first()
        )
        if row is None:  # deleted meanwhile
            return None
        _cached = StoredModel(**row)
        return _cached


def model_threshold(model: StoredModel) -> float:
    """The threshold in force: the setting when set, else the stored model's."""
    configured = settings.HERMES_DETECTION_MODEL_THRESHOLD
    return model.threshold if configured is None else configured


def _judged(text: str | None) -> tuple[StoredModel | None, ModelVerdict | None]:
    if not settings.HERMES_DETECTION_MODEL or not text or not text.strip():
        return None, None
    model = current_model()
    return (model, None) if model is None else (model, model_judge(model.weights, text))


def model_score(text: str | None) -> ModelVerdict | None:
    """The model's verdict on ``text`` whatever the threshold; None when switched off, no model
    is stored, or the text is blank."""
    return _judged(text)[1]


def model_detect(text: str | None) -> ModelVerdict | None:
    """The model's verdict when it says ``text`` is a failed LLM call (probability at or above
    the threshold in force), else None; None too when the model may not judge the reply
    (:func:`patterns.matching.model_may_judge`: shorter than about a sentence unless the model is sure, an answer
    about errors, or a node's plain JSON output). Call it only when no pattern matched (SPEC §3.3a)."""
    model, verdict = _judged(text)
    return _where_it_may_judge(text, verdict_above_threshold(model, verdict))


def _where_it_may_judge(text: str | None, verdict: ModelVerdict | None) -> ModelVerdict | None:
    """``verdict``, or None when the model may not judge ``text`` (SPEC §3.3a)."""
    if verdict is None or not model_may_judge(
        text, head_chars=settings.PATTERNS_SCAN_CHARS, probability=verdict.probability
    ):
        return None
    return verdict


def verdict_above_threshold(model: StoredModel | None, verdict: ModelVerdict | None) -> ModelVerdict | None:
    """``verdict`` when it reaches the threshold in force for ``model``, else None."""
    if model is None or verdict is None or verdict.probability < model_threshold(model):
        return None
    return verdict


def model_judged(text: str | None) -> tuple[ModelVerdict | None, ModelVerdict | None]:
    """``(score, detection)``: the verdict whatever the threshold, and the same verdict when it
    reaches the threshold and the model may judge the reply (else None) — one model lookup
    for both."""
    model, verdict = _judged(text)
    return verdict, _where_it_may_judge(text, verdict_above_threshold(model, verdict))


def detector_store(*, weights: dict, note: str = "", using: str = "default") -> DetectorModel:
    """Store ``weights`` (a :func:`patterns.training.weights_export` dict) as the newest model;
    every worker picks it up at its next detection."""
    return DetectorModel.objects.using(using).create(
        version=weights["version"], weights=weights, threshold=weights["threshold"], note=note
    )


def default_weights_load() -> dict:
    """The shipped default weights. Raises OSError when the file is missing."""
    with open(DEFAULT_WEIGHTS_PATH, encoding="utf-8") as handle:
        return json.load(handle)


def default_model_load_after_migrate(sender, using="default", apps=None, **kwargs) -> None:
    """post_migrate receiver: store the shipped weights when no model is stored (SPEC §3.3a).
    Never replaces a stored model; does nothing before the table exists or without the file."""
    try:
        model = apps.get_model("patterns", "DetectorModel") if apps is not None else DetectorModel
    except LookupError:  # migrated to a state before the model existed
        return
    if model.objects.using(using).exists() or not DEFAULT_WEIGHTS_PATH.exists():
        return
    weights = default_weights_load()
    model.objects.using(using).create(
        version=weights["version"],
        weights=weights,
        threshold=weights["threshold"],
        note="shipped default (patterns/data/detector-default.json)",
    )
