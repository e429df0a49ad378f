"""Trying a draft pattern on the last judged replies before it is saved (SPEC §3.5, §4.6).

:func:`pattern_draft_trial` says which recorded replies would now fail with
the draft and which would no longer fail, reading only the judged-reply
sample of :mod:`patterns.marks` (never the run tables).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError

from patterns.detection import current_matcher, enabled_rules
from patterns.matching import Detection, compile_patterns
from patterns.models import HermesErrorPattern, JudgedReply, validate_pattern_text
from project.errors import Invalid

#: Replies a trial reads, newest first.
TRIAL_LIMIT = 500
#: Enough of a reply to recognise it in a list of trial results.
EXCERPT_CHARS = 160


@dataclass(frozen=True)
class TrialRow:
    """One judged reply whose verdict the draft changes. ``detection`` is the
    pattern that matches it: with the draft for "now fails", today for "no
    longer fails"."""

    reply: JudgedReply
    detection: Detection
    excerpt: str


@dataclass(frozen=True)
class DraftTrial:
    """What a draft pattern would change on the last judged replies.

    ``scanned``: replies read; ``draft_matches``: replies the draft itself
    matches; ``now_failing``: replies no enabled pattern catches today that
    would fail with the draft; ``no_longer_failing``: replies caught today
    that no pattern would catch once the draft replaces the edited pattern.
    """

    scanned: int
    draft_matches: int
    now_failing: list[TrialRow]
    no_longer_failing: list[TrialRow]


def pattern_draft_trial(
    *,
    pattern_text: str,
    pattern: HermesErrorPattern | None = None,
    scope: str | None = None,
    limit: int = TRIAL_LIMIT,
) -> DraftTrial:
    """Try ``pattern_text`` (with ``scope``, default: the edited pattern's, else
    ``error``) against the last ``limit`` judged replies.

    The draft joins today's enabled patterns — replacing ``pattern`` when a
    stored one is being edited — and both sets judge every reply with the
    detection windows of settings. A reply that FAILED for another reason
    (the agent's own signal, the engine's report, an empty reply) never
    counts as "now failing": the patterns are not what decides it. Raises
    Invalid (field ``pattern``) when the draft would be refused on save.
    """
    try:
        validate_pattern_text(pattern_text)
    except ValidationError as refused:
        raise Invalid.from_django(refused, field="pattern") from None
    head, tail = settings.PATTERNS_SCAN_CHARS, settings.PATTERNS_SCAN_TAIL_CHARS
    edited_id = pattern.pk if pattern is not None else None
    draft = compile_patterns(
        [
            {
                "id": edited_id or 0,
                "key": getattr(pattern, "key", None),
                "name": getattr(pattern, "name", "") or "(draft)",
                "pattern": pattern_text,
                "category": getattr(pattern, "category", "other"),
                "retryable": getattr(pattern, "retryable", False),
                "priority": getattr(pattern, "priority", 100),
                "scope": scope or getattr(pattern, "scope", None) or "error",
            }
        ]
    )
    # A reply fails when any enabled pattern matches it, so "with the draft"
    # is "the draft, or another pattern, matches": today's cached matcher
    # serves, and only an edit whose own hit is in question needs the set
    # without the edited pattern, compiled once and only then.
    today = current_matcher()
    others = None

    scanned = matches = 0
    now_failing: list[TrialRow] = []
    no_longer: list[TrialRow] = []
    replies = JudgedReply.objects.order_by("-judged_at", "-id")[:limit]
    for reply in replies:
        scanned += 1
        text = reply.text
        before = today.detect(text, head_chars=head, tail_chars=tail)
        drafted = draft.detect(text, head_chars=head, tail_chars=tail)
        matches += drafted is not None
        other = before
        if before is not None and edited_id is not None and before.pattern_id == edited_id:
            if others is None:
                others = compile_patterns(rule for rule in enabled_rules() if rule["id"] != edited_id)
            other = others.detect(text, head_chars=head, tail_chars=tail)
        excerpt = text[:EXCERPT_CHARS]
        if reply.failed_otherwise:
            continue
        if before is None and drafted is not None:
            now_failing.append(TrialRow(reply=reply, detection=drafted, excerpt=excerpt))
        elif before is not None and other is None and drafted is None:
            no_longer.append(TrialRow(reply=reply, detection=before, excerpt=excerpt))
    return DraftTrial(scanned=scanned, draft_matches=matches, now_failing=now_failing, no_longer_failing=no_longer)


__all__ = ["EXCERPT_CHARS", "TRIAL_LIMIT", "DraftTrial", "TrialRow", "pattern_draft_trial"]
