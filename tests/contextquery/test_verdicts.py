"""False-positive marks and draft pattern trials (SPEC §4.6, §3.5): ``contextquery.verdicts``."""

import pytest
from django.db.models.functions import Length

from contextquery import verdicts
from contextquery.models import Visit
from patterns.detection import detect
from patterns.models import HermesErrorPattern
from project.errors import Conflict, Forbidden, Invalid
from tests.contextquery.factories import CHAIN, VisitFactory, WorkflowRunFactory
from tests.factories import PatternFactory, UserFactory

pytestmark = pytest.mark.django_db

MARKER = "zebra-crossing fault"
GOOD = "All three sources agree; the report is ready."


@pytest.fixture
def marker(db):
    """A custom pattern no built-in shadows."""
    return PatternFactory(name="Zebra fault", pattern=MARKER, priority=1)


@pytest.fixture
def flagged(record, marker):
    """A visit FAILED by ``marker``."""
    return record(CHAIN).visit("A", final_text=f"{MARKER}: upstream said no")


@pytest.fixture
def good_visit(record):
    return record(CHAIN).visit("A", final_text=GOOD)


# --- marking false positives --------------------------------------------------------------


def test_marking_a_pattern_failure_stores_who_when_and_the_note(flagged, staff_user):
    visit = verdicts.visit_mark_false_positive(visit=flagged, user=staff_user, note="  The reply quoted a log.  ")
    stored = Visit.objects.get(pk=flagged.pk)
    assert stored.false_positive_by == staff_user
    assert stored.false_positive_at is not None and stored.false_positive_note == "The reply quoted a log."
    assert visit.false_positive_at == stored.false_positive_at


def test_marking_keeps_the_recorded_verdict(flagged, staff_user, marker):
    verdicts.visit_mark_false_positive(visit=flagged, user=staff_user, note="")
    stored = Visit.objects.get(pk=flagged.pk)
    assert stored.status == "FAILED" and stored.matched_pattern == marker


def test_marking_again_replaces_the_note_and_the_marker(flagged, staff_user):
    verdicts.visit_mark_false_positive(visit=flagged, user=staff_user, note="first")
    other = UserFactory(is_staff=True)
    verdicts.visit_mark_false_positive(visit=flagged, user=other, note="second")
    stored = Visit.objects.get(pk=flagged.pk)
    assert (stored.false_positive_by, stored.false_positive_note) == (other, "second")


def test_a_successful_visit_cannot_be_marked(good_visit, staff_user):
    with pytest.raises(Conflict, match="not failed by an error pattern"):
        verdicts.visit_mark_false_positive(visit=good_visit, user=staff_user, note="")
    assert Visit.objects.get(pk=good_visit.pk).false_positive_at is None


def test_a_visit_failed_by_the_engine_cannot_be_marked(record, staff_user):
    visit = record(CHAIN).visit("A", status="FAILED", error="CRM answered 503")
    with pytest.raises(Conflict):
        verdicts.visit_mark_false_positive(visit=visit, user=staff_user, note="")
    assert Visit.objects.get(pk=visit.pk).false_positive_at is None


def test_a_note_over_the_limit_is_refused_naming_the_field(flagged, staff_user):
    with pytest.raises(Invalid) as refused:
        verdicts.visit_mark_false_positive(visit=flagged, user=staff_user, note="x" * (verdicts.NOTE_MAX_CHARS + 1))
    assert "note" in refused.value.errors
    assert Visit.objects.get(pk=flagged.pk).false_positive_at is None


def test_a_note_with_a_nul_character_is_refused(flagged, staff_user):
    with pytest.raises(Invalid) as refused:
        verdicts.visit_mark_false_positive(visit=flagged, user=staff_user, note="bad\x00note")
    assert "note" in refused.value.errors


def test_a_non_staff_user_cannot_mark(flagged, user):
    with pytest.raises(Forbidden):
        verdicts.visit_mark_false_positive(visit=flagged, user=user, note="")
    assert Visit.objects.get(pk=flagged.pk).false_positive_at is None


def test_unmarking_clears_who_when_and_the_note(flagged, staff_user):
    verdicts.visit_mark_false_positive(visit=flagged, user=staff_user, note="wrong")
    verdicts.visit_unmark_false_positive(visit=flagged, user=staff_user)
    stored = Visit.objects.get(pk=flagged.pk)
    assert (stored.false_positive_at, stored.false_positive_by, stored.false_positive_note) == (None, None, "")


def test_a_non_staff_user_cannot_unmark(flagged, staff_user, user):
    verdicts.visit_mark_false_positive(visit=flagged, user=staff_user, note="wrong")
    with pytest.raises(Forbidden):
        verdicts.visit_unmark_false_positive(visit=flagged, user=user)
    assert Visit.objects.get(pk=flagged.pk).false_positive_at is not None


# --- a pattern's recorded failures ----------------------------------------------------------


def test_a_pattern_counts_its_failed_visits_and_false_positives(record, marker, staff_user):
    rec = record(CHAIN)
    first = rec.visit("A", final_text=f"{MARKER} one")
    rec.visit("B", first, final_text=f"{MARKER} two")
    rec.visit("C", first, final_text=GOOD)
    verdicts.visit_mark_false_positive(visit=first, user=staff_user, note="")
    assert verdicts.pattern_verdict_counts(pattern=marker) == {"visits": 2, "falsePositives": 1}


def test_a_pattern_lists_only_its_false_positives_when_asked(record, marker, staff_user):
    rec = record(CHAIN)
    first = rec.visit("A", final_text=f"{MARKER} one")
    second = rec.visit("B", first, final_text=f"{MARKER} two")
    verdicts.visit_mark_false_positive(visit=second, user=staff_user, note="")
    assert list(verdicts.pattern_visits(pattern=marker, false_positive=True)) == [second]
    assert list(verdicts.pattern_visits(pattern=marker, false_positive=False)) == [first]
    assert set(verdicts.pattern_visits(pattern=marker)) == {first, second}


# --- draft trials ---------------------------------------------------------------------------


def test_a_new_draft_lists_the_good_replies_it_would_now_fail(good_visit, record):
    other = record(CHAIN).visit("A", final_text="Nothing to see here.")
    trial = verdicts.pattern_draft_trial(pattern_text="sources agree")
    assert [row.visit for row in trial.now_failing] == [good_visit]
    assert trial.no_longer_failing == [] and trial.draft_matches == 1
    assert other not in [row.visit for row in trial.now_failing]


def test_a_reply_already_failed_by_another_pattern_is_not_listed(flagged):
    trial = verdicts.pattern_draft_trial(pattern_text="upstream said no")
    assert trial.draft_matches == 1 and trial.now_failing == [] and trial.no_longer_failing == []


def test_a_reply_failed_for_another_reason_is_not_listed_as_now_failing(record):
    record(CHAIN).visit("A", status="FAILED", error="boom", final_text="The sources agree but the CRM was down.")
    trial = verdicts.pattern_draft_trial(pattern_text="sources agree")
    assert trial.draft_matches == 1 and trial.now_failing == []


def test_editing_a_pattern_lists_the_replies_it_would_no_longer_fail(flagged, marker):
    trial = verdicts.pattern_draft_trial(pattern_text="zebra-crossing outage", pattern=marker)
    assert [row.visit for row in trial.no_longer_failing] == [flagged]
    assert trial.no_longer_failing[0].detection.pattern_id == marker.pk
    assert trial.now_failing == []


def test_an_edit_is_not_listed_when_the_agent_itself_reported_the_failure(record, marker):
    visit = record(CHAIN).visit("A", final_text=f"{MARKER}: upstream said no",
                                agent_result={"failed": True, "failureReason": "rate_limit"})
    assert visit.matched_pattern == marker
    trial = verdicts.pattern_draft_trial(pattern_text="zebra-crossing outage", pattern=marker)
    assert trial.no_longer_failing == []


def test_an_edit_is_not_listed_when_another_pattern_still_catches_the_reply(flagged, marker):
    PatternFactory(name="Upstream refusal", pattern="upstream said no")
    trial = verdicts.pattern_draft_trial(pattern_text="zebra-crossing outage", pattern=marker)
    assert trial.no_longer_failing == []


def test_a_draft_trial_reads_only_the_last_replies(record):
    rec = record(CHAIN)
    oldest = rec.visit("A", final_text="ledger mismatch in the oldest reply")
    newer = [rec.visit(node, oldest, final_text=f"ledger mismatch {node}") for node in "BC"]
    trial = verdicts.pattern_draft_trial(pattern_text="ledger mismatch", limit=2)
    assert trial.scanned == 2
    assert {row.visit for row in trial.now_failing} == set(newer)


def test_a_draft_that_would_be_refused_on_save_is_refused(good_visit):
    with pytest.raises(Invalid) as refused:
        verdicts.pattern_draft_trial(pattern_text="regex:(unclosed")
    assert "pattern" in refused.value.errors


def test_a_draft_trial_saves_nothing_and_counts_no_hit(good_visit, marker):
    before = list(HermesErrorPattern.objects.values_list("id", "pattern", "hit_count").order_by("id"))
    verdicts.pattern_draft_trial(pattern_text="sources agree", pattern=marker)
    assert list(HermesErrorPattern.objects.values_list("id", "pattern", "hit_count").order_by("id")) == before
    assert Visit.objects.get(pk=good_visit.pk).status == "SUCCESS"


@pytest.mark.parametrize("where", ["head", "tail", "middle"])
def test_a_long_reply_is_judged_as_detection_judges_the_whole_text(settings, where):
    """Only the windows are read from the database; the verdict must equal ``detect`` on the whole reply."""
    settings.PATTERNS_SCAN_CHARS, settings.PATTERNS_SCAN_TAIL_CHARS = 50, 40
    filler = "fine words " * 20_000
    text = {"head": f"quokka stampede {filler}", "tail": f"{filler}quokka stampede",
            "middle": f"{filler}quokka stampede{filler}"}[where]
    run = WorkflowRunFactory(graph=CHAIN)
    VisitFactory(run=run, final_text=text)
    pattern = PatternFactory(name="Quokka", pattern="regex:quokka stampede$" if where == "tail" else "quokka stampede")
    expected = detect(text) is not None
    pattern.delete()
    trial = verdicts.pattern_draft_trial(pattern_text="regex:quokka stampede$" if where == "tail" else "quokka stampede")
    assert (trial.draft_matches == 1) is expected
    assert expected is (where != "middle")
    assert Visit.objects.annotate(n=Length("final_text")).get().n == len(text)
