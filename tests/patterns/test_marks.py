"""Judged replies and false-positive marks (SPEC §1, §4.6): ``patterns.marks``."""

import uuid

import pytest

from patterns import marks
from patterns.matching import Detection
from patterns.models import JudgedReply
from project.errors import Conflict, Forbidden, Invalid, NotFound
from tests.factories import JudgedReplyFactory, PatternFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def marker(db):
    return PatternFactory(name="Zebra fault", pattern="zebra-crossing fault", priority=1)


@pytest.fixture
def flagged(marker):
    """A reply FAILED by ``marker``."""
    return JudgedReplyFactory(
        text="zebra-crossing fault: upstream said no",
        failed=True,
        decided_by="pattern",
        pattern=marker,
        pattern_name=marker.name,
    )


def detection_of(pattern) -> Detection:
    return Detection(
        pattern_id=pattern.pk,
        key=None,
        name=pattern.name,
        pattern=pattern.pattern,
        category=pattern.category,
        retryable=pattern.retryable,
        span=(0, 5),
    )


def test_a_judged_reply_is_kept_with_its_verdict(marker):
    subject = uuid.uuid4()
    row = marks.reply_judged(
        subject=subject,
        text="zebra-crossing fault",
        failed=True,
        decided_by="pattern",
        detection=detection_of(marker),
        category="other",
        subject_url="/runs/r/visits/x/",
        label="run r · node A #1",
    )
    stored = JudgedReply.objects.get(subject=subject)
    assert (stored.pk, stored.failed, stored.pattern, stored.pattern_name) == (row.pk, True, marker, "Zebra fault")
    assert stored.failed_by_pattern and not stored.failed_otherwise


def test_a_repeated_judgement_keeps_the_first_verdict():
    subject = uuid.uuid4()
    marks.reply_judged(subject=subject, text="first", failed=False, decided_by="", detection=None)
    marks.reply_judged(subject=subject, text="second", failed=True, decided_by="engine", detection=None)
    stored = JudgedReply.objects.get(subject=subject)
    assert (stored.text, stored.failed) == ("first", False)


def test_a_long_reply_keeps_both_ends_and_its_whole_length():
    keep = JudgedReply.REPLY_KEEP_CHARS
    text = "H" * keep + "m" * 5 * keep + "T" * keep
    row = marks.reply_judged(subject=uuid.uuid4(), text=text, failed=False, decided_by="", detection=None)
    assert row.text == "H" * keep + "T" * keep and row.length == len(text)


def test_the_unmarked_sample_is_trimmed_but_marks_stay(monkeypatch, staff_user, flagged):
    monkeypatch.setattr(marks, "SAMPLE_SIZE", 3)
    monkeypatch.setattr(marks, "TRIM_EVERY", 1)
    marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user)
    for n in range(6):
        marks.reply_judged(subject=uuid.uuid4(), text=f"reply {n}", failed=False, decided_by="", detection=None)
    kept = list(JudgedReply.objects.order_by("pk").values_list("text", flat=True))
    assert kept[0] == flagged.text and kept[1:] == ["reply 3", "reply 4", "reply 5"]


def test_marking_a_pattern_failure_stores_who_when_and_the_note(flagged, staff_user):
    row = marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user, note="  The reply quoted a log. ")
    stored = JudgedReply.objects.get(pk=flagged.pk)
    assert (stored.mark, stored.marked_by, stored.mark_note) == (
        "false_positive",
        staff_user,
        "The reply quoted a log.",
    )
    assert stored.marked_at == row.marked_at is not None


def test_marking_keeps_the_recorded_verdict(flagged, staff_user, marker):
    marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user)
    stored = JudgedReply.objects.get(pk=flagged.pk)
    assert stored.failed and stored.pattern == marker


def test_marking_again_replaces_the_note_and_the_marker(flagged, staff_user):
    marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user, note="first")
    other = UserFactory(is_staff=True)
    marks.reply_mark_false_positive(subject=flagged.subject, user=other, note="second")
    stored = JudgedReply.objects.get(pk=flagged.pk)
    assert (stored.marked_by, stored.mark_note) == (other, "second")


def test_a_reply_that_passed_cannot_be_marked(staff_user):
    good = JudgedReplyFactory()
    with pytest.raises(Conflict, match="not failed by an error pattern"):
        marks.reply_mark_false_positive(subject=good.subject, user=staff_user)
    assert JudgedReply.objects.get(pk=good.pk).mark == ""


def test_a_reply_failed_by_the_engine_cannot_be_marked(staff_user):
    failed = JudgedReplyFactory(failed=True, decided_by="engine")
    with pytest.raises(Conflict):
        marks.reply_mark_false_positive(subject=failed.subject, user=staff_user)
    assert JudgedReply.objects.get(pk=failed.pk).mark == ""


def test_marking_a_visit_with_no_judged_reply_is_not_found(staff_user):
    with pytest.raises(NotFound):
        marks.reply_mark_false_positive(subject=uuid.uuid4(), user=staff_user)


def test_a_note_over_the_limit_is_refused_naming_the_field(flagged, staff_user):
    with pytest.raises(Invalid) as refused:
        marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user, note="x" * (marks.NOTE_MAX_CHARS + 1))
    assert list(refused.value.errors) == ["note"]
    assert JudgedReply.objects.get(pk=flagged.pk).mark == ""


def test_a_non_staff_user_cannot_mark(flagged, user):
    with pytest.raises(Forbidden):
        marks.reply_mark_false_positive(subject=flagged.subject, user=user)
    assert JudgedReply.objects.get(pk=flagged.pk).mark == ""


def test_unmarking_clears_who_when_and_the_note(flagged, staff_user):
    marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user, note="wrong")
    marks.reply_unmark_false_positive(subject=flagged.subject, user=staff_user)
    stored = JudgedReply.objects.get(pk=flagged.pk)
    assert (stored.mark, stored.marked_at, stored.marked_by, stored.mark_note) == ("", None, None, "")


def test_a_non_staff_user_cannot_unmark(flagged, staff_user, user):
    marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user, note="wrong")
    with pytest.raises(Forbidden):
        marks.reply_unmark_false_positive(subject=flagged.subject, user=user)
    assert JudgedReply.objects.get(pk=flagged.pk).mark == "false_positive"


def test_a_pattern_counts_the_false_positives_ops_marked(marker, flagged, staff_user):
    JudgedReplyFactory(failed=True, decided_by="pattern", pattern=marker, pattern_name=marker.name)
    marks.reply_mark_false_positive(subject=flagged.subject, user=staff_user)
    assert marks.pattern_false_positive_count(pattern=marker) == 1
