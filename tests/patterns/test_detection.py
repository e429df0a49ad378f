"""The detection engine (SPEC §3.1, §3.3): pure matcher rules first, then the database-backed detector."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from patterns.detection import count_hit, detect, patterns_changed
from patterns.matching import compile_patterns, validate_pattern
from patterns.models import HermesErrorPattern, PatternChange, PatternSetVersion
from tests.factories import PatternFactory

REPO = Path(__file__).resolve().parents[2]


def rule(pattern, *, id=1, priority=100, category="other", enabled=True, key=None):
    return {
        "id": id,
        "key": key,
        "name": f"rule {id}",
        "pattern": pattern,
        "category": category,
        "retryable": False,
        "priority": priority,
        "enabled": enabled,
    }


def find(text, *rules, head=500, tail=300):
    return compile_patterns(rules).detect(text, head_chars=head, tail_chars=tail)


# --- substrings and case folding ------------------------------------------------------------


def test_a_substring_matches_whatever_the_case():
    found = find("Upstream said: RATE Limit Reached", rule("rate limit"))
    assert found.span == (15, 25)


def test_a_chinese_substring_matches():
    text = "API call failed: 该模型当前访问量过大，请稍后再试"
    found = find(text, rule("访问量过大"))
    assert text[found.span[0] : found.span[1]] == "访问量过大"


def test_case_folding_matches_sharp_s_and_maps_the_span_to_original_offsets():
    text = "Fehler: STRASSE gesperrt, Straße frei"
    found = find(text, rule("straße"))
    assert text[found.span[0] : found.span[1]] == "STRASSE"


def test_a_span_after_a_character_that_folds_longer_is_in_original_offsets():
    text = "İİ quota exceeded"
    found = find(text, rule("QUOTA"))
    assert found.span == (3, 8)
    assert text[3:8] == "quota"


def test_blank_text_matches_nothing():
    matcher = compile_patterns([rule(" "), rule("regex:\\s", id=2)])
    assert matcher.detect("   \n\t ", head_chars=500, tail_chars=300) is None
    assert matcher.detect("", head_chars=500, tail_chars=300) is None
    assert matcher.detect(None, head_chars=500, tail_chars=300) is None


# --- regex rules ------------------------------------------------------------------------------


def test_a_regex_matches_case_insensitively_with_its_span():
    found = find("oops: http 503 from upstream", rule(r"regex:HTTP 5\d\d"))
    assert found.span == (6, 14)


def test_caret_anchors_at_the_start_of_the_reply():
    assert find("Error: boom", rule("regex:^error")) is not None
    assert find("No error: fine", rule("regex:^error")) is None


def test_caret_does_not_match_at_the_start_of_the_tail_window():
    text = "a" * 600 + "error at the end"
    # The tail window starts exactly at "error"; ^ still means the start of the reply.
    assert find(text, rule("regex:^error"), head=500, tail=16) is None
    assert find(text, rule("regex:error"), head=500, tail=16).span == (600, 605)


def test_dollar_anchors_at_the_end_of_the_reply_not_of_the_head_window():
    text = "x" * 495 + "done" + "y" * 50
    assert find(text, rule("regex:done$"), head=499, tail=0) is None
    assert find("all done", rule("regex:done$")).span == (4, 8)


def test_a_match_just_inside_the_head_window_is_found():
    text = "x" * 490 + "quota" + "y" * 1000
    assert find(text, rule("quota"), head=495, tail=0).span == (490, 495)


def test_a_match_just_outside_the_head_window_is_not_found():
    text = "x" * 491 + "quota" + "y" * 1000
    assert find(text, rule("quota"), head=495, tail=0) is None


def test_an_error_after_a_long_partial_answer_is_found_in_the_tail_window():
    text = "Here is the partial answer. " * 100 + "\n\n⚠️ No reply: streaming stopped early."
    found = find(text, rule("No reply:"), head=500, tail=300)
    assert text[found.span[0] : found.span[1]] == "No reply:"


def test_a_line_anchored_pattern_that_runs_to_the_end_is_found_in_the_tail_window():
    text = "a" * 1000 + "\nfatal: boom"
    found = find(text, rule(r"regex:(?m:^)fatal:[^\n]*\z"), head=500, tail=50)
    assert found.span == (1001, len(text))


def test_end_of_text_does_not_match_at_the_end_of_the_head_window():
    text = "x" * 495 + "boom" + "y" * 600
    assert find(text, rule(r"regex:boom\z"), head=499, tail=0) is None
    assert find("x" * 495 + "boom", rule(r"regex:boom\z"), head=499, tail=0).span == (495, 499)


def test_a_line_start_at_the_tail_window_edge_needs_a_newline_before_it():
    pattern = rule(r"regex:(?m:^)fatal: boom\z")
    assert find("a" * 600 + "fatal: boom", pattern, head=500, tail=11) is None
    assert find("a" * 600 + "\nfatal: boom", pattern, head=500, tail=11).span == (601, 612)


def test_caret_keeps_meaning_the_start_of_the_reply_beside_a_line_anchored_alternative():
    pattern = rule(r"regex:^error|(?m:^)fatal\z")
    assert find("ok\nerror", pattern) is None
    assert find("error: boom", pattern).span == (0, 5)
    assert find("ok\nfatal", pattern).span == (3, 8)


def test_text_between_the_windows_is_not_scanned():
    text = "a" * 1000 + "quota" + "b" * 1000
    assert find(text, rule("quota"), head=500, tail=300) is None


def test_disabled_patterns_are_skipped():
    assert find("rate limit", rule("rate limit", enabled=False)) is None


def test_the_lowest_priority_wins_whatever_matches_first_in_the_text():
    found = find("HTTP 429: rate limit", rule("HTTP 429", id=1, priority=50), rule("rate limit", id=2, priority=10))
    assert found.pattern_id == 2


def test_equal_priorities_are_broken_by_the_lower_id():
    found = find("quota and rate limit", rule("rate limit", id=7, priority=10), rule("quota", id=3, priority=10))
    assert found.pattern_id == 3


def test_a_substring_and_a_regex_compete_on_priority_alone():
    found = find("HTTP 429", rule("regex:http \\d+", id=1, priority=20), rule("429", id=2, priority=30))
    assert found.pattern_id == 1


def test_a_catastrophic_regex_is_linear():
    text = "a" * 100_000 + "!"
    matcher = compile_patterns([rule("regex:(a+)+$"), rule("regex:(x+x+)+y", id=2)])
    started = time.perf_counter()
    assert matcher.detect(text, head_chars=100_000, tail_chars=100_000) is None
    assert time.perf_counter() - started < 5  # anti-hang bound, not a speed target


def test_a_backreference_is_refused():
    with pytest.raises(ValueError, match="does not compile"):
        validate_pattern(r"regex:(a)\1")


def test_a_regex_that_does_not_compile_is_refused():
    with pytest.raises(ValueError, match="does not compile"):
        validate_pattern("regex:(unclosed")


def test_a_regex_too_costly_for_the_engine_is_refused():
    with pytest.raises(ValueError, match="too costly"):
        validate_pattern("regex:" + "[[:alpha:]]{1000}" * 4)


@pytest.mark.parametrize("text", ["", "   ", "regex:", "regex:   "])
def test_an_empty_pattern_is_refused(text):
    with pytest.raises(ValueError, match="empty"):
        validate_pattern(text)


def test_a_regex_matching_empty_text_is_refused():
    with pytest.raises(ValueError, match="every reply"):
        validate_pattern("regex:a*")


def test_a_stored_regex_that_no_longer_validates_is_skipped_not_fatal():
    found = find("quota", rule(r"regex:(a)\1", id=1, priority=1), rule("quota", id=2))
    assert found.pattern_id == 2


def test_a_thousand_patterns_compile_into_one_working_matcher():
    rules = [rule(f"marker-{n}-x", id=n) for n in range(1, 1001)]
    rules.append(rule(r"regex:^fatal \d+", id=2000))
    matcher = compile_patterns(rules)
    assert matcher.detect("ok then marker-777-x", head_chars=500, tail_chars=300).pattern_id == 777
    assert matcher.detect("fatal 42", head_chars=500, tail_chars=300).pattern_id == 2000


# --- the database-backed detector ----------------------------------------------------------------


@pytest.fixture
def only(db):
    """Disable every stored pattern (the seeded built-ins), then create the given ones."""

    def make(**fields):
        HermesErrorPattern.objects.update(enabled=False)
        patterns_changed()
        return PatternFactory(**fields)

    return make


def test_detect_reports_the_stored_pattern(only):
    pattern = only(pattern="custom failure", category="timeout", retryable=True)
    found = detect("Custom Failure in step 3")
    assert (found.pattern_id, found.name, found.category, found.retryable) == (
        pattern.pk,
        pattern.name,
        "timeout",
        True,
    )


def test_detect_uses_the_head_window_from_settings(only, settings):
    only(pattern="needle")
    settings.PATTERNS_SCAN_CHARS = 10
    settings.PATTERNS_SCAN_TAIL_CHARS = 0
    assert detect("0123456789needle" + "x" * 100) is None
    settings.PATTERNS_SCAN_CHARS = 16
    assert detect("0123456789needle" + "x" * 100) is not None


def test_a_saved_change_takes_effect_at_the_next_detection(only):
    pattern = only(pattern="first marker")
    assert detect("first marker") is not None
    pattern.pattern = "second marker"
    pattern.save()
    assert detect("first marker") is None
    assert detect("second marker").pattern_id == pattern.pk


def test_a_bulk_update_takes_effect_after_patterns_changed(only):
    only(pattern="bulk marker")
    assert detect("bulk marker") is not None
    HermesErrorPattern.objects.update(enabled=False)
    patterns_changed()
    assert detect("bulk marker") is None


def test_a_deleted_pattern_stops_matching(only):
    pattern = only(pattern="gone marker")
    assert detect("gone marker") is not None
    pattern.delete()
    assert detect("gone marker") is None


def test_counting_a_hit_writes_no_history_and_keeps_the_version(only):
    pattern = only(pattern="hit marker")
    version = PatternSetVersion.objects.get(pk=1).version
    changes = PatternChange.objects.count()
    count_hit(pattern_id=pattern.pk)
    count_hit(pattern_id=pattern.pk)
    pattern.refresh_from_db()
    assert pattern.hit_count == 2
    assert pattern.last_hit_at is not None
    assert PatternSetVersion.objects.get(pk=1).version == version
    assert PatternChange.objects.count() == changes


def test_counting_a_hit_does_not_rebuild_the_matcher(only):
    from patterns import detection

    pattern = only(pattern="cached marker")
    detect("cached marker")
    matcher = detection.current_matcher()
    count_hit(pattern_id=pattern.pk)
    assert detection.current_matcher() is matcher


def test_detect_counts_no_hit(only):
    pattern = only(pattern="quiet marker")
    detect("quiet marker")
    pattern.refresh_from_db()
    assert pattern.hit_count == 0


# --- across processes -------------------------------------------------------------------------------

WORKER = """
import django, json, sys
django.setup()
from patterns.detection import detect
from patterns.matching import verdict_json
for line in sys.stdin:
    print(json.dumps(verdict_json(detect(json.loads(line)))), flush=True)
"""


@pytest.fixture
def shared_database(tmp_path):
    """A migrated SQLite file that separate processes open, like gunicorn workers do."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(SQLITE_PATH=str(tmp_path / "shared.sqlite3"), DJANGO_SETTINGS_MODULE="project.settings")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True, timeout=300
    )
    return env


def manage_shell(env, code):
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO,
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
    )


@pytest.mark.slow
def test_a_change_made_in_one_process_is_seen_by_the_next_detection_in_another(shared_database):
    env = shared_database
    manage_shell(
        env,
        "from patterns.models import HermesErrorPattern as P; P.objects.update(enabled=False);"
        "from patterns.detection import patterns_changed; patterns_changed();"
        "P.objects.create(name='cross', pattern='cross process marker')",
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER], cwd=REPO, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )

    def ask():
        worker.stdin.write(json.dumps("cross process marker") + "\n")
        worker.stdin.flush()
        return json.loads(worker.stdout.readline())["isError"]

    try:
        assert ask() is True  # the worker has compiled and cached the set
        manage_shell(
            env,
            "from patterns.models import HermesErrorPattern as P;"
            "p = P.objects.get(name='cross'); p.enabled = False; p.save()",
        )
        assert ask() is False
        manage_shell(
            env,
            "from patterns.models import HermesErrorPattern as P; P.objects.filter(name='cross')"
            ".update(enabled=True); from patterns.detection import patterns_changed; patterns_changed()",
        )
        assert ask() is True
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)


def test_the_detect_command_prints_the_verdict_as_json(only, capsys):
    from django.core.management import call_command

    pattern = only(pattern="command marker", category="quota")
    call_command("detect", "a command marker here")
    verdict = json.loads(capsys.readouterr().out)
    assert (verdict.pop("matchedBy"), 0 <= verdict.pop("modelScore") <= 1) == ("pattern", True)
    assert verdict == {
        "isError": True,
        "matchedPatternId": pattern.pk,
        "matchedPatternKey": None,
        "matchedPatternName": pattern.name,
        "category": "quota",
        "retryable": False,
        "span": [2, 16],
        "matches": [
            {
                "id": pattern.pk,
                "key": None,
                "name": pattern.name,
                "category": "quota",
                "retryable": False,
                "span": [2, 16],
            }
        ],
    }


def test_the_detect_command_reads_a_file_and_counts_no_hit(only, capsys, tmp_path):
    from django.core.management import call_command

    pattern = only(pattern="file marker")
    reply = tmp_path / "reply.txt"
    reply.write_text("no problem here", encoding="utf-8")
    call_command("detect", "--file", str(reply))
    assert json.loads(capsys.readouterr().out)["isError"] is False
    reply.write_text("file marker", encoding="utf-8")
    call_command("detect", "--file", str(reply))
    assert json.loads(capsys.readouterr().out)["matchedPatternId"] == pattern.pk
    pattern.refresh_from_db()
    assert pattern.hit_count == 0
