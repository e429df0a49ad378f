"""Where an error sits (SPEC §3.3): the detector's vocabulary of openings and the three
shapes, scope on patterns, and the fault kinds of the detection issue, judged by the
shipped built-ins."""

import statistics

import pytest

from patterns.builtins import BUILTINS
from patterns.matching import compile_patterns, error_regions, in_code, sentence_goes_on
from tests.bench.quality import builtin_matcher


def judge(reply, *, tail=800):
    return builtin_matcher().detect(reply, head_chars=500, tail_chars=tail)


def one(pattern, text, *, scope="error"):
    rule = {"id": 1, "name": "one", "pattern": pattern, "category": "other", "priority": 1, "scope": scope}
    return compile_patterns([rule]).detect(text, head_chars=500, tail_chars=800)


# --- the fault kinds of the issue ----------------------------------------------------------


@pytest.mark.parametrize(
    "reply, category, retryable",
    [
        ("[Error]: Concurrency limit exceeded for account, please retry later", "rate_limit", True),
        (
            "google.api_core.exceptions.ResourceExhausted: 429 You exceeded your current quota, please check your "
            "plan and billing details. Please retry in 2.18s.",
            "rate_limit",
            True,
        ),
        ("Workspace balance exhausted. Top up the workspace wallet to continue.", "quota", False),
        ("Error: Provider returned error", "other", False),
        (
            "Error code: 400 - {'error': {'code': 400, 'message': 'request (120737 tokens) exceeds the available "
            "context size (100096 tokens), try increasing it', 'type': 'exceed_context_size_error'}}",
            "context_length",
            False,
        ),
        (
            'Workflow execution failure: Error code: 403 - {"code":"AccountOverdueError","message":"The request '
            'failed because your account has an overdue balance."}',
            "quota",
            False,
        ),
    ],
)
def test_each_fault_kind_of_the_issue_gets_its_verdict(reply, category, retryable):
    found = judge(reply)
    assert found is not None and (found.category, found.retryable) == (category, retryable), (reply, found)


def test_an_empty_hermes_error_is_a_failure():
    found = judge("[hermes error: ]")
    assert found is not None and found.key == "hermes-error"


def test_the_body_s_cause_beats_the_status_line():
    assert judge('HTTP 403: {"code":"AccountOverdueError","message":"overdue balance"}').category == "quota"


def test_a_quota_message_without_a_retry_hint_stays_quota():
    found = judge("429 RESOURCE_EXHAUSTED. {'error': {'message': 'You exceeded your current quota.'}}")
    assert found.category == "quota"


@pytest.mark.parametrize(
    "reply",
    [
        "HTTP 429 Too Many Requests means the client sent more requests than the server allows in a given time "
        "window; back off and retry.",
        "余额不足：指账户可用余额低于本次应付金额，需充值后才能继续使用。",
        "Rate limit: the number of requests a client may send per minute.",
        "Quota: the amount of tokens your plan allows each month.",
        "Context length: how many tokens the model reads at once.",
        "Here is what I found in the worker.\n\nThe last log line was:\n"
        "openai.RateLimitError: Error code: 429 - {'error': {'code': 'rate_limit_exceeded'}}",
        "The last log line was:\nopenai.RateLimitError: Error code: 429 - {'error': {'code': 'rate_limit_exceeded'}}",
        "Rate limit exceeded errors are now retried with exponential backoff.",
        "The servers are overloaded during peak hours, so schedule the batch at night.",
        "API call failed after 3 retries is what hermes-agent prints when every retry fails.",
        "Authentication failed for two users yesterday because their tokens expired.",
        "Insufficient balance alerts now go to the finance channel.",
        "Error handling: every view maps domain errors to 422.",
        "Quota exceeded for the free tier, so I moved the job to the paid project and it finished.",
        "访问量过大导致了昨天的故障，我们已经扩容。",
    ],
)
def test_prose_glossaries_and_introduced_quotes_are_not_errors(reply):
    assert judge(reply) is None


# --- the vocabulary of openings, tested once ------------------------------------------------


@pytest.mark.parametrize(
    "opening",
    [
        "HTTP 429: ",
        "Error code: 400 - ",
        "error (429): ",
        "unexpected status 403 Forbidden: ",
        "429 RESOURCE_EXHAUSTED. ",
        "Error: ",
        "[Error]: ",
        "**Error:** ",
        "[API Error: ",
        "❌ ",
        "⚠️ Error: ",
        "错误：",
        "[Agent运行错误]: ",
        "openai.RateLimitError: ",
        "google.api_core.exceptions.ResourceExhausted: ",
        "httpx.ReadTimeout: ",
        "API call failed after 3 retries: ",
        "LLM call failed after 3 attempts: ",
        "Request failed with status code 500: ",
        "{'error': ",
        '{"error": {"message": "',
        "Workflow execution failure: Error: ",
        "An error occurred: ",
        "Upstream error from Alibaba: ",
        "ChatGPT error 429: ",
    ],
)
def test_a_reply_that_starts_with_an_opening_is_the_error(opening):
    assert one("zebra outage", opening + "zebra outage upstream") is not None


@pytest.mark.parametrize(
    "reply",
    [
        "The zebra outage upstream was fixed yesterday.",
        "> Error: zebra outage upstream",
        "`Error: zebra outage upstream`",
        "Error: means zebra outage upstream",
    ],
)
def test_a_phrase_in_prose_or_a_quote_is_no_error_for_scope_error(reply):
    assert one("zebra outage", reply) is None


def test_the_same_phrase_matches_prose_with_scope_anywhere():
    assert one("zebra outage", "The zebra outage upstream was fixed yesterday.", scope="anywhere") is not None


@pytest.mark.parametrize(
    "reply",
    [
        "Zebra outage.",
        "Zebra outage, please try again later.",
        "⚠️ Zebra outage: retry in 20s",
        "Zebra outage (request id: 123)",
        "Zebra outage",
    ],
)
def test_a_reply_that_is_one_provider_sentence_is_the_error(reply):
    assert one("zebra outage", reply) is not None


@pytest.mark.parametrize(
    "reply",
    ["Zebra outages happen weekly.", "Zebra outage errors are retried.", "Zebra outage: a stripe-shaped failure."],
)
def test_a_sentence_that_goes_on_as_prose_is_no_error(reply):
    assert one("zebra outage", reply) is None


def test_an_error_block_that_ends_the_reply_is_the_error():
    answer = "Here is the summary of the first half. " * 30
    assert one("zebra outage", answer + "\n\nError code: 503 - {'error': {'message': 'zebra outage'}}") is not None


def test_an_error_block_followed_by_prose_is_an_answer_about_it():
    answer = "Here is the summary of the first half. " * 30
    reply = answer + "\n\nError code: 503 - zebra outage\n\nThat was yesterday; it passed on the rerun."
    assert one("zebra outage", reply) is None


@pytest.mark.parametrize("wrap", ["```\n{}\n```", "> {}", "- {}", "The last log line was:\n{}"])
def test_a_fenced_bulleted_quoted_or_introduced_error_block_is_no_error(wrap):
    answer = "Here is the summary of the first half. " * 30
    assert one("zebra outage", answer + "\n\n" + wrap.format("Error code: 503 - zebra outage")) is None


def test_error_regions_names_the_opening_the_sentence_and_the_tail_block():
    text = "Error code: 429 - slow down"
    regions = error_regions(text, head_chars=500, tail_chars=800)
    assert regions[0].start == 0 and regions[0].lead_end is None
    assert any(region.lead_end == 0 for region in regions)


def test_a_short_phrase_must_end_the_way_provider_messages_end():
    text = "Overloaded servers are common."
    assert sentence_goes_on(text, 0, len("Overloaded")) is False
    assert sentence_goes_on("Overloaded", 0, len("Overloaded")) is True


# --- the built-ins are readable -----------------------------------------------------------


def test_no_built_in_is_longer_than_150_characters_and_most_are_under_40():
    lengths = [len(builtin["pattern"]) for builtin in BUILTINS]
    assert max(lengths) <= 150
    assert statistics.median(lengths) < 40
    assert sum(length < 40 for length in lengths) > len(lengths) / 2


def test_every_built_in_has_scope_error():
    assert {builtin["scope"] for builtin in BUILTINS} == {"error"}


# --- blank replies, matches, bounded sets, upgrades (database) -------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("text", ["", "   \n\t", None])
def test_a_blank_reply_is_failed_as_incomplete_by_detect(text):
    from patterns.detection import detect

    found = detect(text)
    assert (found.matched_by, found.category, found.pattern_id) == ("blank", "incomplete", None)


@pytest.mark.django_db
def test_the_api_detect_calls_a_blank_reply_an_error(user_client):
    from tests.support import envelope_body

    data = envelope_body(user_client.post("/api/hermes-error-patterns/detect", {"text": "  "}, format="json"))["data"]
    assert (data["isError"], data["matchedBy"], data["category"], data["matches"]) == (True, "blank", "incomplete", [])


@pytest.mark.django_db
def test_the_detect_command_calls_a_blank_reply_an_error(capsys):
    import json

    from django.core.management import call_command

    call_command("detect", " ")
    verdict = json.loads(capsys.readouterr().out)
    assert (verdict["isError"], verdict["matchedBy"], verdict["category"]) == (True, "blank", "incomplete")


@pytest.mark.django_db
def test_the_api_detect_lists_every_matching_pattern_in_priority_order(user_client):
    from tests.factories import PatternFactory
    from tests.support import envelope_body

    late = PatternFactory(pattern="zebra", priority=5)
    early = PatternFactory(pattern="zebra outage", priority=2)
    text = "Error: zebra outage"
    data = envelope_body(user_client.post("/api/hermes-error-patterns/detect", {"text": text}, format="json"))["data"]
    ids = [match["id"] for match in data["matches"]]
    assert ids.index(early.pk) < ids.index(late.pk)
    assert data["matchedPatternId"] == ids[0] and data["matchedBy"] == "pattern"


#: A regex valid alone, near the per-pattern cost limit (about 18,000 instructions).
COSTLY = "regex:m{}\\w{{0,1000}}y\\w{{0,1000}}z"


@pytest.mark.django_db
def test_three_hundred_costly_patterns_stored_anyway_do_not_make_every_detection_fail():
    from patterns.detection import compile_status, detect, patterns_changed
    from patterns.models import HermesErrorPattern

    assert detect("HTTP 429: Too Many Requests").category == "rate_limit"  # compiles the shipped set
    HermesErrorPattern.objects.bulk_create(
        HermesErrorPattern(name=f"costly {n}", pattern=COSTLY.format(n), scope="anywhere") for n in range(300)
    )
    patterns_changed()
    assert detect("HTTP 429: Too Many Requests").category == "rate_limit"
    assert compile_status().failed


@pytest.mark.django_db
def test_a_new_worker_starts_from_the_last_set_that_compiled():
    from patterns import detection
    from patterns.models import HermesErrorPattern

    detection.detect("warm up")
    HermesErrorPattern.objects.bulk_create(
        HermesErrorPattern(name=f"costly {n}", pattern=COSTLY.format(n), scope="anywhere") for n in range(300)
    )
    detection.patterns_changed()
    detection._cached = (None, None)  # a fresh process
    assert detection.detect("HTTP 429: Too Many Requests").category == "rate_limit"


@pytest.mark.django_db
def test_the_pattern_page_says_when_the_stored_set_does_not_compile(staff_browser):
    from patterns.detection import patterns_changed
    from patterns.models import HermesErrorPattern

    HermesErrorPattern.objects.bulk_create(
        HermesErrorPattern(name=f"costly {n}", pattern=COSTLY.format(n), scope="anywhere") for n in range(300)
    )
    patterns_changed()
    assert 'id="compile-failed"' in staff_browser.get("/patterns/").content.decode()


@pytest.mark.django_db
def _fill_up_to_the_limit():
    """Store as many costly patterns as fit in the set's bound with the built-ins."""
    from patterns.detection import current_matcher
    from patterns.matching import MAX_SET_PROGRAM_SIZE, compile_patterns
    from patterns.models import HermesErrorPattern

    each = compile_patterns([{"pattern": COSTLY.format(0)}]).program_size
    room = (MAX_SET_PROGRAM_SIZE - current_matcher().program_size) // each
    HermesErrorPattern.objects.bulk_create(
        HermesErrorPattern(name=f"costly {n}", pattern=COSTLY.format(n), scope="anywhere") for n in range(room)
    )


@pytest.mark.django_db
def test_a_change_that_makes_the_set_too_costly_is_refused_naming_the_limit(staff_client):
    from patterns.matching import MAX_SET_PROGRAM_SIZE
    from patterns.models import HermesErrorPattern

    _fill_up_to_the_limit()
    response = staff_client.post(
        "/api/hermes-error-patterns", {"name": "one more", "pattern": COSTLY.format(999)}, format="json"
    )
    assert response.status_code == 422
    assert f"at most {MAX_SET_PROGRAM_SIZE}" in response.content.decode()
    assert not HermesErrorPattern.objects.filter(name="one more").exists()


@pytest.mark.django_db
def test_the_form_refuses_a_change_that_makes_the_set_too_costly(staff_browser):
    _fill_up_to_the_limit()
    data = {"name": "one more", "pattern": COSTLY.format(999), "category": "other", "priority": 100}
    response = staff_browser.post("/patterns/new/", {**data, "enabled": "on", "scope": "error"})
    assert response.status_code == 200 and "pattern" in response.context["form"].errors


@pytest.mark.django_db
def test_a_copy_starts_disabled(staff_client):
    from patterns.models import HermesErrorPattern

    source = HermesErrorPattern.objects.get(key="rate-limit")
    response = staff_client.post(f"/api/hermes-error-patterns/{source.pk}/copy")
    assert response.status_code == 201
    copy = HermesErrorPattern.objects.get(name=f"{source.name} (copy)")
    assert copy.enabled is False and copy.scope == "error" and not copy.is_built_in


@pytest.mark.django_db
def test_the_pattern_form_shows_the_text_in_a_textarea_without_cutting_it(staff_browser):
    page = staff_browser.get("/patterns/new/").content.decode()
    field = page.split('name="pattern"')[0].rsplit("<", 1)[1] + page.split('name="pattern"')[1].split(">")[0]
    assert field.startswith("textarea") and "maxlength" not in field
    assert "At most 500 characters." in page


@pytest.mark.django_db
def test_an_over_long_pattern_is_refused_with_a_message(staff_browser):
    from patterns.models import HermesErrorPattern

    data = {"name": "long", "pattern": "x" * 501, "category": "other", "priority": 100, "scope": "error"}
    response = staff_browser.post("/patterns/new/", data)
    assert response.status_code == 200 and "at most 500 characters" in str(response.context["form"].errors["pattern"])
    assert ("x" * 501) in response.content.decode()
    assert not HermesErrorPattern.objects.filter(name="long").exists()


@pytest.mark.django_db
def test_try_a_reply_lists_every_matching_pattern(staff_browser):
    from tests.factories import PatternFactory

    PatternFactory(name="Zebra", pattern="zebra outage", priority=1)
    page = staff_browser.post("/patterns/try/", {"text": "Error: zebra outage, rate limit exceeded"}).content.decode()
    table = page.split('id="try-matches"')[1].split("</table>")[0]
    assert "Zebra" in table and "Rate limit" in table


# --- upgrades: retired built-in keys ----------------------------------------------------------


def _retired(*, edited: bool):
    from patterns import changes
    from patterns.models import HermesErrorPattern, PatternChange

    row = HermesErrorPattern.objects.create(
        key="old-shape", name="Old shape", pattern="regex:^old", is_built_in=True, scope="anywhere"
    )
    PatternChange.objects.create(
        pattern=row,
        pattern_ref=row.pk,
        pattern_name=row.name,
        via="migration",
        action="seed",
        before=None,
        after=changes.pattern_snapshot(row),
    )
    if edited:
        changes.pattern_update(target=row, values={"priority": 7}, via="api")
    else:
        changes.pattern_toggle(target=row, via="api")
    return row


@pytest.mark.django_db
def test_an_unedited_built_in_whose_key_retires_is_removed_on_migrate():
    from patterns.models import HermesErrorPattern
    from patterns.seeding import seed_builtins

    row = _retired(edited=False)
    seed_builtins()
    assert not HermesErrorPattern.objects.filter(pk=row.pk).exists()


@pytest.mark.django_db
def test_an_edited_built_in_whose_key_retires_stays_as_a_custom_pattern_with_its_history():
    from patterns.models import HermesErrorPattern, PatternChange
    from patterns.seeding import seed_builtins

    row = _retired(edited=True)
    seed_builtins()
    kept = HermesErrorPattern.objects.get(pk=row.pk)
    assert (kept.is_built_in, kept.key, kept.scope, kept.priority) == (False, None, "anywhere", 7)
    assert list(PatternChange.objects.filter(pattern=kept).values_list("action", flat=True).order_by("id")) == [
        "seed",
        "update",
        "update",
    ]


@pytest.mark.parametrize(
    "text, span",
    [("timeout=10", (0, 7)), ("test_rate_limit_backoff", (5, 15))],
)
def test_a_keyword_argument_or_the_inside_of_a_snake_case_name_is_code(text, span):
    assert in_code(text, span)


@pytest.mark.parametrize(
    "text, span",
    [("rate_limit_exceeded", (0, 19)), ("timeout == 10", (0, 7)), ("Request timed out.", (8, 17))],
)
def test_a_whole_name_a_comparison_or_prose_is_not_code(text, span):
    assert not in_code(text, span)


@pytest.mark.django_db
def test_an_empty_answer_envelope_is_failed_as_incomplete_by_detect():
    from patterns.detection import detect

    found = detect('{"model": "gemini-2.5-flash", "text": "", "usage": {"outputTokens": 0}}')
    assert (found.matched_by, found.category, found.pattern_id) == ("blank", "incomplete", None)


@pytest.mark.django_db
def test_the_api_detect_calls_an_empty_answer_envelope_an_error(user_client):
    from tests.support import envelope_body

    reply = '{"choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}'
    data = envelope_body(user_client.post("/api/hermes-error-patterns/detect", {"text": reply}, format="json"))["data"]
    assert (data["isError"], data["matchedBy"], data["category"], data["matches"]) == (True, "blank", "incomplete", [])
