"""Shipped built-ins and their seeding on migrate (SPEC §3.2)."""

import functools
import io

import pytest
from django.core.management import call_command

from patterns import seeding
from patterns.builtins import BUILTINS
from patterns.matching import compile_patterns, validate_pattern
from patterns.models import Category, HermesErrorPattern, PatternChange
from patterns.seeding import seed_builtins
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
        ("HTTP 404 Not Found", "other"),
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
    found = judge(reply)
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
    assert judge(reply) is None


@functools.cache
def shipped():
    """The shipped set compiled once for the module (compiling takes most of a second)."""
    return compile_patterns(dict(b, id=i + 1) for i, b in enumerate(BUILTINS))


def judge(reply, *, tail=800):
    return shipped().detect(reply, head_chars=500, tail_chars=tail)


def test_each_built_in_describes_in_one_sentence_what_the_provider_says():
    for builtin in BUILTINS:
        description = builtin["description"]
        assert description.strip(), builtin["key"]
        assert len(description) <= 200, builtin["key"]
        # The pattern list shows the first sentence: it must be the whole description.
        assert HermesErrorPattern(description=description).description_summary == description, builtin["key"]


# A bare provider message for each intent of the seed list (SPEC §3.2): the reply *is* the message.
@pytest.mark.parametrize(
    "reply, category",
    [
        ("API call failed after 3 retries: HTTP 503: Service Unavailable", "server_error"),
        ("HTTP 400: Bad Request", "other"),
        ("HTTP 502 Bad Gateway", "server_error"),
        ("Rate limit exceeded. Please try again later.", "rate_limit"),
        ("Requests rate limit exceeded, please try again later.", "rate_limit"),
        ("该模型当前访问量过大，请稍后再试", "overloaded"),
        ("该模型当前访问量过大", "overloaded"),
        ("访问量过大", "overloaded"),
        ("Allocated quota exceeded, please increase your quota limit.", "quota"),
        ("You exceeded your current quota, please check your plan and billing details.", "quota"),
        ("额度不足", "quota"),
        ("该令牌额度已用尽", "quota"),
        ("余额不足", "quota"),
        ("账户余额不足，请充值后重试", "quota"),
        ("Authentication Fails, Your api key: ****e78f is invalid", "auth"),
        ("Authentication failed", "auth"),
        ("Invalid API key", "auth"),
        ("Invalid API key provided: sk-abc***", "auth"),
        ("无效的 API Key", "auth"),
        ("无效的API密钥", "auth"),
        ("身份验证失败。", "auth"),
    ],
)
def test_a_reply_that_is_a_bare_provider_message_of_a_seed_intent_is_caught(reply, category):
    found = judge(reply)
    assert found is not None and found.category == category, (reply, found)


# The same words used as prose: a subject, a condition, a topic.
@pytest.mark.parametrize(
    "reply",
    [
        "网站访问量过大时可以加缓存，另外把静态资源放到 CDN。",
        "当前访问量过大，建议开启限流和自动扩容。",
        "该模型当前访问量过大的原因是发布会之后流量激增。",
        "额度不足时，系统会提前三天发邮件提醒。",
        "余额不足以支付下月费用时请及时充值。",
        "无效的 API Key 通常是复制时多了空格。",
        "身份验证失败时，请先检查 API Key。",
        "Rate limit exceeded errors are retried with backoff now.",
        "Quota exceeded errors from Gemini mean the per-minute limit was hit.",
        "Authentication failed. I switched to the backup key and the report is attached below.",
        "Invalid API key errors come from a missing Authorization header.",
        "API call failed after 3 retries is what hermes-agent prints when every retry fails.",
        "HTTP 503 Service Unavailable is what a load balancer returns when no backend is healthy.",
    ],
)
def test_prose_that_uses_the_words_of_a_seed_intent_is_left_alone(reply):
    assert judge(reply) is None


PARTIAL = (
    "I went through the three services you listed. The order service validates the cart, reserves stock "
    "through the inventory API and then calls pricing; the reservation is released after 15 minutes. "
) * 8


# An error that follows a partial answer (SPEC §3.3): hermes-agent's and the SDKs' forms as the last lines.
@pytest.mark.parametrize(
    "ending, category",
    [
        ("API call failed after 3 retries: HTTP 503: Service Unavailable", "server_error"),
        ("API call failed after 3 retries: HTTP 500: Request failed", "server_error"),
        ("API call failed after 3 retries: HTTP 429: 该模型当前访问量过大，请您稍后再试", "overloaded"),
        ("API call failed after 3 retries: HTTP 401: Invalid API key provided.", "auth"),
        ("API call failed after 3 retries: HTTP 400: Bad request body", "other"),
        ("Invalid API response after 3 retries: upstream gateway timeout (504, 121s)", "timeout"),
        ("Billing or credits exhausted: HTTP 402: insufficient balance", "quota"),
        ("Context length exceeded (212,443 tokens). Cannot compress further.", "context_length"),
        ("⚠️ Provider authentication failed. Check the configured credentials.", "auth"),
        ("Error code: 429 - {'error': {'code': 'rate_limit_exceeded', 'message': 'Rate limit reached'}}", "rate_limit"),
        ("openai.APIConnectionError: Connection error.", "network"),
        (
            "anthropic.InternalServerError: Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error'}}",
            "overloaded",
        ),
        (
            '{\n  "error": {\n    "message": "You exceeded your current quota.",\n    "type": '
            '"insufficient_quota"\n  }\n}',
            "quota",
        ),
        ("错误：余额不足或无可用资源包,请充值。", "quota"),
        ("HTTP 503: Inference is temporarily unavailable\n", "server_error"),
    ],
)
def test_an_error_that_ends_a_reply_after_a_partial_answer_is_caught(ending, category):
    reply = PARTIAL + "\n\n" + ending
    found = judge(reply)
    assert found is not None and found.category == category, (ending, found)
    assert found.span[0] >= len(PARTIAL)


def test_the_short_partial_answer_of_the_user_report_is_caught():
    found = judge("Here is the analysis. \n\nAPI call failed after 3 retries: HTTP 503: Service Unavailable")
    assert found is not None and found.category == "server_error"


@pytest.mark.parametrize(
    "ending",
    [
        "Your log shows:\n\nAPI call failed after 3 retries: HTTP 503: Service Unavailable\n\n"
        "That was the provider's outage; I re-ran the job and it passed.",
        "Your log shows:\nHTTP 503: Service Unavailable\nThat was a short outage; the re-run passed.",
        "```\nAPI call failed after 3 retries: HTTP 429: Rate limit exceeded\n```",
        "> Error code: 401 - {'error': {'code': 'invalid_api_key'}}",
        "- HTTP 429: Too Many Requests — after Retry-After\n- HTTP 503: Service Unavailable — with backoff",
        "1. HTTP 429: Too Many Requests — back off and retry.",
        "| 429 | rate_limit_exceeded | back off |\n| 503 | service unavailable | retry |",
        "The error `openai.RateLimitError: Error code: 429` appears when the batch exceeds the TPM limit.",
        'If you see "API call failed after 3 retries: HTTP 429", lower the concurrency.',
        "Rate limiting for the public API is now 100 requests per minute per token.",
        "> 错误：该模型当前访问量过大，请您稍后再试\n\n这是智谱的限流提示，稍后重试即可。",
    ],
)
def test_an_answer_that_quotes_an_error_in_its_last_lines_is_left_alone(ending):
    assert judge(PARTIAL + "\n\n" + ending) is None


def test_an_error_opening_on_a_later_line_does_not_count_as_the_start_of_the_reply():
    reply = (
        "Summary of the night.\nError: rate limit exceeded in the nightly job, so I added backoff.\n\nAll green now."
    )
    assert judge(reply) is None


def test_an_error_after_a_partial_answer_is_caught_only_inside_the_tail_window():
    reply = PARTIAL + "\n\nAPI call failed after 3 retries: HTTP 503: Service Unavailable"
    assert judge(reply, tail=len("API call failed after 3 retries: HTTP 503: Service Unavailable")) is not None
    assert judge(reply, tail=40) is None


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


def migrate_output(verbosity: int) -> str:
    out = io.StringIO()
    call_command("migrate", verbosity=verbosity, stdout=out)
    return out.getvalue()


def test_migrate_says_how_many_built_ins_it_installed(db):
    HermesErrorPattern.objects.filter(key__in=["rate-limit", "timeout"]).delete()
    assert "Installed 2 built-in error patterns." in migrate_output(1).splitlines()


def test_migrate_says_nothing_about_built_ins_when_none_is_missing(db):
    assert "built-in" not in migrate_output(1)


def test_a_quiet_migrate_says_nothing_about_the_built_ins_it_installs(db):
    HermesErrorPattern.objects.filter(key="rate-limit").delete()
    assert migrate_output(0) == ""
    assert HermesErrorPattern.objects.filter(key="rate-limit").exists()


def test_a_built_in_added_in_a_later_release_appears_on_the_next_migrate(db, monkeypatch):
    HermesErrorPattern.objects.filter(key="http-4xx").update(enabled=False)
    later = dict(BUILTINS[0], key="added-later", name="Added later", pattern="added later marker")
    monkeypatch.setattr(seeding, "BUILTINS", [*BUILTINS, later])
    call_command("migrate", verbosity=0)
    assert HermesErrorPattern.objects.get(key="added-later").is_built_in
    assert HermesErrorPattern.objects.get(key="http-4xx").enabled is False
