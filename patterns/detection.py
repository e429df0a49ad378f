"""Detection against the stored pattern set (SPEC §3.3).

:func:`detect` judges a reply with the enabled patterns: they are compiled
once per change of the set (:mod:`patterns.matching`) and the matcher is
reused until the version row says the set changed again, in any worker
process. Should the stored set fail to compile (too costly as a whole), the
last set that compiled stays in force: its rules are kept on the version row,
so a new worker starts from it too, and :func:`compile_status` tells the
pattern page. :func:`count_hit` records a hit without counting as a change;
:func:`patterns_changed` marks a change. :func:`reply_detect` adds the learned
second signal (SPEC §3.3a): the model judges what no pattern matched.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import threading
from dataclasses import dataclass

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from patterns.classifier import ModelVerdict
from patterns.detector import model_detect, model_judged
from patterns.matching import (
    Detection,
    Matcher,
    SetTooCostly,
    compile_patterns,
    is_blank,
    reply_rules_detect,
    verdict_json,
)
from patterns.models import Category, HermesErrorPattern, PatternSetVersion

logger = logging.getLogger(__name__)

_cache_lock = threading.Lock()
_cached: tuple[int | None, Matcher | None] = (None, None)


def _current_version() -> int:
    version = PatternSetVersion.objects.filter(pk=1).values_list("version", flat=True).first()
    return 0 if version is None else version


#: The fields of a pattern the matcher needs.
RULE_FIELDS = ("id", "key", "name", "pattern", "category", "retryable", "priority", "scope")


def enabled_rules() -> list[dict]:
    """The enabled patterns as plain dicts of :data:`RULE_FIELDS`, for :func:`compile_patterns`."""
    return list(HermesErrorPattern.objects.filter(enabled=True).order_by("priority", "id").values(*RULE_FIELDS))


def _remember_compiled(version: int, rules: list[dict]) -> None:
    """Keep ``rules`` as the last set that compiled (one write per change, by the first worker)."""
    PatternSetVersion.objects.filter(pk=1, version=version).exclude(compiled_version=version).update(
        compiled_version=version, compiled_rules=rules, compile_error=""
    )


def _fallback(version: int, refused: SetTooCostly, previous: Matcher | None) -> Matcher:
    """The matcher of the last set that compiled: this process's, else the stored one."""
    logger.error(
        "The enabled error patterns (version %s) do not compile: %s; keeping the last set that did.", version, refused
    )
    PatternSetVersion.objects.filter(pk=1, version=version).update(compile_error=str(refused))
    if previous is not None:
        return previous
    stored = PatternSetVersion.objects.filter(pk=1).values_list("compiled_rules", flat=True).first()
    try:
        return compile_patterns(stored or [])
    except SetTooCostly:  # pragma: no cover - a stored set compiled once
        return compile_patterns([])


def current_matcher() -> Matcher:
    """The matcher for the enabled patterns as stored now (compiled once per change),
    or, when they do not compile, for the last set that did (SPEC §3.3)."""
    global _cached
    # Read the version before the rows: a change that lands in between then
    # only causes one extra rebuild, never a stale matcher.
    version = _current_version()
    cached_version, matcher = _cached
    if matcher is not None and cached_version == version:
        return matcher
    with _cache_lock:
        cached_version, previous = _cached
        if previous is not None and cached_version == version:
            return previous
        rules = enabled_rules()
        try:
            matcher = compile_patterns(rules)
        except SetTooCostly as refused:
            matcher = _fallback(version, refused, previous)
        else:
            _remember_compiled(version, rules)
        _cached = (version, matcher)
        return matcher


@dataclass(frozen=True)
class CompileStatus:
    """Whether the stored set is the one in force (SPEC §3.3): ``failed`` when it
    did not compile, ``error`` says why."""

    failed: bool
    error: str


def compile_status() -> CompileStatus:
    """Compile the current set if needed, then say whether it is in force."""
    current_matcher()
    row = PatternSetVersion.objects.filter(pk=1).values("version", "compiled_version", "compile_error").first()
    if row is None or not row["compile_error"] or row["compiled_version"] == row["version"]:
        return CompileStatus(failed=False, error="")
    return CompileStatus(failed=True, error=row["compile_error"])


def _windows() -> dict:
    return {"head_chars": settings.PATTERNS_SCAN_CHARS, "tail_chars": settings.PATTERNS_SCAN_TAIL_CHARS}


def detect(text: str | None) -> Detection | None:
    """Judge one reply against the enabled patterns (SPEC §3.3); counts no hit.

    A blank reply (None, empty, whitespace, or an answer envelope with no text in it:
    :func:`patterns.matching.is_blank`) is FAILED: a :class:`Detection`
    with ``matched_by="blank"``, category ``incomplete`` and no pattern.
    Windows come from ``settings.PATTERNS_SCAN_CHARS`` and
    ``settings.PATTERNS_SCAN_TAIL_CHARS``. Costs one small query per call to
    check the pattern-set version; recompiles only after a change.
    """
    return reply_rules_detect(current_matcher(), text, **_windows())


def detect_matches(text: str | None, *, matcher: Matcher | None = None) -> list[Detection]:
    """Every enabled pattern that matches ``text``, in ``(priority, id)`` order (SPEC §3.4).
    ``matcher``: the one in force when the caller has it already (else :func:`current_matcher`)."""
    if is_blank(text):
        return []
    return (matcher or current_matcher()).matches(text, **_windows())


def match_json(detection: Detection) -> dict:
    """One entry of ``matches``: ``{id, key, name, category, retryable, span}``."""
    return {
        "id": detection.pattern_id,
        "key": detection.key,
        "name": detection.name,
        "category": detection.category,
        "retryable": detection.retryable,
        "span": list(detection.span),
    }


def detect_json(text: str | None) -> dict:
    """The verdict of ``POST /detect`` and ``manage.py detect`` (SPEC §3.4): the
    verdict of :func:`reply_detect` (:func:`reply_verdict_json`) plus ``matches``, every enabled pattern that
    matches in ``(priority, id)`` order (empty for a blank reply)."""
    matcher = current_matcher()
    verdict = reply_verdict_json(reply_detect(text, matcher=matcher))
    verdict["matches"] = [match_json(found) for found in detect_matches(text, matcher=matcher)]
    return verdict


def patterns_changed(*, using: str = "default") -> None:
    """Mark the pattern set as changed so every process recompiles at its next detection.

    Called by the model signals on save and delete; call it yourself after a
    bulk ``QuerySet.update()``/``delete()`` of patterns (they send no signals).
    Runs in the caller's transaction, so a rolled-back change bumps nothing.
    """
    version_bump(PatternSetVersion, using=using)


def version_bump(model, *, using: str = "default") -> None:
    """Write a fresh random version into the one row of ``model`` (a PatternSetVersion class,
    possibly a migration's historical one), creating the row when it is missing."""
    version = secrets.randbits(62) + 1
    if not model.objects.using(using).filter(pk=1).update(version=version):
        model.objects.using(using).update_or_create(pk=1, defaults={"version": version})


def count_hit(*, pattern_id: int) -> None:
    """Add one hit to a pattern: ``hit_count + 1`` and ``last_hit_at = now`` (SPEC §3.1).

    A plain ``QuerySet.update``: no history row, no version bump, no rebuild.
    An unknown id (a pattern deleted meanwhile) is ignored.
    """
    HermesErrorPattern.objects.filter(pk=pattern_id).update(hit_count=F("hit_count") + 1, last_hit_at=timezone.now())


def on_pattern_saved_or_deleted(sender, instance=None, using="default", **kwargs) -> None:
    """post_save/post_delete receiver for HermesErrorPattern (wired in ``PatternsConfig.ready``)."""
    update_fields = kwargs.get("update_fields")
    if update_fields and set(update_fields) <= {"hit_count", "last_hit_at"}:
        return
    patterns_changed(using=using)


@dataclass(frozen=True)
class ReplyDetection:
    """A reply judged by both signals (SPEC §3.3, §3.3a): ``matched_by`` is ``pattern`` (the
    ``detection`` decided), ``model`` (no pattern matched, the model's probability reached the
    threshold), ``blank`` (an empty reply) or None (no error). ``model_score`` is the model's
    probability whenever the model is on and the reply is not blank (None otherwise)."""

    matched_by: str | None
    detection: Detection | None = None
    model: ModelVerdict | None = None
    model_score: float | None = None

    @property
    def is_error(self) -> bool:
        return self.matched_by is not None

    @property
    def category(self) -> str | None:
        if self.matched_by == "pattern":
            return self.detection.category
        if self.matched_by == "model":
            return self.model.category
        return Category.INCOMPLETE if self.matched_by == "blank" else None

    @property
    def retryable(self) -> bool | None:
        if self.matched_by == "pattern":
            return bool(self.detection.retryable)
        if self.matched_by == "model":
            return self.model.retryable
        return False if self.matched_by == "blank" else None


def model_verdict_named(text: str, verdict: ModelVerdict, *, matcher: Matcher | None = None) -> ModelVerdict:
    """``verdict`` (the model's: the reply is a failed call) with the category and
    retryable flag of the first enabled pattern whose words appear anywhere in the
    scanned windows of ``text`` (:meth:`Matcher.name`), or as it is when none does.

    Measured leave-source-out on replies from sources the patterns were not
    written for (the second batch's folds): of the failed replies no pattern
    matched in place, the patterns' words named 20 of 21 right where they
    appeared, the category model 71 % (issue 15). ``matcher``: the one in
    force when the caller has it already (else :func:`current_matcher`)."""
    named = (matcher or current_matcher()).name(text, **_windows())
    if named is None:
        return verdict
    return dataclasses.replace(verdict, category=named.category, retryable=bool(named.retryable))


def model_decision(text: str | None) -> ModelVerdict | None:
    """The model's verdict when it decides ``text`` is a failed call (:func:`model_detect`),
    its category named by :func:`model_verdict_named`; else None. Call it when no pattern matched."""
    verdict = model_detect(text)
    return None if verdict is None else model_verdict_named(text, verdict)


def reply_detect(text: str | None, *, matcher: Matcher | None = None) -> ReplyDetection:
    """Judge a reply with the patterns first and the model on what no pattern matched
    (SPEC §3.3a); a blank reply is an error (``incomplete``). Counts no hit.
    ``matcher``: the one in force when the caller has it already (else :func:`current_matcher`)."""
    if is_blank(text):
        return ReplyDetection(matched_by="blank")
    matcher = matcher or current_matcher()
    found = matcher.detect(text, **_windows())
    scored, verdict = model_judged(text)
    score = scored.probability if scored is not None else None
    if found is not None:
        return ReplyDetection(matched_by="pattern", detection=found, model_score=score)
    if verdict is not None:
        named = model_verdict_named(text, verdict, matcher=matcher)
        return ReplyDetection(matched_by="model", model=named, model_score=score)
    return ReplyDetection(matched_by=None, model_score=score)


def reply_verdict_json(judged: ReplyDetection) -> dict:
    """The POST /detect answer: the pattern verdict's fields (null when no pattern matched),
    ``isError``, ``category`` and ``retryable`` from whichever signal decided, plus
    ``matchedBy`` (``pattern`` | ``model`` | ``blank`` | null) and ``modelScore``."""
    verdict = verdict_json(judged.detection)
    verdict.update(
        isError=judged.is_error,
        category=judged.category,
        retryable=judged.retryable,
        matchedBy=judged.matched_by,
        modelScore=None if judged.model_score is None else round(judged.model_score, 4),
    )
    return verdict
