"""Where the learned model may judge a reply: pure rules of ``patterns.matching`` (SPEC §3.3a)."""

import pytest

from patterns.matching import (
    MODEL_MIN_COLUMNS,
    MODEL_SHORT_MIN_COLUMNS,
    MODEL_SHORT_MIN_PROBABILITY,
    is_plain_json_output,
    model_may_judge,
    reply_columns,
)
from patterns.training import gated_probability


def test_a_wide_character_counts_two_columns():
    assert reply_columns("令牌 ok") == 7


@pytest.mark.parametrize(
    "reply", ["", "   ", "Done.", "x" * (MODEL_MIN_COLUMNS - 1), "令" * (MODEL_MIN_COLUMNS // 2 - 1)]
)
def test_a_reply_narrower_than_the_minimum_is_not_for_the_model(reply):
    assert not model_may_judge(reply, head_chars=500)


@pytest.mark.parametrize("reply", ["x" * MODEL_MIN_COLUMNS, "令" * (MODEL_MIN_COLUMNS // 2), "  " + "y" * 40 + "  "])
def test_a_reply_of_the_minimum_width_is_for_the_model(reply):
    assert model_may_judge(reply, head_chars=500)


@pytest.mark.parametrize(
    "reply", ["upstream request timeout", "服务器异常，请稍后重试", "Sorry, no response was returned."]
)
def test_a_short_reply_is_for_the_model_only_when_it_is_sure(reply):
    assert model_may_judge(reply, head_chars=500, probability=MODEL_SHORT_MIN_PROBABILITY)
    assert not model_may_judge(reply, head_chars=500, probability=MODEL_SHORT_MIN_PROBABILITY - 0.01)
    assert not model_may_judge(reply, head_chars=500)


@pytest.mark.parametrize("reply", ["Done.", "OK", "x" * (MODEL_SHORT_MIN_COLUMNS - 1), "已完成。"])
def test_a_reply_narrower_than_the_short_minimum_is_never_for_the_model(reply):
    assert not model_may_judge(reply, head_chars=500, probability=1.0)


def test_the_threshold_is_chosen_on_the_probabilities_the_gate_lets_stand():
    assert gated_probability("upstream request timeout", 0.95) == 0.0
    assert gated_probability("upstream request timeout", 0.995) == 0.995
    assert gated_probability("Error code: 429 - {'error': {'message': 'Rate limit reached'}}", 0.8) == 0.8


def test_surrounding_white_space_does_not_count_toward_the_width():
    assert not model_may_judge(" " * 50 + "Done." + "\n" * 50, head_chars=500)


def test_an_answer_that_starts_by_quoting_an_error_is_not_for_the_model():
    reply = 'Q: What does "Error code: 429 - rate limit exceeded" mean? It means you sent too many requests.'
    assert not model_may_judge(reply, head_chars=500)


@pytest.mark.parametrize(
    "reply",
    [
        '{"sentiment": "positive", "score": 0.87, "language": "en"}',
        '{"invoice_number": "A-1001", "total": 120.5, "currency": "USD"}',
        '[{"name": "Ada", "team": "infra"}, {"name": "Lin", "team": "data"}]',
        '{"status": "ok", "error": null, "latency_ms": 512}',
        '{"invoice_id": "INV-2041", "amount": 450, "currency": "EUR", "status": "paid"}',
        '{"error_count": 0, "warnings": 2, "processed": 1500}',
        '{"code": 0, "message": "success", "data": {"orders": 17, "timeouts": 0}}',
        '{"status": "success", "message": "Invoice INV-2291 sent to billing@acme.com"}',
        '{"code": 200, "msg": "操作成功", "data": null}',
    ],
)
def test_a_node_s_plain_json_output_is_not_for_the_model(reply):
    assert is_plain_json_output(reply) and not model_may_judge(reply, head_chars=500)


@pytest.mark.parametrize(
    "reply",
    [
        '{"error": {"message": "The engine is currently overloaded", "type": "server_error"}}',
        '{"code": 1113, "msg": "余额不足或无可用资源包,请充值。"}',
        '{"sentiment": "positive", "score": 0.87',
        '{"status": "failed", "code": 503, "items": []}',
        '[{"id": 1, "status": "ok"}, {"id": 2, "status": "failed", "error": "timeout"}]',
        '{"message": "Rate limit exceeded, please retry in 20s"}',
        "The summary is in the attached table; the figures come from the March export.",
    ],
)
def test_an_error_body_broken_json_or_prose_is_not_plain_json_output(reply):
    assert not is_plain_json_output(reply)
