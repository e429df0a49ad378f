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


@pytest.mark.parametrize(
    "reply",
    [
        '{"reply": "", "handoff": true, "next_agent": "billing_specialist"}',
        '{"answer": [], "query": "overdue invoices for customer 1183", "total_found": 0}',
        '{"is_spam": false, "language": "de", "sentiment": "neutral", "output": null}',
        '{"role": "assistant", "content": "", "refusal": "I\'m sorry, but I can\'t help with that."}',
        '{"content": "", "type": "image_url", "image_url": "https://cdn.example.com/out/cat.png"}',
        '{"choices": [{"finish_reason": "content_filter", "message": {"role": "assistant", "content": null}}]}',
    ],
)
def test_a_node_s_structured_output_a_refusal_or_a_filtered_answer_is_not_blank(reply):
    assert not empty_answer_envelope(reply)


@pytest.mark.parametrize(
    "reply",
    [
        '{"content":"","id_slot":0,"stop":true,"model":"qwen.gguf","tokens_predicted":0,"generation_settings":'
        '{"n_ctx":4096},"timings":{"prompt_n":12}}',
        '[{"generated_text":""}]',
        '{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"end_turn","usage":{"inputTokens":10},'
        '"metrics":{"latencyMs":412}}',
        '{"id":"pred1","status":"succeeded","output":[],"metrics":{"predict_time":0.8},"model":"meta/llama-2-7b-chat"}',
    ],
)
def test_an_empty_response_of_llama_cpp_tgi_bedrock_or_replicate_is_blank(reply):
    assert empty_answer_envelope(reply)
