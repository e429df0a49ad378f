"""An answer envelope with nothing in it is a blank reply (SPEC §3.3): pure, no database."""

import pytest

from patterns.matching import empty_answer_envelope, is_blank


@pytest.mark.parametrize(
    "reply",
    [
        '{\n "text": ""\n}',
        '{"model":"gemini-2.5-flash","text":"","usage":{"inputTokens":6,"outputTokens":0,"totalTokens":22}}',
        '{\n  "text": "",\n  "tokens": -24389,\n  "finish_reason": null\n}',
        '{"role": "assistant", "content": [], "api": "bedrock-converse-stream", "provider": "amazon-bedrock",'
        ' "usage": {"input": 0, "output": 0}, "stopReason": "stop"}',
        '{"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}],'
        ' "usage": {"total_tokens": 12}}',
        '{"choices": []}',
        '{"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP"}]}',
        '{"content": [{"type": "text", "text": "   "}]}',
    ],
)
def test_an_answer_envelope_with_no_text_is_blank(reply):
    assert empty_answer_envelope(reply) and is_blank(reply)


@pytest.mark.parametrize(
    "reply",
    [
        '{"text": "Done: 3 rows updated."}',
        '{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}',
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function"}]}',
        '{"text": "", "images": ["https://example.com/cat.png"]}',
        '{"text": "", "message": "You exceeded your current quota"}',
        '{"error": {"message": "Rate limit reached"}, "text": ""}',
        '{"sentiment": "positive", "score": 0.87}',
        '{"title": "Weekly report", "items": [1, 2]}',
        '{"output": 0}',
        '{"text": ""} and then some words',
        "[]",
        '{"text": "' + "x" * 5000 + '"}',
    ],
)
def test_an_envelope_that_holds_something_is_not_blank(reply):
    assert not empty_answer_envelope(reply) and not is_blank(reply)


def test_a_broken_or_deeply_nested_document_is_not_an_envelope():
    assert not empty_answer_envelope('{"text": ""')
    assert not empty_answer_envelope('{"content": ' * 50 + '""' + "}" * 50)
