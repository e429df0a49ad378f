"""Where the learned model may judge a reply: pure rules of ``patterns.matching`` (SPEC §3.3a)."""

import pytest

from patterns.matching import MODEL_MIN_COLUMNS, model_may_judge, reply_columns


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


def test_surrounding_white_space_does_not_count_toward_the_width():
    assert not model_may_judge(" " * 50 + "Done." + "\n" * 50, head_chars=500)


def test_an_answer_that_starts_by_quoting_an_error_is_not_for_the_model():
    reply = 'Q: What does "Error code: 429 - rate limit exceeded" mean? It means you sent too many requests.'
    assert not model_may_judge(reply, head_chars=500)
