"""Judged replies and the marks ops put on them (SPEC §1, §3.5, §4.6).

* :func:`reply_judged` — what ``contextquery`` calls when a visit with a
  reply completes: the reply and its verdict are kept here, so draft trials,
  counts and training never read run tables, and purging runs keeps them.
* :func:`reply_mark_false_positive` / :func:`reply_unmark_false_positive` —
  ops say a pattern's verdict was wrong (who, when, a note). The verdict
  itself stays as recorded: it is evidence of what the engine was told.
* :func:`pattern_false_positive_count` — for the pattern page and the API.

Rules raise ``project.errors`` (``Invalid`` 422, ``Conflict`` 409, ``Forbidden``
403, ``NotFound`` 404); views and the API map them.
"""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from patterns.matching import Detection
from patterns.models import Category, HermesErrorPattern, JudgedReply
from project.errors import Conflict, Forbidden, Invalid, NotFound

#: The longest note a mark keeps (characters).
NOTE_MAX_CHARS = 2000
#: Unmarked judged replies kept; older ones are deleted as new ones arrive.
SAMPLE_SIZE = 1000
#: The sample is trimmed when a new row's id is a multiple of this.
TRIM_EVERY = 100


def reply_text_kept(text: str) -> str:
    """What is stored of a reply: all of it, or its first and last
    ``JudgedReply.REPLY_KEEP_CHARS`` characters joined. Detection reads only a
    window at each end, so a joined text gets the same verdict as long as
    both windows are shorter than what is kept."""
    keep = JudgedReply.REPLY_KEEP_CHARS
    return text if len(text) <= 2 * keep else text[:keep] + text[-keep:]


def reply_judged(
    *,
    subject: uuid.UUID | str,
    text: str,
    failed: bool,
    decided_by: str,
    detection: Detection | None,
    category: str = "",
    subject_url: str = "",
    label: str = "",
    model_score: float | None = None,
) -> JudgedReply:
    """Keep a reply and its verdict (called by ``contextquery`` at completion).

    ``subject`` is the visit's uuid (a repeat replaces nothing: the first
    verdict stands); ``decided_by`` one of ``JudgedReply.DecidedBy``;
    ``detection`` the pattern that matched the reply, if any; ``model_score``
    the detection model's probability when it judged the reply. Runs in the
    caller's transaction. Trims the unmarked sample to :data:`SAMPLE_SIZE`
    rows now and then.
    """
    row, created = JudgedReply.objects.get_or_create(
        subject=subject,
        defaults={
            "subject_url": subject_url[:500],
            "label": label[:300],
            "text": reply_text_kept(text),
            "length": len(text),
            "failed": failed,
            "decided_by": decided_by,
            "pattern_id": detection.pattern_id if detection else None,
            "pattern_name": (detection.name if detection else "")[:100],
            "category": category or "",
            "model_score": model_score,
            "judged_at": timezone.now(),
        },
    )
    if created and row.pk % TRIM_EVERY == 0:
        JudgedReply.objects.filter(mark="", pk__lte=row.pk - SAMPLE_SIZE).delete()
    return row


def reply_get(*, subject: uuid.UUID | str) -> JudgedReply | None:
    """The judged reply of visit ``subject``, or None (the visit had no reply)."""
    return JudgedReply.objects.filter(subject=subject).select_related("marked_by").first()


def _check_staff(user) -> None:
    if not (user and user.is_authenticated and user.is_staff):
        raise Forbidden(_("Marking verdicts needs a staff user."))


def reply_mark_false_positive(*, subject: uuid.UUID | str, user, note: str = "") -> JudgedReply:
    """Mark the pattern verdict of visit ``subject`` as wrong: stores who, when and ``note``.

    Marking again replaces the note, the marker and the time. Raises
    Forbidden for a non-staff user, Invalid (422, field ``note``) for a note
    over :data:`NOTE_MAX_CHARS` characters, NotFound when no reply of that
    visit was judged, Conflict (409) when it was not failed by a pattern.
    Returns the saved row.
    """
    _check_staff(user)
    note = (note or "").strip()
    if len(note) > NOTE_MAX_CHARS:
        raise Invalid.field(
            "note",
            _("must be at most %(limit)d characters, not %(length)d.") % {"limit": NOTE_MAX_CHARS, "length": len(note)},
        )
    with transaction.atomic():
        row = JudgedReply.objects.select_for_update().filter(subject=subject).first()
        if row is None:
            raise NotFound(_("No judged reply of visit %(visit)s is recorded.") % {"visit": subject})
        if not (row.failed_by_pattern or row.failed_by_model):
            raise Conflict(
                _(
                    "Visit %(visit)s was not failed by an error pattern or the detection model; only a pattern's "
                    "or the model's verdict can be marked as a false positive."
                )
                % {"visit": subject}
            )
        row.mark = JudgedReply.Mark.FALSE_POSITIVE
        row.mark_note = note
        row.marked_by = user
        row.marked_at = timezone.now()
        row.save(update_fields=["mark", "mark_note", "marked_by", "marked_at"])
    return row


def reply_mark_missed_failure(*, subject: uuid.UUID | str, user, note: str = "", category: str = "") -> JudgedReply:
    """Mark a reply that passed as a failure nothing caught (SPEC §3.3a): who, when, ``note`` and
    the ``category`` ops name (empty: ``other``). ``train_detector`` learns from it.

    Raises Forbidden for a non-staff user, Invalid (422, field ``note`` or ``category``) for a
    note over :data:`NOTE_MAX_CHARS` characters or an unknown category, NotFound when no reply of
    that visit was judged, Conflict (409) when the reply was failed. Returns the saved row.
    """
    _check_staff(user)
    note = _note_checked(note)
    category = (category or "").strip()
    if category and category not in Category.values:
        raise Invalid.field(
            "category",
            _("must be one of %(allowed)s, not %(value)r.")
            % {"allowed": ", ".join(Category.values), "value": category},
        )
    with transaction.atomic():
        row = JudgedReply.objects.select_for_update().filter(subject=subject).first()
        if row is None:
            raise NotFound(_("No judged reply of visit %(visit)s is recorded.") % {"visit": subject})
        if row.failed:
            raise Conflict(
                _("Visit %(visit)s already failed; only a reply that passed can be marked as a missed failure.")
                % {"visit": subject}
            )
        row.mark = JudgedReply.Mark.MISSED_FAILURE
        row.mark_note = note
        row.category = category or Category.OTHER
        row.marked_by = user
        row.marked_at = timezone.now()
        row.save(update_fields=["mark", "mark_note", "category", "marked_by", "marked_at"])
    return row


def _note_checked(note: str) -> str:
    note = (note or "").strip()
    if len(note) > NOTE_MAX_CHARS:
        raise Invalid.field(
            "note",
            _("must be at most %(limit)d characters, not %(length)d.") % {"limit": NOTE_MAX_CHARS, "length": len(note)},
        )
    return note


def marked_rows() -> list[dict]:
    """Ops' marks as training rows (SPEC §3.3a): a false positive is an ordinary answer, a missed
    failure a failed call of its marked category. Each row is its own family."""
    rows = []
    for row in JudgedReply.objects.exclude(mark="").order_by("id").values("id", "text", "mark", "category"):
        missed = row["mark"] == JudgedReply.Mark.MISSED_FAILURE
        rows.append(
            {
                "id": f"mark-{row['id']}",
                "text": row["text"],
                "isError": missed,
                "category": (row["category"] or Category.OTHER) if missed else None,
                "family": f"mark:{row['id']}",
                "source": "ops mark",
            }
        )
    return rows


def reply_unmark_false_positive(*, subject: uuid.UUID | str, user) -> JudgedReply | None:
    """Take back a mark, false positive or missed failure (who, when and note are cleared).

    Unmarking a reply that is not marked, or a visit with no judged reply,
    changes nothing. Raises Forbidden for a non-staff user. Returns the row.
    """
    _check_staff(user)
    with transaction.atomic():
        row = JudgedReply.objects.select_for_update().filter(subject=subject).first()
        if row is not None and row.mark:
            row.mark, row.mark_note, row.marked_by, row.marked_at = JudgedReply.Mark.NONE, "", None, None
            row.save(update_fields=["mark", "mark_note", "marked_by", "marked_at"])
    return row


def pattern_false_positive_count(*, pattern: HermesErrorPattern) -> int:
    """How many of ``pattern``'s verdicts ops marked as false positives (one query)."""
    return JudgedReply.objects.filter(pattern=pattern, mark=JudgedReply.Mark.FALSE_POSITIVE).count()


__all__ = [
    "NOTE_MAX_CHARS",
    "pattern_false_positive_count",
    "reply_get",
    "reply_judged",
    "marked_rows",
    "reply_mark_false_positive",
    "reply_mark_missed_failure",
    "reply_text_kept",
    "reply_unmark_false_positive",
]
