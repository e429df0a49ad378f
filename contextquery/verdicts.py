"""Telling the patterns when they were wrong (SPEC §4.6, §3.5).

* :func:`visit_mark_false_positive` / :func:`visit_unmark_false_positive`:
  ops record that a visit FAILED by a pattern was really a good reply (who,
  when, a note). The verdict itself stays as recorded: it is evidence of what
  the engine was told.
* :func:`pattern_verdict_counts` and :func:`pattern_visits`: a pattern's
  recorded hits and false positives, for the pattern page.
* :func:`pattern_draft_trial`: run a draft pattern against the last recorded
  replies and say which would now fail and which would no longer, before
  the draft is saved.

Rules raise ``project.errors`` (``Invalid`` 422, ``Conflict`` 409,
``Forbidden`` 403); views map them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, Case, Count, Q, QuerySet, Value, When
from django.db.models.functions import Left, Length, Right
from django.utils import timezone

from contextquery.models import Visit, VisitStatus
from patterns.detection import Detection, compile_patterns, current_matcher, validate_pattern
from patterns.models import HermesErrorPattern
from project.errors import Conflict, Forbidden, Invalid

NOTE_MAX_CHARS = 2000
TRIAL_LIMIT = 500
#: Enough of a reply to recognise it in a list of trial results.
EXCERPT_CHARS = 160


def visit_failed_by_pattern(visit: Visit) -> bool:
    """True when ``visit`` is FAILED and its reply matched an error pattern: the
    pattern decided (SPEC §4.4 step 5) or agreed with the agent's own failure
    signal (step 1). Either way the match counted as the pattern's hit, so ops
    may mark it wrong."""
    return visit.status == VisitStatus.FAILED and bool(visit.matched_pattern_id or visit.matched_pattern_name)


def _check_staff(user) -> None:
    if not (user and user.is_authenticated and user.is_staff):
        raise Forbidden("Marking verdicts needs a staff user.")


def visit_mark_false_positive(*, visit: Visit, user, note: str = "") -> Visit:
    """Mark ``visit``'s pattern verdict as wrong: stores who, when and ``note``.

    Marking again replaces the note, the marker and the time. Raises Forbidden
    for a non-staff user, Conflict (409) when the visit was not FAILED by a
    pattern, Invalid (422, field ``note``) for a note over 2000 characters or
    with a NUL character. Returns the saved visit.
    """
    _check_staff(user)
    note = (note or "").strip()
    if len(note) > NOTE_MAX_CHARS:
        raise Invalid.field("note", f"must be at most {NOTE_MAX_CHARS} characters, not {len(note)}.")
    if "\x00" in note:
        raise Invalid.field("note", "must not contain NUL characters.")
    with transaction.atomic():
        locked = Visit.objects.select_for_update().get(pk=visit.pk)
        if not visit_failed_by_pattern(locked):
            raise Conflict(
                f"Visit '{locked.visit_uuid}' was not failed by an error pattern ({locked.status}); "
                "only a pattern's verdict can be marked as a false positive."
            )
        locked.false_positive_at = timezone.now()
        locked.false_positive_by = user
        locked.false_positive_note = note
        locked.save(update_fields=["false_positive_at", "false_positive_by", "false_positive_note"])
    return locked


def visit_unmark_false_positive(*, visit: Visit, user) -> Visit:
    """Take back a false-positive mark (who, when and note are cleared).

    Unmarking a visit that is not marked changes nothing. Raises Forbidden for
    a non-staff user. Returns the saved visit.
    """
    _check_staff(user)
    with transaction.atomic():
        locked = Visit.objects.select_for_update().get(pk=visit.pk)
        if locked.false_positive_at is not None:
            locked.false_positive_at = None
            locked.false_positive_by = None
            locked.false_positive_note = ""
            locked.save(update_fields=["false_positive_at", "false_positive_by", "false_positive_note"])
    return locked


def pattern_verdict_counts(*, pattern: HermesErrorPattern) -> dict:
    """``{"visits": n, "falsePositives": m}``: recorded visits FAILED by ``pattern``
    and how many of them ops marked as false positives (one query)."""
    counts = Visit.objects.filter(matched_pattern=pattern, status=VisitStatus.FAILED).aggregate(
        visits=Count("id"), false_positives=Count("id", filter=Q(false_positive_at__isnull=False))
    )
    return {"visits": counts["visits"], "falsePositives": counts["false_positives"]}


def pattern_visits(*, pattern: HermesErrorPattern, false_positive: bool | None = None) -> QuerySet:
    """Visits FAILED by ``pattern``, newest first, with their run;
    ``false_positive`` True/False keeps only the marked/unmarked ones."""
    visits = Visit.objects.filter(matched_pattern=pattern, status=VisitStatus.FAILED)
    if false_positive is not None:
        visits = visits.filter(false_positive_at__isnull=not false_positive)
    return visits.select_related("run", "false_positive_by").defer("output", "input", "final_text").order_by(
        "-ended_at", "-id"
    )


# --------------------------------------------------------------------------- draft trials


@dataclass(frozen=True)
class TrialRow:
    """One recorded reply whose verdict the draft changes. ``detection`` is
    the pattern that matches it: with the draft for "now fails", today for
    "no longer fails"."""

    visit: Visit
    detection: Detection
    excerpt: str


@dataclass(frozen=True)
class DraftTrial:
    """What a draft pattern would change on the last recorded replies.

    ``scanned``: replies read; ``draft_matches``: replies the draft itself
    matches; ``now_failing``: replies no enabled pattern catches today that
    would fail with the draft; ``no_longer_failing``: replies caught today that
    no pattern would catch once the draft replaces the edited pattern.
    """

    scanned: int
    draft_matches: int
    now_failing: list[TrialRow]
    no_longer_failing: list[TrialRow]


def pattern_draft_trial(*, pattern_text: str, pattern: HermesErrorPattern | None = None,
                        limit: int = TRIAL_LIMIT) -> DraftTrial:
    """Try ``pattern_text`` against the last ``limit`` recorded replies (SPEC §3.5, §4.6).

    Replies are the ``finalText`` of visits, newest first by end time. The
    draft joins today's enabled patterns — replacing ``pattern`` when a stored
    one is being edited — and both sets judge every reply with the detection
    windows of settings. A reply that already FAILED for another reason (the
    agent's own signal, an error envelope) never counts as "now failing": the
    patterns are not what decides it. Raises Invalid (field ``pattern``) when
    the draft would be refused on save.
    """
    try:
        validate_pattern(pattern_text)
    except ValueError as exc:
        raise Invalid.field("pattern", str(exc)) from None
    head, tail = settings.PATTERNS_SCAN_CHARS, settings.PATTERNS_SCAN_TAIL_CHARS
    edited_id = pattern.pk if pattern is not None else None
    draft = compile_patterns([{
        "id": edited_id or 0,
        "key": getattr(pattern, "key", None),
        "name": getattr(pattern, "name", "") or "(draft)",
        "pattern": pattern_text,
        "category": getattr(pattern, "category", "other"),
        "retryable": getattr(pattern, "retryable", False),
        "priority": getattr(pattern, "priority", 100),
    }])
    # A reply fails when any enabled pattern matches it, so "with the draft"
    # is "the draft, or another pattern, matches": today's cached matcher
    # serves, and only an edit whose own hit is in question needs the set
    # without the edited pattern, compiled once and only then.
    today = current_matcher()
    others = None

    scanned = matches = 0
    now_failing: list[TrialRow] = []
    no_longer: list[TrialRow] = []
    for visit in _recorded_replies(head=head, tail=tail, limit=limit):
        scanned += 1
        text = visit.reply_windows
        before = today.detect(text, head_chars=head, tail_chars=tail)
        drafted = draft.detect(text, head_chars=head, tail_chars=tail)
        matches += drafted is not None
        other = before
        if before is not None and edited_id is not None and before.pattern_id == edited_id:
            if others is None:
                others = compile_patterns(
                    HermesErrorPattern.objects.filter(enabled=True).exclude(pk=edited_id).values(
                        "id", "key", "name", "pattern", "category", "retryable", "priority"
                    )
                )
            other = others.detect(text, head_chars=head, tail_chars=tail)
        excerpt = text[:EXCERPT_CHARS]
        # The agent's own failure signal, or an engine-reported failure, fails
        # the visit whatever the patterns say.
        failed_otherwise = visit.status == VisitStatus.FAILED and (
            visit.agent_failed or not visit_failed_by_pattern(visit)
        )
        if before is None and drafted is not None and not failed_otherwise:
            now_failing.append(TrialRow(visit=visit, detection=drafted, excerpt=excerpt))
        elif before is not None and other is None and drafted is None and not failed_otherwise:
            no_longer.append(TrialRow(visit=visit, detection=before, excerpt=excerpt))
    return DraftTrial(scanned=scanned, draft_matches=matches, now_failing=now_failing, no_longer_failing=no_longer)


def _recorded_replies(*, head: int, tail: int, limit: int):
    """The last ``limit`` visits with a reply, each with ``reply_windows``: text
    that detection judges exactly as the whole reply.

    A reply can be megabytes; detection only reads the first ``head`` and last
    ``tail`` characters plus one character of context either side, so the
    database sends those and they are joined. The joined text is longer than
    ``head``, its head and tail windows and their context characters are the
    original ones, and literals are matched inside one window only — so the
    verdict is the same.
    """
    keep = head + tail + 2
    rows = (
        Visit.objects.filter(final_text__isnull=False)
        .exclude(status__in=[VisitStatus.RUNNING])
        .select_related("run")
        .defer("output", "input", "final_text", "registration", "completion")
        .annotate(
            reply_length=Length("final_text"),
            reply_head=Left("final_text", keep),
            reply_tail=Right("final_text", tail + 1),
            agent_failed=Case(When(completion__agentResult__failed=True, then=Value(True)),
                              default=Value(False), output_field=BooleanField()),
        )
        .order_by("-ended_at", "-id")[:limit]
    )
    for visit in rows:
        if visit.reply_length <= keep:
            visit.reply_windows = visit.reply_head
        else:
            visit.reply_windows = visit.reply_head[: head + 1] + visit.reply_tail
        yield visit


__all__ = [
    "DraftTrial",
    "TrialRow",
    "pattern_draft_trial",
    "pattern_verdict_counts",
    "pattern_visits",
    "visit_failed_by_pattern",
    "visit_mark_false_positive",
    "visit_unmark_false_positive",
]
