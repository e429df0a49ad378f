"""Draft pattern trials on the judged replies (SPEC §3.5): ``patterns.trials``."""

import pytest

from patterns.detection import detect
from patterns.models import HermesErrorPattern, JudgedReply
from patterns.trials import pattern_draft_trial
from project.errors import Invalid
from tests.factories import JudgedReplyFactory, PatternFactory

pytestmark = pytest.mark.django_db

MARKER = "zebra-crossing fault"
GOOD = "All three sources agree; the report is ready."


@pytest.fixture
def marker(db):
    """A custom pattern no built-in shadows."""
    return PatternFactory(name="Zebra fault", pattern=MARKER, priority=1)


@pytest.fixture
def flagged(marker):
    return JudgedReplyFactory(
        text=f"{MARKER}: upstream said no", failed=True, decided_by="pattern", pattern=marker, pattern_name=marker.name
    )


@pytest.fixture
def good(db):
    return JudgedReplyFactory(text=GOOD)


def test_a_new_draft_lists_the_good_replies_it_would_now_fail(good):
    other = JudgedReplyFactory(text="Nothing to see here.")
    trial = pattern_draft_trial(pattern_text="sources agree", scope="anywhere")
    assert [row.reply for row in trial.now_failing] == [good]
    assert trial.no_longer_failing == [] and trial.draft_matches == 1
    assert other not in [row.reply for row in trial.now_failing]


def test_a_reply_already_failed_by_another_pattern_is_not_listed(flagged):
    trial = pattern_draft_trial(pattern_text="upstream said no", scope="anywhere")
    assert trial.draft_matches == 1 and trial.now_failing == [] and trial.no_longer_failing == []


def test_a_reply_failed_for_another_reason_is_not_listed_as_now_failing(db):
    JudgedReplyFactory(text="The sources agree but the CRM was down.", failed=True, decided_by="engine")
    trial = pattern_draft_trial(pattern_text="sources agree", scope="anywhere")
    assert trial.draft_matches == 1 and trial.now_failing == []


def test_editing_a_pattern_lists_the_replies_it_would_no_longer_fail(flagged, marker):
    trial = pattern_draft_trial(pattern_text="zebra-crossing outage", pattern=marker)
    assert [row.reply for row in trial.no_longer_failing] == [flagged]
    assert trial.no_longer_failing[0].detection.pattern_id == marker.pk
    assert trial.now_failing == []


def test_an_edit_is_not_listed_when_the_agent_itself_reported_the_failure(marker):
    JudgedReplyFactory(text=f"{MARKER}: upstream said no", failed=True, decided_by="agent", pattern=marker)
    trial = pattern_draft_trial(pattern_text="zebra-crossing outage", pattern=marker)
    assert trial.no_longer_failing == []


def test_an_edit_is_not_listed_when_another_pattern_still_catches_the_reply(flagged, marker):
    PatternFactory(name="Upstream refusal", pattern="upstream said no")
    trial = pattern_draft_trial(pattern_text="zebra-crossing outage", pattern=marker)
    assert trial.no_longer_failing == []


def test_a_draft_trial_reads_only_the_last_replies(db):
    JudgedReplyFactory(text="ledger mismatch in the oldest reply")
    newer = [JudgedReplyFactory(text=f"ledger mismatch {n}") for n in "BC"]
    trial = pattern_draft_trial(pattern_text="ledger mismatch", scope="anywhere", limit=2)
    assert trial.scanned == 2
    assert {row.reply for row in trial.now_failing} == set(newer)


def test_a_draft_that_would_be_refused_on_save_is_refused(good):
    with pytest.raises(Invalid) as refused:
        pattern_draft_trial(pattern_text="regex:(unclosed")
    assert list(refused.value.errors) == ["pattern"]


def test_a_draft_trial_saves_nothing_and_counts_no_hit(good, marker):
    before = list(HermesErrorPattern.objects.values_list("id", "pattern", "hit_count").order_by("id"))
    pattern_draft_trial(pattern_text="sources agree", pattern=marker)
    assert list(HermesErrorPattern.objects.values_list("id", "pattern", "hit_count").order_by("id")) == before
    assert JudgedReply.objects.get(pk=good.pk).failed is False


@pytest.mark.parametrize("where", ["head", "tail", "middle"])
def test_a_long_reply_is_judged_as_detection_judges_the_whole_text(settings, where):
    """Only both ends of a long reply are kept; the verdict must equal ``detect`` on the whole reply."""
    from patterns.marks import reply_judged

    settings.PATTERNS_SCAN_CHARS, settings.PATTERNS_SCAN_TAIL_CHARS = 50, 40
    filler = "fine words " * 20_000
    text = {
        "head": f"quokka stampede {filler}",
        "tail": f"{filler}quokka stampede",
        "middle": f"{filler}quokka stampede{filler}",
    }[where]
    reply_judged(subject="0b7a8f0e-6a55-4d2e-9f0f-0c6d1c1e9a01", text=text, failed=False, decided_by="", detection=None)
    draft = "regex:quokka stampede$" if where == "tail" else "quokka stampede"
    pattern = PatternFactory(name="Quokka", pattern=draft)
    expected = detect(text) is not None
    pattern.delete()
    trial = pattern_draft_trial(pattern_text=draft, scope="anywhere")
    assert (trial.draft_matches == 1) is expected
    assert expected is (where != "middle")


def test_a_new_draft_has_scope_error_so_prose_that_mentions_it_would_not_fail(good):
    error = JudgedReplyFactory(text="Error: sources agree")
    trial = pattern_draft_trial(pattern_text="sources agree")
    assert [row.reply for row in trial.now_failing] == [error]
