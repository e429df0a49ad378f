"""Shipped built-ins and their seeding on migrate (SPEC §3.2)."""

import pytest
from django.core.management import call_command

from patterns import builtins
from patterns.builtins import BUILTINS, seed_builtins
from patterns.detection import compile_patterns, validate_pattern
from patterns.models import Category, HermesErrorPattern, PatternChange
from tests.factories import PatternFactory

RETRYABLE = {"rate_limit", "overloaded", "server_error", "timeout", "network"}
NEVER_RETRYABLE = {"auth", "quota", "context_length", "model_not_found", "content_filter"}


def test_every_built_in_has_a_unique_key_and_name():
    assert len({b["key"] for b in BUILTINS}) == len(BUILTINS)
    assert len({b["name"] for b in BUILTINS}) == len(BUILTINS)


@pytest.mark.parametrize("builtin", BUILTINS, ids=lambda b: b["key"])
def test_each_built_in_is_a_valid_pattern_that_fits_the_model(builtin):
    validate_pattern(builtin["pattern"])
    assert len(builtin["pattern"]) <= 500
    assert len(builtin["name"]) <= 100
    assert builtin["category"] in Category.values
    assert builtin["description"]


@pytest.mark.parametrize("builtin", BUILTINS, ids=lambda b: b["key"])
def test_each_built_in_has_the_retryable_flag_of_its_category(builtin):
    if builtin["category"] in RETRYABLE:
        assert builtin["retryable"] is True
    if builtin["category"] in NEVER_RETRYABLE:
        assert builtin["retryable"] is False


@pytest.mark.parametrize(
    "reply, category",
    [
        ("API call failed after 3 retries: HTTP 400: Bad request body", "other"),
        ("HTTP 404 Not Found", "model_not_found"),
        ("HTTP 502: Bad Gateway", "server_error"),
        ("Error: rate limit exceeded, retry in 20s", "rate_limit"),
        ("错误：该模型当前访问量过大，请您稍后再试", "overloaded"),
        ("Error code: 429 - {'error': {'code': 'insufficient_quota', 'message': 'quota exceeded'}}", "quota"),
        ("错误：额度不足", "quota"),
        ("错误：账户余额不足，请充值", "quota"),
        ("Error: authentication failed for this key", "auth"),
        ("Error: Invalid API key provided", "auth"),
        ("错误：无效的 API Key", "auth"),
    ],
)
def test_the_built_ins_keep_every_intent_of_the_seed_list(reply, category):
    found = compile_patterns(dict(b, id=i + 1) for i, b in enumerate(BUILTINS)).detect(
        reply, head_chars=500, tail_chars=300)
    assert found is not None and found.category == category


@pytest.mark.parametrize(
    "reply",
    [
        "HTTP 404 means the path does not exist; check the gateway prefix.",
        "We raised the rate limit to 2,000 RPM and nobody hit their quota this week.",
        "```\nError code: 429 - rate_limit_exceeded\n```\nThat came from the batch job; I added a semaphore.",
        "“Invalid API key” is what your own service should say when the header is wrong.",
    ],
)
def test_the_built_ins_leave_answers_about_errors_alone(reply):
    matcher = compile_patterns(dict(b, id=i + 1) for i, b in enumerate(BUILTINS))
    assert matcher.detect(reply, head_chars=500, tail_chars=300) is None


def test_migrate_seeds_every_built_in(db):
    stored = dict(HermesErrorPattern.objects.filter(is_built_in=True).values_list("key", "pattern"))
    assert {b["key"]: b["pattern"] for b in BUILTINS}.items() <= stored.items()


def test_seeding_again_inserts_nothing(db):
    assert seed_builtins() == 0


def test_seeding_inserts_a_missing_key_and_records_its_installation(db):
    HermesErrorPattern.objects.filter(key="rate-limit").delete()
    assert seed_builtins() == 1
    row = HermesErrorPattern.objects.get(key="rate-limit")
    assert row.is_built_in and row.enabled
    assert PatternChange.objects.filter(pattern=row, action="seed").exists()


def test_seeding_never_overwrites_an_edited_built_in(db):
    HermesErrorPattern.objects.filter(key="http-5xx").update(enabled=False, description="ops note", priority=5)
    seed_builtins()
    row = HermesErrorPattern.objects.get(key="http-5xx")
    assert (row.enabled, row.description, row.priority) == (False, "ops note", 5)


def test_a_name_taken_by_a_custom_pattern_gets_a_suffix(db):
    HermesErrorPattern.objects.filter(key="timeout").delete()
    PatternFactory(name="Timeout")
    seed_builtins()
    assert HermesErrorPattern.objects.get(key="timeout").name == "Timeout (built-in)"
    assert HermesErrorPattern.objects.get(name="Timeout").key is None


def test_a_built_in_added_in_a_later_release_appears_on_the_next_migrate(db, monkeypatch):
    HermesErrorPattern.objects.filter(key="http-4xx").update(enabled=False)
    later = dict(BUILTINS[0], key="added-later", name="Added later", pattern="added later marker")
    monkeypatch.setattr(builtins, "BUILTINS", [*BUILTINS, later])
    call_command("migrate", verbosity=0)
    assert HermesErrorPattern.objects.get(key="added-later").is_built_in
    assert HermesErrorPattern.objects.get(key="http-4xx").enabled is False
