"""Kinds of category and precision mistakes the built-ins and the detector used to make
(SPEC §3.2, §3.3; issue 15): one test per kind, judged by the shipped built-ins."""

import pytest

from patterns.matching import about_errors, is_plain_json_output, json_body_end, quotes_an_error
from tests.bench.quality import builtin_matcher, rule_detect


def judge(reply, *, tail=800):
    return builtin_matcher().detect(reply, head_chars=500, tail_chars=tail)


def category_of(reply):
    found = judge(reply)
    return None if found is None else found.category


# --- precision: answers about errors -------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "Q: What does \"Error code: 429 - {'error': {'message': 'Rate limit reached'}}\" mean?\n"
        "A: The provider is throttling the caller; space the calls out.",
        "That `RateLimitError: Error code: 429 - {'error': {'message': 'slow down'}}` message comes from the "
        "provider, not from your code.",
        'Glossary entry — `{"type":"error","error":{"type":"not_found_error"}}`: the model name is wrong.',
        "问：“relay error (channel #2): 当前分组上游负载已饱和，请稍后再试” 是什么意思？\n答：上游繁忙，稍后再试。",
        "The error you pasted (`OpenAI error: Error code: 400 - {'error': {'message': 'moderation'}}`) is harmless.",
    ],
)
def test_a_reply_that_quotes_an_error_after_a_few_words_is_an_answer_about_it(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ('Error { code: "ThrottlingException", message: "Too many requests, please wait" }', "rate_limit"),
        ('Post "https://api.example.com/v1/chat/completions": context deadline exceeded', "timeout"),
        ('Get "http://127.0.0.1:11434/api/tags": read tcp 10.0.0.2:5000: connection reset by peer', "network"),
        ("Agent \"researcher\" failed: Error code: 429 - {'error': {'message': 'Rate limit reached'}}", "rate_limit"),
        ("Tool `web_search` failed: HTTP 503: Service Unavailable", "server_error"),
    ],
)
def test_a_quote_that_belongs_to_the_error_itself_still_opens_it(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Our gateway returns these error codes: 400 Bad Request, 401 Authentication Fails, "
        "429 Too Many Requests, 503 Server Overloaded.",
        "HTTP 状态码速查：400 请求错误，401 未认证，408 请求超时，500 服务器内部错误。",
    ],
)
def test_a_head_that_names_three_different_statuses_is_a_reference_not_an_error(reply):
    assert judge(reply) is None


def test_an_error_that_repeats_its_own_status_is_still_an_error():
    assert category_of('HTTP 429: {"error": {"code": 429, "status": 429, "message": "Rate limit"}}') == "rate_limit"


def test_a_comparison_of_two_statuses_is_prose():
    assert judge("502 vs 504: 502 Bad Gateway means the proxy got a bad answer; 504 means none came.") is None


def test_detail_in_a_list_is_not_an_error_label():
    assert judge("Wrote 5 view tests with the client: list, detail, update, and the 404 case.") is None


# --- categories: the body's cause ------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "[API Error: Resource has been exhausted (e.g. check quota).]",
        "429 Resource has been exhausted (e.g. check quota).",
        '✕ [API Error: [{ "error": { "code": 429, "message": "Resource exhausted. Please try again later." } }]]',
    ],
)
def test_google_s_resource_exhausted_is_a_rate_limit(reply):
    assert category_of(reply) == "rate_limit"


def test_one_api_s_saturated_upstream_is_overloaded_whatever_code_it_carries():
    reply = (
        "Error code: 429 - {'error': {'message': '当前分组上游负载已饱和，请稍后再试', "
        "'type': 'insufficient_quota', 'code': 'insufficient_quota'}}"
    )
    assert category_of(reply) == "overloaded"


def test_too_many_tokens_with_a_request_to_wait_is_a_rate_limit():
    assert category_of("API Error (429 Too many tokens, please wait before trying again.)") == "rate_limit"


@pytest.mark.parametrize(
    "reply",
    [
        "Error code: 413 - {'error': {'message': 'Request too large for model `m` on tokens per minute (TPM): "
        "Limit 6000, Requested 9000.', 'code': 'rate_limit_exceeded'}}",
        'Error: {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size."}}',
        "Error code: 400 - {'error': {'message': 'Invalid request: Your request exceeded model token limit: 8192'}}",
    ],
)
def test_a_request_too_large_for_the_model_is_context_length_even_when_coded_as_a_rate_limit(reply):
    assert category_of(reply) == "context_length"


@pytest.mark.parametrize(
    "reply",
    [
        "Error code: 400 - {'error': {'message': 'Model Not Exist', 'type': 'invalid_request_error'}}",
        "Error code: 400 - {'error': {'message': 'The model `old-8k` has been decommissioned.'}}",
        'API call failed after 3 retries: {"type":"error","error":{"type":"not_found_error","message":"model: x"}}',
    ],
)
def test_a_missing_or_retired_model_in_a_400_body_is_model_not_found(reply):
    assert category_of(reply) == "model_not_found"


@pytest.mark.parametrize(
    "reply",
    [
        "ValueError: No generation chunks were returned",
        "stream disconnected before completion: stream closed before response.completed",
        "❌ Error: Invalid response from the model: finish_reason=length, content was empty.",
    ],
)
def test_an_empty_or_cut_short_answer_is_incomplete(reply):
    assert category_of(reply) == "incomplete"


@pytest.mark.parametrize(
    "reply",
    [
        "You have reached your specified API usage limits. You will regain access on 2027-01-01 at 00:00 UTC.",
        "您的账户已欠费，请充值后重试。",
    ],
)
def test_a_spending_cap_or_an_overdue_account_is_quota(reply):
    assert category_of(reply) == "quota"


@pytest.mark.parametrize(
    "reply, category",
    [
        ('{"base_resp":{"status_code":1027,"status_msg":"output new_sensitive"}}', "content_filter"),
        ('{"base_resp":{"status_code":1004,"status_msg":"login fail: carry the API secret key"}}', "auth"),
        ('{"base_resp":{"status_code":1039,"status_msg":"token limit"}}', "context_length"),
    ],
)
def test_a_minimax_base_resp_body_is_an_error_with_its_message_s_category(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            'API error occurred: Status 429 {"message":"Service tier capacity exceeded for this model."}',
            "overloaded",
        ),
        ("Rate limited after 3 retries", "rate_limit"),
        ("Max parallel request limit reached for key abc123: 2 in flight", "rate_limit"),
        ("Error: llama runner process has terminated: exit status 2", "server_error"),
        ("分组 vip 下模型 claude-x 无可用渠道（distributor）", "model_not_found"),
        ("the request exceeds the available context size. try a larger context", "context_length"),
        ("The model returned an empty response.", "incomplete"),
    ],
)
def test_a_provider_wording_without_a_status_gets_its_own_category(reply, category):
    assert category_of(reply) == category


# --- a reply that starts by quoting an error (both signals) ------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        'Q: What does "Error code: 429 - rate limited" mean?\nA: Slow down.',
        "That `openai.APITimeoutError: Request timed out.` message comes from the client.",
        "排查结论：`Error code: 429 - {'message': 'Request was rejected due to rate limiting'}` 昨晚出现过两次。",
        "问：“relay error (channel #5): 上游繁忙” 是什么意思？",
    ],
)
def test_a_reply_that_starts_by_quoting_an_error_quotes_an_error(reply):
    assert quotes_an_error(reply, head_chars=500) is True


@pytest.mark.parametrize(
    "reply",
    [
        'Post "https://api.example.com/v1/chat": context deadline exceeded',
        'Error { code: "ThrottlingException", message: "Too many requests" }',
        "<class 'botocore.exceptions.EventStreamError'>: An error occurred (throttlingException)",
        'Agent "researcher" failed: Error code: 429 - {"error": {"message": "Rate limit reached"}}',
        'I renamed the "Export" button and shipped it.',
        "",
    ],
)
def test_an_error_with_quotes_of_its_own_or_a_plain_answer_quotes_no_error(reply):
    assert quotes_an_error(reply, head_chars=500) is False


@pytest.mark.parametrize(
    "reply, category",
    [("429 额度已用尽，请充值后再试。", "quota"), ("403 您的账户已欠费，请充值后重试。", "quota")],
)
def test_a_bare_status_then_a_provider_sentence_takes_the_sentence_s_category(reply, category):
    assert category_of(reply) == category


def test_a_token_limit_that_is_not_the_model_s_is_not_called_context_length():
    assert (
        category_of("Error: You have exceeded your monthly token limit, please upgrade your plan.") != "context_length"
    )


# --- the second batch of public replies (folds-2): provider wordings and shapes -----------------


@pytest.mark.parametrize(
    "reply",
    [
        "Error: stream ended without finish_reason",
        "ValueError: the streaming response ended without a final chunk.",
        "no content in the Claude response",
        "The model finished without writing a response. Please try again.",
    ],
)
def test_a_stream_that_ends_without_an_answer_is_incomplete(reply):
    assert category_of(reply) == "incomplete"


@pytest.mark.parametrize(
    "reply",
    [
        "The server had an error processing your request. Sorry about that! You can retry your request.",
        '{"error": {"message": "The server had an error while processing your request.", "type": "invalid"}}',
        "stream error: An error occurred while processing your request. You can retry your request.",
    ],
)
def test_openai_s_server_had_an_error_sentence_is_a_server_error(reply):
    assert category_of(reply) == "server_error"


@pytest.mark.parametrize(
    "reply",
    [
        "Return Msg: <400> InternalError.Algo.DataInspectionFailed: Output data may contain sensitive words.",
        "<400> InternalError.Algo.DataInspectionFailed: the input was refused.",
    ],
)
def test_dashscope_s_data_inspection_failure_is_a_content_filter(reply):
    assert category_of(reply) == "content_filter"


@pytest.mark.parametrize(
    "reply",
    [
        "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min. Limit: 3 / min.",
        "Error code: 429 - {'error': {'message': 'Rate limit reached for model `mixtral` in organization `org_x`"
        " on tokens per day (TPD): Limit 100. Upgrade your billing plan.'}}",
    ],
)
def test_a_rate_limit_reached_for_a_model_in_an_organization_is_a_rate_limit_even_beside_billing(reply):
    assert category_of(reply) == "rate_limit"


def test_too_many_tokens_please_wait_is_a_throttle_not_a_context_limit():
    reply = "Too many tokens, please wait before trying again.\n\nError: The request was throttled."
    assert category_of(reply) == "rate_limit"


@pytest.mark.parametrize(
    "reply",
    [
        "402 This request requires more credits, or fewer max_tokens. You requested up to 8000 tokens.",
        'Error code: 429 "Your team abc has either used all available credits or reached its monthly spending limit."',
        "token quota is not enough (request id: 20250101abc)",
        "Access denied, please make sure your account is in good standing. For details, see the docs.",
    ],
)
def test_credits_spending_limits_and_an_account_not_in_good_standing_are_quota(reply):
    assert category_of(reply) == "quota"


@pytest.mark.parametrize(
    "reply, category",
    [
        ('403 {"error": {"message": "Your org exceeded current quota, please check billing"}}', "quota"),
        ('429 "The account is throttled, slow down."', "rate_limit"),
    ],
)
def test_a_bare_status_then_a_quoted_message_or_a_body_opens_an_error(reply, category):
    assert category_of(reply) == category


def test_a_bedrock_model_without_access_is_a_model_not_found():
    reply = (
        "botocore.errorfactory.AccessDeniedException: An error occurred (AccessDeniedException) when calling "
        "the Converse operation: You don't have access to the model with the specified model ID."
    )
    assert category_of(reply) == "model_not_found"


@pytest.mark.parametrize(
    "reply",
    [
        "An error occurred (ServiceUnavailableException) when calling the InvokeModel operation: try later.",
        "Converse failed after 3 attempts: ModelNotReadyException: the model is not ready to serve requests.",
    ],
)
def test_bedrock_s_service_unavailable_and_model_not_ready_are_overloaded(reply):
    assert category_of(reply) == "overloaded"


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Input is too large to process. Either enable context shift or increase the context.", "context_length"),
        ("模型调用报错：Input prompt (9000 tokens) is too long and exceeds limit of 4096", "context_length"),
        ("RuntimeError: Requested tokens (5000) exceed context window of 4096", "context_length"),
        ("too many tokens: total number of tokens in the prompt cannot exceed 2048 - received 3000.", "context_length"),
    ],
)
def test_local_servers_prompt_too_long_sentences_are_context_length(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Your API key has expired. Please create a new key to continue.", "auth"),
        ("invalid api token", "auth"),
        ('{"error": {"code": "AccessDenied", "message": "You cannot use this resource."}}', "auth"),
        ("[TencentCloudSDKException] code:AuthFailure.SecretIdNotFound message:密钥不存在", "auth"),
        ("[TencentCloudSDKException] code:RequestLimitExceeded message:请求的次数超过了频率限制。", "rate_limit"),
        ("You are past the per minute request limit, please wait and try again later.", "rate_limit"),
    ],
)
def test_expired_keys_refused_access_and_request_limits_get_their_category(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Failed to get response from Anthropic error, status code: 502, message: Bad Gateway", "server_error"),
        ("app.llm:ask:120 - API error: Request timed out.", "timeout"),
        ("第 3 步执行出错：app.agent:run:88 - API error: Request timed out.", "timeout"),
        ('Error: pull failed: Get "https://registry.example.com/v2/": dial tcp: lookup x: no such host', "network"),
        ('{"error_code":336100,"error_msg":"Invalid API key"}', "auth"),
        ('{"error_code":336003,"error_msg":"the first message role must be user"}', "other"),
    ],
)
def test_wrappers_log_prefixes_and_error_code_bodies_open_an_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Reading the error, the balance is too small for a long reply; raise max_tokens only after topping up.",
        "Suggested change: catch ThrottlingException from Converse, back off and retry, so a rate limit never "
        "fails the test.",
        "Seen in the log: HTTP 200, no finish reason, an empty response body; retrying a second later works.",
    ],
)
def test_prose_about_an_error_or_a_success_status_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ('{"message":"API error occurred: Status 503 Body {\\"message\\":\\"Service unavailable\\"}"}', "server_error"),
        ('{"message": "Error: too many requests, slow down", "status": 429}', "rate_limit"),
    ],
)
def test_a_json_body_whose_message_is_an_error_opens_an_error(reply, category):
    assert category_of(reply) == category


def test_a_json_body_whose_message_is_ordinary_text_is_no_error():
    assert judge('{"message": "Saved. The rate limit for this export is 10 per day.", "ok": true}') is None


@pytest.mark.parametrize(
    "reply",
    [
        '{"promptFeedback": {"blockReason": "SAFETY"}}',
        '{"candidates": [{"finishReason": "PROHIBITED_CONTENT", "index": 0}]}',
    ],
)
def test_gemini_s_answer_blocked_for_safety_is_a_content_filter(reply):
    assert category_of(reply) == "content_filter"


def test_gemini_s_answer_that_finished_normally_is_no_error():
    assert judge('{"candidates": [{"finishReason": "STOP", "content": {"parts": [{"text": "Hi"}]}}]}') is None


def test_cohere_s_trial_key_sentence_is_a_rate_limit():
    reply = "You are using a Trial key, which is limited to 10 API calls / minute. Upgrade for higher limits."
    assert category_of(reply) == "rate_limit"


# --- the third batch of public replies (folds-3): provider wordings and shapes -----------------


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "错误信息: 400 FAILED_PRECONDITION. {'error': {'code': 400, 'message': 'User location is not supported "
            "for the API use.', 'status': 'FAILED_PRECONDITION'}}",
            "auth",
        ),
        (
            '✕ [API Error: {"error": {"code": 400, "message": "API Key not found. Please pass a valid API key."}}]',
            "auth",
        ),
        (
            '{"error": {"message": "BedrockException - Model access is denied due to IAM user or service role is '
            'not authorized to perform the required AWS Marketplace actions"}}',
            "auth",
        ),
        (
            '{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}',
            "model_not_found",
        ),
        ("Error: Validation error: The provided model identifier is invalid.", "model_not_found"),
        ("the model or endpoint doubao-1-5-pro does not exist or you do not have access to it.", "model_not_found"),
        (
            "研究过程中发生错误: Error code: 400 - {'error': {'message': 'Content Exists Risk', 'type': "
            "'invalid_request_error'}}",
            "content_filter",
        ),
        (
            "Error code: 403 - {'code': 'The caller does not have permission to execute the specified operation', "
            "'error': 'Content violates usage guidelines. Failed check: SAFETY_CHECK_TYPE_BIO'}",
            "content_filter",
        ),
        (
            'Error: Z.AI API error (400 Bad Request): {"error":{"code":"1261","message":"Prompt exceeds max length"}}',
            "context_length",
        ),
        (
            "API error: Error code: 403 - {'code': 30011, 'message': 'The selected model requires paid balance. "
            "Your paid balance is insufficient. Please top up and try again.', 'data': None}",
            "quota",
        ),
        ('{\n  "error": true,\n  "message": "Failed to fetch"\n}', "network"),
        ('{\n  "candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS"}]\n}', "incomplete"),
        (
            'unexpected status 502 Bad Gateway: DeepSeek 400: {"error":{"message":"An assistant message with '
            "'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.\"}}",
            "other",
        ),
        ("请求速度过快，被服务商限制了访问频率，请稍后再试。", "rate_limit"),
    ],
)
def test_provider_words_of_the_third_batch_name_their_cause_over_the_status(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "User location is not supported errors come from Gemini's region check; a Vertex AI endpoint in a "
        "supported region avoids them.",
        "A DeploymentNotFound error means the deployment name in your config does not match the one in Azure.",
        "Content Exists Risk 是 DeepSeek 的内容审核提示，说明输入触发了风控，换个说法即可。",
        "Failed to fetch usually means the browser could not reach the API at all: check CORS and the base URL.",
        "If the balance is insufficient, top up in the console; the key keeps working after that.",
        "The model does not exist error is what you get when the model name has a typo.",
        "The 500 from Ollama with `model requires more system memory (127.8 GiB) than is available (13.2 GiB)` is "
        "a resource limit, not a bug (pick a smaller model).",
    ],
)
def test_prose_about_the_third_batch_s_provider_words_is_left_alone(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "Failed to get answer\n\nCaused by:\n    Blocked by safety settings, consider adjusting "
            "`block_threshold` in the client configuration",
            "content_filter",
        ),
        (
            'Exception in thread "main" java.lang.RuntimeException: chat failed\nCaused by: '
            "java.net.SocketTimeoutException: Read timed out",
            "timeout",
        ),
    ],
)
def test_an_error_chain_with_a_caused_by_line_opens_an_error(reply, category):
    assert category_of(reply) == category


def test_an_answer_that_mentions_a_cause_later_does_not_open_an_error_chain():
    reply = (
        "The build broke on Tuesday.\nThe root cause, as the log says, was a timed out download; "
        "caused by: a mirror that was down."
    )
    assert judge(reply) is None


def test_a_clause_after_a_comma_with_a_verb_of_prose_is_not_a_provider_sentence():
    assert category_of("Rate limit exceeded, which is what the docs call a 429; please retry later.") is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("No response returned", "incomplete"),
        ("No response received.", "incomplete"),
        ("(empty)", "incomplete"),
        ("API 调用参数有误，请检查文档。 (code: 1210)", "other"),
    ],
)
def test_chinese_label_qualifiers_and_empty_or_refused_requests_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "参数错误通常是因为字段名拼写不对，对照文档改一下即可。",
        "The (empty) marker in the log means the agent wrote nothing for that step; the retry wrote the summary.",
        "No response returned by the webhook is expected: it answers 204 and the engine moves on.",
    ],
)
def test_prose_about_empty_replies_or_bad_parameters_is_left_alone(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply",
    [
        # an article does not lead a provider sentence
        "The quota resets at midnight UTC.",
        "A timeout of 30 seconds applies to each upstream call.",
        "The throttling policy applies per API key.",
        "An invalid API key returns 401 (see the auth guide).",
        "The input exceeds the maximum length of 255 characters for the title field.",
        "The API key is missing from the request headers, add an Authorization header.",
        # a provider sentence does not run on past a comma: these are reports and glossaries
        "余额不足，已自动切换到备用账户并完成任务。",
        "参数错误，已修复并重新提交。",
        "Timed out, retried with a longer deadline and succeeded.",
        "Rate limited, backed off for 60 seconds and completed all 500 requests.",
        "Rate limit, the cap on requests per minute.",
        "Here is the translated document.\n\nIt has three sections and a glossary.\n\nTimed out, retried and finished.",
        # a commit message or a postmortem with a Caused by: line
        "Fix flaky test in test_client.py\nCaused by: a 5 s timeout that was too short on CI; raised to 30 s.",
        "Triage of last night's 3 failed jobs\nCaused by: the nightly quota reset ran late; all 3 were re-run.",
        # Chinese labels that open an explanation
        "常见错误原因：余额不足、API Key 无效、请求过于频繁。",
        "错误提示：当余额不足时，前端应弹出充值引导，而不是显示空白页。",
        "失败原因：目标网站连接超时，已跳过该站点，其余 11 个站点已完成抓取，结果见附件。",
        "错误原因：第 42 行把 timeout 设成了 0，导致请求立即超时；改成 30 秒后测试全部通过。",
        # answers that use a provider's words for something else
        "Your mobile bill this month is 128 yuan.\n\nPlease top up before the 15th to avoid interruption.",
        "Violates content policy, recommend removal.",
        "No response received from 3 of the 20 hosts; see the list below.",
        "Failed to fetch the RSS feed (HTTP 404), so today's digest covers the other 11 sources.",
        "(empty) — no files matched the filter.",
        "限制访问频率，建议在网关层统一实现。",
        "Access is denied, check the folder permissions.",
    ],
)
def test_answers_that_borrow_a_provider_s_words_are_left_alone(reply):
    assert judge(reply) is None


def test_a_sensitive_input_refusal_is_a_content_filter_though_it_says_parameter_error_first():
    reply = "参数错误 (HTTP 422)：某个请求参数被拒绝，通常是程序缺陷。若持续出现请反馈。 input new_sensitive (1026)"
    assert category_of(reply) == "content_filter"


def test_a_pretty_printed_response_cut_off_at_max_tokens_is_incomplete():
    reply = (
        '{\n  "candidates": [\n    {\n      "content": {\n        "parts": [{"text": ""}],\n        "role": "model"\n'
        '      },\n      "finishReason": "MAX_TOKENS",\n      "index": 0\n    }\n  ]\n}'
    )
    found = rule_detect(builtin_matcher(), reply)  # an answer envelope with no text: blank
    assert (found.matched_by, found.category) == ("blank", "incomplete")


@pytest.mark.parametrize(
    "reply",
    [
        "The model weights were not found in the local cache, so the first run downloads about 4 GB.",
        "The model checkpoint path does not exist on the new server; copy it over from /data/old before training.",
        "错误信息：无。12 个任务全部成功，耗时 3 分 20 秒，没有出现超时或限流。",
        "错误详情：无。本次同步 1,204 条记录全部成功，没有出现网络超时。",
        "Content violates our usage policies: it promotes self-harm. Recommend removal.",
        "Blocked by safety filter: 3 posts (ids 12, 19, 44). All others were approved and published.",
        "Balance is insufficient for the ¥5000 transfer (current balance ¥3200).",
        "速度过快（超过限速 20% 以上未达 50%）记 6 分，罚款 200 元。",
        "参数有误（第 3 行的日期格式），已改成 YYYY-MM-DD 并重新导入，共 120 行全部成功。",
        "finish_reason: length — the model hit max_tokens before it finished.",
        '[{"request_id": "a1", "finish_reason": "length", "action": "raised max_tokens to 4096"}]',
        "Message exceeds max length of 2000 characters (Discord's limit), so I split the summary into three posts.",
        "User location is not supported by the Garmin export, so the map view in the report stays empty.",
        "API key is missing: 3 of 12 services (billing, search, mail); I added them to the secrets file.",
        "Not authorized to perform the CreateBucket action (IAM) was the root cause; I attached the S3 policy.",
        "Deployment not found in namespace staging (checked with kubectl get deploy -n staging), so I created it.",
        "Requires a paid balance: Qwen2.5-72B and DeepSeek-R1 (Pro). Free tier: Qwen2.5-7B and GLM-4-9B.",
    ],
)
def test_reports_glossaries_and_verdicts_in_the_new_built_ins_words_are_left_alone(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "Error code: 400 - {'error': {'code': 400, 'message': 'User location is not supported for the API use "
            "without a billing account linked.', 'status': 'FAILED_PRECONDITION'}}",
            "auth",
        ),
        (
            "Error code: 400 - {'error': {'code': 400, 'message': 'The input token count (1200000) exceeds the "
            "maximum number of tokens allowed (1048576).', 'status': 'INVALID_ARGUMENT'}}",
            "context_length",
        ),
    ],
)
def test_gemini_s_region_and_token_count_refusals_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Rate limit exceeded (see the dashboard), so I paused the crawler for an hour.",
        "余额不足（账户还剩 3 元），已切换到备用账户完成任务。",
        "Content Exists Risk (DeepSeek's moderation flag): the input tripped its filter, so rephrase the prompt.",
    ],
)
def test_a_bracket_after_a_provider_phrase_followed_by_prose_is_not_a_provider_sentence(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Insufficient Balance (code 1113), please top up.", "quota"),
        ("余额不足（错误码 1113），请充值后再试。", "quota"),
        ("分组 default 下模型 gpt-4o 无可用渠道（distributor） (request id: 20250301)", "model_not_found"),
        ("Request payload too large (413). Cannot compress further.", "context_length"),
    ],
)
def test_a_bracket_after_a_provider_phrase_followed_by_how_provider_messages_go_on_is_one(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Rate limit: 60 requests per minute per key.",
        "Quota exceeded: 3 of 40 teams this quarter (sales, ops, support).",
        "Timeout: 30 s for each call, 120 s for the whole run.",
        "Context length: 128k tokens for GPT-4o, 200k for Claude.",
    ],
)
def test_a_spec_line_that_gives_a_provider_phrase_a_value_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Insufficient balance: 0.00 CNY. Please recharge.", "quota"),
        ("Rate limit exceeded: 60 requests per minute. Please retry later.", "rate_limit"),
    ],
)
def test_a_provider_s_value_after_its_phrase_is_still_its_detail(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        '{\n  "status": "success",\n  "error": null,\n  "items": 42\n}',
        '{"ok": true, "error": ""}',
        '{"has_error": false, "error": false, "message": "All good"}',
        '[{"id": 7, "error": {}}, {"id": 8, "error": []}]',
        "Opened PR: https://github.com/acme/web/pull/431",
    ],
)
def test_a_record_without_an_error_or_a_url_ending_in_three_digits_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ('{"error": true, "message": "Failed to fetch"}', "network"),
        ("HTTP/1.1 429 Too Many Requests", "rate_limit"),
    ],
)
def test_an_error_flag_and_a_versioned_status_line_still_open_an_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Status: 100% complete. Migrated 512 tables; no data loss.",
        "Address: 404 Hamilton Ave, Palo Alto, CA 94301",
        "Total: 499 USD.",
        "Error message: none. All 12 tasks succeeded with no timeouts.",
        "错误：无。本次同步 1,204 条记录全部成功，没有出现网络超时。",
    ],
)
def test_a_figure_an_address_or_a_label_that_says_none_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("503 Service Unavailable", "server_error"),
        ("529 Overloaded", "overloaded"),
        ("status: 429, slow down", "rate_limit"),
    ],
)
def test_a_bare_status_with_its_reason_phrase_still_opens_an_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Rate limit raised to 500 RPM for your key.",
        "Quota increased to 2M tokens/day for the analytics project.",
        "网络已恢复正常。",
        "超时已修复。",
        "限流已解除。",
    ],
)
def test_a_report_that_a_limit_or_fault_was_changed_or_fixed_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply",
    [
        "Timeout: 30s\nRetries: 3\nBackoff: exponential",
        "超时：30 秒\n重试：3 次\n退避：指数",
        "- Rate limit: 100 req/min\n- Burst: 20",
    ],
)
def test_a_config_block_of_key_value_lines_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply", ["Rate limit: 100 req/min", "超时：30 秒", "限流：100 QPS", "额度：10 万 tokens/月", "连接池大小：20"]
)
def test_a_spec_line_that_gives_a_provider_phrase_a_figure_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply",
    [
        "Done: requests.Session() is now shared across workers and every call has timeout=10.",
        "❌ 2 tests failed: test_timeout_retry, test_rate_limit_backoff. All other 310 passed.",
        "httpx.Client(timeout=30) is fine here, but please move it out of the loop.",
    ],
)
def test_a_provider_word_in_code_is_no_error(reply):
    assert judge(reply) is None


def test_an_error_code_a_pattern_covers_whole_is_still_its_cause():
    reply = "Error code: 400 - {'error': {'code': 'context_length_exceeded', 'message': 'too long'}}"
    assert category_of(reply) == "context_length"


@pytest.mark.parametrize(
    "reply",
    [
        "Rate limited? Wait 60 seconds and retry.",
        "Too many requests? Use the bulk endpoint instead.",
        "Billing questions? Contact billing@example.com.",
    ],
)
def test_an_faq_heading_that_asks_about_a_provider_phrase_is_no_error(reply):
    assert judge(reply) is None


# --- the fourth batch of public replies (folds-4): log lines, bodies with a code, provider wordings ---------


@pytest.mark.parametrize(
    "reply, category",
    [
        # a log line's level and time before the error's label
        ("[ERROR] 2023-12-27 23:43:12 sse error: Connection error.", "network"),
        ("[Error] 2024-08-04 16:42:54 sse error: LLM model response empty", "incomplete"),
        (
            "2025-03-07 15:41:02.741 | ERROR    | app.llm:ask_tool:250 - API error: Error code: 400 - {'error': "
            "{'message': \"This model's maximum context length is 65536 tokens. However, you requested 66343 tokens.\"}}",
            "context_length",
        ),
        # provider wordings
        ("400: [GoogleGenerativeAI Error]: Candidate was blocked due to SAFETY", "content_filter"),
        ('{\n  "error": true,\n  "message": "Message is being blocked for reason: SAFETY"\n}', "content_filter"),
        (
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 3474 `inputs` tokens "
            "and 60 `max_new_tokens`",
            "context_length",
        ),
        (
            "APIConnectionError: litellm.APIConnectionError: OllamaException - [WinError 10061] No connection could "
            "be made because the target machine actively refused it",
            "network",
        ),
        (
            "Error processing stream: litellm.APIConnectionError: AnthropicException - peer closed connection without "
            "sending complete message body (incomplete chunked read)",
            "network",
        ),
        ("{ error: undefined, errorType: 'InvalidProviderAPIKey' }\nError [TRPCError]: InvalidProviderAPIKey", "auth"),
        (
            "Error in server._step: API call didn't return a message: id='message-9fdf48af' choices=[] "
            "model='gpt-4o-2024-05-13'",
            "incomplete",
        ),
        ("Error: Provider returned empty content", "incomplete"),
        (
            'HTTP/1.1 503 Service Unavailable - {"error":"Model distilbert-base-cased-distilled-squad is currently '
            'loading","estimated_time":20.0}',
            "overloaded",
        ),
        ("Model returned empty response", "incomplete"),
        ("Tokens per minute limit exceeded - too many tokens processed.", "rate_limit"),
        (
            "Error: 400 Unable to access non-serverless model MiniMaxAI/MiniMax-M2.5. Please visit "
            "https://api.together.ai/models/MiniMaxAI/MiniMax-M2.5 to create and start a new dedicated endpoint.",
            "model_not_found",
        ),
    ],
)
def test_replies_of_the_fourth_batch_s_shapes_and_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        '{"code": 200, "message": "Rate limit raised to 500 RPM for the team key", "data": null}',
        '{"code": 0, "message": "Timed out jobs were retried and all finished"}',
        "[ERROR] lines in last night's log came from the cron job, not from the model: no rate limit was hit.",
        "2025-03-07 15:41:02 | INFO | the retry after the rate limit succeeded",
        "异常检测：本周的超时告警比上周少了 40%，没有需要处理的问题。",
        "Candidate was blocked due to SAFETY is Gemini's way of saying the answer was withheld; rephrase the prompt.",
        "The model is currently loading on Hugging Face the first time you call it; later calls are fast.",
        "`actively refused it` in the Windows error means nothing listens on the port: start Ollama first.",
        "Model returned empty response errors in Cline mean the provider sent no text; switch models and retry.",
        "Tokens per minute limit exceeded is Cerebras' TPM cap; we stay under it by batching.",
    ],
)
def test_answers_about_the_fourth_batch_s_wordings_are_left_alone(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply",
    [
        "检测异常：超时 3 次，已自动重试并完成。",
        "调用异常：本周统计 12 次，全部为第三方物流接口 503，均已自动重试成功，无订单丢失。",
        "请求出错了：这个提示在我们官网表单里出现，是因为提交时网络断开。已加入自动重试，用户现在可以正常提交。",
    ],
)
def test_a_chinese_report_that_starts_with_a_word_for_a_failure_is_no_error_label(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply",
    [
        "[WARN] 2024-05-02 10:00:01 cache error: redis timed out after 200ms\n\nTriage summary: the cache "
        "timeouts started at 09:58 when the redis replica failed over.",
        "Log excerpt: [ERROR] 2024-06-18 12:00:03 smtp error: connection refused by mail.acme.local:25\n"
        "Explanation: the mail relay was restarted for patching at 12:00.",
        "2025-02-02 21:03:11.005 | ERROR    | app.scheduler:run:51 - Job error: report_daily exceeded its 300 s "
        "timeout\nThe daily report job is slow because the orders table grew.",
    ],
)
def test_a_log_line_followed_by_prose_is_an_answer_about_the_log(reply):
    assert judge(reply) is None


def test_a_reply_of_log_lines_only_is_the_error():
    reply = "[ERROR] 2023-12-27 23:43:12 sse error: Connection error.\n[ERROR] 2023-12-27 23:43:13 retry 1 of 3"
    assert category_of(reply) == "network"


@pytest.mark.parametrize(
    "reply",
    [
        '{"code": 404, "message": "Order 88123 not found in the ERP", "order_id": 88123}',
        '{"status": 503, "url": "https://shop.example.com/health", "latency_ms": 1203, "healthy": false}',
        '{"statusCode": 429, "endpoint": "GET /v1/products", "note": "partner API throttles above 10 rps"}',
        '{"job": "nightly_backup", "error": "none", "status": "ok", "size_gb": 12.4}',
        '{"tests": 150, "error": "N/A", "passed": 150, "coverage": 0.91}',
        '{"error_code": null, "error_msg": null, "orders": 17}',
    ],
)
def test_a_node_s_json_record_with_a_code_a_status_or_an_empty_error_is_no_error_body(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply",
    [
        "Calculation error: the Q3 total should be 1,429,000 not 1,249,000 (digits swapped in cell C14).",
        "Pricing error: the headphones were listed at $429 instead of $249 for two hours.",
        "Import failure: 3 of 1,200 rows skipped because the date was empty (rows 44, 529, 1003).",
        "Rounding error: the tax line showed 19.429 instead of 19.43 on invoices; fixed in release 2.8.",
        "Spelling error: recieve appears 4 times in the 503-page manual; fixed in all places.",
        "Margin of error: ±3 points (n = 502, 95% confidence).",
        "服务异常：如遇问题请拨打客服热线 400-820-8820（工作日 9:00–18:00），我们会在 24 小时内回复。",
    ],
)
def test_three_digits_inside_a_figure_are_no_status_code(reply):
    assert judge(reply) is None


def test_a_checklist_with_crosses_is_no_error():
    assert judge("✘ 2 tests failed: test_checkout_total and test_refund_rounding. ✔ 148 passed.") is None


# --- the fifth batch of public replies (folds-5): provider wordings ----------------------------------------


@pytest.mark.parametrize(
    "reply, category",
    [
        ("运行失败：Anthropic stream ended before message_stop", "incomplete"),
        ("✕ [API Error: Model stream ended with an invalid chunk or missing finish reason.]", "incomplete"),
        (
            "openai.BadRequestError: Error code: 400 - {'error': {'message': 'input contains sensitive words: [test] "
            "(request id: 20240523152007160608893pVIxONYS)', 'type': 'new_api_error', 'param': '', 'code': "
            "'sensitive_words_detected'}}",
            "content_filter",
        ),
        (
            "Failed to call LLM with tools: litellm.RateLimitError: RateLimitError: CerebrasException - We're "
            "experiencing high traffic right now! Please try again soon.",
            "overloaded",
        ),
        (
            '{ "error": { "code": 503, "message": "No capacity available for model claude-opus-4-5-thinking on the '
            'server", "status": "UNAVAILABLE" } }',
            "overloaded",
        ),
        ("Error 503, UNAVAILABLE, 'Deadline expired before operation could complete.'", "timeout"),
        (
            "{'error': {'message': 'Organization has been restricted. Please reach out to support if you believe "
            "this was in error.', 'type': 'invalid_request_error', 'code': 'organization_restricted'}}",
            "auth",
        ),
        ("调用失败：[1214][top_p参数非法。请检查文档。]", "other"),
        ("erniebot.errors.RequestLimitError: 并发超限", "rate_limit"),
        (
            'API Error: Status Code 400, {"code":20015,"message":"length of prompt_tokens (68957) must be less than '
            'max_seq_len (65536).","data":null}',
            "context_length",
        ),
        (
            "openai.APIStatusError: The requested model (DeepSeek-R1-Distill-Llama-70B) is not available",
            "model_not_found",
        ),
    ],
)
def test_replies_of_the_fifth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Sensitive words in the prompt trigger new-api's filter; the list is configurable in the admin panel.",
        "Deadline expired is how gRPC says the call ran past its deadline; raise the timeout in the client.",
        "The one_api_error type in a relay's body names the relay, not the upstream provider.",
    ],
)
def test_answers_about_the_fifth_batch_s_wordings_are_left_alone(reply):
    assert judge(reply) is None


# --- the sixth batch of public replies (folds-6): explanations after a label, provider wordings -------------


@pytest.mark.parametrize(
    "reply",
    [
        'Error: "The service is receiving too many requests from you" in the OpenAI node does not always mean you '
        "sent too many requests: OpenAI also uses 429 for an empty prepaid balance.",
        "错误：AionUi 把智谱返回的 429「余额不足或无可用资源包」当成了限速。这不是限流而是套餐/余额问题。",
        "错误：channel:response_time_exceeded 在 TokenDog 的业务错误码表里表示上游响应超时，处理方式是重试。",
        "traceback 里的 KeyError: 'result' 只是表象：千帆返回的是错误体，真正的错误信息是 error_msg 里的 "
        "“Open api daily request limit reached”。",
    ],
)
def test_a_label_whose_message_explains_what_an_error_means_is_an_answer(reply):
    assert judge(reply) is None


def test_a_last_line_that_explains_what_an_error_means_is_no_error_block():
    reply = (
        "Rate limits vs. balance on api.z.ai:\n\n1. Concurrency or frequency 429s clear if you slow down.\n"
        "2. A 429 that says the balance is exhausted will not clear by waiting; recharge first.\n\n"
        "Error: do not treat every 429 as transient — the last case needs a human."
    )
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "Error code: 503 - {'error': {'message': 'No available providers (cch_session_id: sess_XXXXXXXX)', "
            "'type': 'no_available_providers'}}",
            "model_not_found",
        ),
        ("{'error_code': 17, 'error_msg': 'Open api daily request limit reached'}", "rate_limit"),
        (
            "com.google.api.gax.rpc.ResourceExhaustedException: io.grpc.StatusRuntimeException: RESOURCE_EXHAUSTED: "
            "Unable to submit request because the service is temporarily out of capacity. Try again later.",
            "overloaded",
        ),
    ],
)
def test_replies_of_the_sixth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("LLM call failed: Concurrency limit reached for requests", "rate_limit"),
        ("LLM call failed: 500 The server had an error while processing your request", "server_error"),
        ("请求过多，请稍后重试。", "rate_limit"),
    ],
)
def test_an_llm_call_that_failed_opens_an_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Run failed: 2 tests timed out on the Windows runner; I re-ran the job and it passed.",
        "Tests failed: 3 of 120 timed out after the rate limiter change, fixed in PR 77.",
    ],
)
def test_a_ci_report_that_opens_with_failed_is_no_error(reply):
    assert judge(reply) is None


# --- the folds' category mistakes after the labels were checked against tests/data/corpus/LABELS.md ---------


@pytest.mark.parametrize(
    "reply, category",
    [
        # a retry hint at the end of a JSON body longer than the opening's reach
        (
            'dev.langchain4j.exception.RateLimitException: {\n  "error": {\n    "code": 429,\n    "message": "You '
            "exceeded your current quota, please check your plan and billing details. For more information on this "
            "error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head "
            "to: https://ai.dev/usage?tab=rate-limit. \\n* Quota exceeded for metric: generativelanguage.googleapis."
            'com/generate_content_free_tier_requests, limit: 20, model: gemini-2.5-flash-lite\\nPlease retry in 45.79s.",',
            "rate_limit",
        ),
        ("Error: the provider rejected the gateway's credentials", "auth"),
        ("401 Invalid model key or Incorrect local model configuration.", "auth"),
        (
            "OLC-AUTH-FAILED: OpenRouter server error (401)\nOpenRouter returned HTTP 401 while generating a response "
            'with model "tencent/hy3". Check its credentials, API key, or account access.',
            "auth",
        ),
        (
            "An unexpected error occurred: Server returned 401 — the LLM endpoint may be temporarily unavailable.",
            "auth",
        ),
        ("max_tokens参数非法。请检查文档。", "other"),
        (
            "Error: RESOURCE_EXHAUSTED: Quota exceeded for aiplatform.googleapis.com/embed_content_input_tokens_"
            "per_minute_per_base_model with base model: gemini-embedding.",
            "rate_limit",
        ),
        (
            '"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": '
            '"RESOURCE_EXHAUSTED", "details": [{"reason": "INSUFFICIENT_G1_CREDITS_BALANCE"}]}',
            "quota",
        ),
        (
            "Request processing failed: org.springframework.ai.retry.NonTransientAiException: HTTP 404 - 404 page "
            "not found",
            "other",
        ),
        (
            "Error code: 403 - {'code': 'The caller does not have permission to execute the specified operation', "
            "'error': 'Content violates usage guidelines. Team: [REDACTED], Model: grok-4-0709'}",
            "content_filter",
        ),
        ("API Error: Connection closed mid-response. The response above may be incomplete.", "incomplete"),
        ('{"error":{"message":"Upstream request failed","type":"upstream_error"}}', "server_error"),
        (
            '{"error":{"code":"resource_exhausted","message":"Error","details":[{"debug":{"details":{"title":"High '
            'Load","detail":"We\'re experiencing high demand for Claude 3.7 Sonnet right now."}}}]}}',
            "overloaded",
        ),
    ],
)
def test_the_cause_in_the_body_names_the_category_over_the_status_or_a_generic_word(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "术语解释 —— Error code: 401 - {'error': {'message': 'Invalid Authentication', 'type': "
        "'invalid_authentication_error'}}：这是鉴权失败，通常是密钥错了或过期了。",
        "术语解释 —— 研究过程中发生错误: Error code: 429 - {'error': {'message': '当前分组上游负载已饱和，请稍后再试'}}："
        "这是上游繁忙的提示。",
        "Glossary: Error code: 429 - {'error': {'message': 'Rate limit reached'}} — the provider throttled the caller.",
        "名词解释：insufficient_quota —— 账户额度用完。",
    ],
)
def test_a_reply_that_opens_with_a_glossary_heading_is_an_answer_about_errors(reply):
    assert judge(reply) is None
    assert about_errors(reply, head_chars=500)


def test_an_error_opening_s_json_body_runs_to_its_closing_brace():
    reply = "openai.RateLimitError: " + '{"error": {"message": "' + "x" * 600 + ' retry in 2s", "code": 429}}'
    assert json_body_end(reply, len("openai.RateLimitError: "), limit=len(reply)) == len(reply)
    assert json_body_end(reply, 0, limit=100) is None  # still open before the reply's end: no claim
    assert json_body_end("Error: no body here", 6, limit=19) is None
    assert json_body_end('Error: {"a": "}"} and then prose', 6, limit=32) == len('Error: {"a": "}"}')


# --- the seventh batch of public replies (folds-7): labels that describe, provider wordings ---------------


@pytest.mark.parametrize(
    "reply",
    [
        "Server error: the 500 with code model_load_error is lemonade's wrapper around a llama-server process that "
        "exited during startup. Run `lemonade-server serve --log-level debug` to see the stderr.",
        "Billing error: the annual Coding Plan was charged and shows as VALID, but requests are still refused with "
        "code 1113. Attach the request id to the ticket.",
        "429 Too Many Requests: the client is being rate limited. Distinguish it from 503 Service Unavailable, "
        "which is about the server's own capacity rather than the client's request rate.",
        "Checked the proxy logs and the retries.\n\nException: the gateway should return 503 with a readiness hint "
        "instead of the raw Envoy text.",
    ],
)
def test_a_label_whose_message_describes_instead_of_reporting_is_an_answer(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("HTTP 400 Bad Request: the request exceeds the available context size, try increasing it", "context_length"),
        ("ModelNotReadyException: the model is not ready to serve requests.", "overloaded"),
        ("<400> InternalError.Algo.DataInspectionFailed: the input was refused.", "content_filter"),
        ("Error: The model is overloaded. Please try again later.", "overloaded"),
    ],
)
def test_a_provider_s_message_after_a_label_or_a_class_name_is_still_an_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "AI assistant: Error: Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "other",
        ),
        (
            "Error: [provider.api_error] 400 The request was rejected because it was considered high\n risk",
            "content_filter",
        ),
        ("404 Client Error: Not Found for url: https://ollama.ai/api/models", "other"),
        ("Error: upstream stream truncated (no completion event; round 3)", "incomplete"),
        ("Error: Model is not exists.", "model_not_found"),
        ("429 The engine is currently overloaded", "overloaded"),
        (
            '请求错误：API Error: Status Code 429, { "error": { "code": 429, "message": "Quota exceeded for quota '
            "metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute'\" } }",
            "rate_limit",
        ),
    ],
)
def test_replies_of_the_seventh_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "额度说明：qwen3.7-max 的 fast 选项按会话计算分钟级 token 配额，7 轮左右就会触发 `Allocated quota exceeded`。",
        "账单说明：您支付的 20.00 美元购买的是 Token Plan 套餐，余额不足时请求会返回 insufficient balance (1008)。",
        "Explanation: \"429 Too Many Requests\" with error code 1015 is Cloudflare's rate limit, not the model's.",
        "限流说明：rate=10r/s 且未设 burst 时，10ms 内的第二个请求会直接返回 503；已改为 burst=20 nodelay。",
    ],
)
def test_a_reply_that_opens_with_an_explanation_heading_is_an_answer_about_errors(reply):
    assert judge(reply) is None
    assert about_errors(reply, head_chars=500)


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Error: the token is expired", "auth"),
        ("Error: the key is revoked", "auth"),
        (
            "openai.OpenAIError: Missing credentials. Please pass an `apiKey`, or set the `OPENAI_API_KEY` variable.",
            "auth",
        ),
        ("Error: server error (401)", "auth"),
        ("Error: the balance is insufficient", "quota"),
        ("Error: the response was cut off", "incomplete"),
        ("Error: the socket was closed by the remote host", "network"),
        ("APIError: the server is overloaded", "overloaded"),
        ("请求超时，请稍后重试", "timeout"),
        ("错误：上游请求失败，请稍后重试", "server_error"),
        ("系统检测到输入或生成内容可能包含不安全或敏感内容，请您避免输入易产生敏感内容的提示语。", "content_filter"),
    ],
)
def test_a_short_provider_message_after_a_label_is_an_error_however_it_is_worded(reply, category):
    assert category_of(reply) == category


def test_an_agent_s_own_retry_is_no_provider_retry_hint():
    reply = (
        'API call failed: HTTP 402 {"error":{"message":"Insufficient credits. Add more using '
        'https://openrouter.ai/settings/credits","code":402}} - will retry in 30s'
    )
    assert category_of(reply) == "quota"


@pytest.mark.parametrize(
    "reply, category",
    [
        ("deepseek/deepseek-v4-flash: stream ended before terminal chunk", "incomplete"),
        ("[undefined]: Insufficient Balance", "quota"),
        ("gpt-4o: Rate limit exceeded, please try again later.", "rate_limit"),
    ],
)
def test_a_provider_sentence_after_a_model_s_or_a_tool_s_name_is_an_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Summary: rate limit exceeded twice today, both retried fine.",
        "Result: quota exceeded for 3 of 40 users this month; all were on the free plan.",
        "Changelog: overloaded_error from Anthropic is now retried with backoff.",
        "结论：请求超时是因为代理没有配置好，已修复。",
    ],
)
def test_a_report_after_a_one_word_label_is_no_provider_sentence(reply):
    assert judge(reply) is None


# --- the eighth batch of public replies (folds-8): a status with a JSON body, closing remarks, wordings ------


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            'API Request Failed\n\n400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too '
            'long: 210883 tokens > 199999 maximum"}}',
            "context_length",
        ),
        (
            'Failed to connect to API: 400 Bad Request {"error":{"message":"prompt token count of 72458 exceeds the '
            'limit of 72000","code":"model_max_prompt_tokens_exceeded"}}',
            "context_length",
        ),
        (
            "Error: Failed to call chat-completions api\n\nCaused by:\n    `max_tokens` must be greater than "
            "`thinking.budget_tokens`. Please consult our documentation.",
            "other",
        ),
        (
            'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Output blocked by '
            'content\n      filtering policy"}}',
            "content_filter",
        ),
        (
            '安全检查执行失败：output content security inspection failed by Modelscope. - {"code":555,"message":"output '
            'content security inspection failed by Modelscope."}',
            "content_filter",
        ),
        ("403 账户余额过低不足以支持本次请求，请前往充值。", "quota"),
        (
            "Error: Model loading was stopped due to insufficient system resources. Continuing to load it would "
            "likely overload your system.",
            "server_error",
        ),
        (
            "调用 moonshot-v1-8k 失败：code: 400 - {'error': {'message': 'model max length exceeded, max length:8192'}}",
            "context_length",
        ),
        ("翻译中断：该模型目前因处理其他请求而过载。", "overloaded"),
        (
            "Error: The operation was cancelled because it exceeded the configured timeout of 0:01:40.",
            "timeout",
        ),
        ("[No response. Make sure the last executed node outputs the content to display here]", "incomplete"),
        (
            "Error code: 400 - [{'error': {'code': 400, 'message': 'Missing Authorization header.', 'status': "
            "'INVALID_ARGUMENT'}}]",
            "auth",
        ),
        ('Error: {"code":503,"message":"Translation failed, API returns an empty result."}', "incomplete"),
    ],
)
def test_replies_of_the_eighth_batch_s_shapes_and_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Your organization's limit is 80,000 input tokens per minute, so two back-to-back calls trip it.\n\n"
        "HTTP 429: explained, no bug in Cline.",
        "Checked the logs for the whole day.\n\nHTTP 500: one occurrence, retried fine",
        "The key was revoked when the account was deleted; regenerate it.\n\nHTTP 401: key problem, not a robin problem.",
        "报错说明：日志里的 Error code: 503 来自上游的 OpenAI 兼容接口，AstrBot 只是把 InternalServerError 原样转给了用户。",
    ],
)
def test_an_answer_s_closing_remark_on_an_error_is_no_error_block(reply):
    assert judge(reply) is None


def test_a_json_record_whose_error_text_says_ok_is_a_plain_output():
    assert is_plain_json_output('{"errcode": 0, "errmsg": "ok", "msgid": 2845132, "note": "客服消息已送达"}')
    assert not is_plain_json_output('{"errcode": 40001, "errmsg": "invalid credential, access_token is invalid"}')


# --- the ninth batch of public replies (folds-9): memory, unreadable bodies, per-minute limits, wordings ----------


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 610.00 MiB (GPU 0; 15.91 GiB total capacity; 12.95 GiB "
            "already allocated)",
            "server_error",
        ),
        ("Error: Model size exceeds available RAM. Consider selecting a smaller model.", "server_error"),
        ("Error: Expecting value: line 1 column 1 (char 0)", "incomplete"),
        (
            'API Request Failed:\n\nError parsing item: {"id":"chatcmpl-6xR7","object":"chat.completion.chunk","model":'
            '"gpt-3.5-.\nError Details: SyntaxError: JSON Parse error: Unterminated string',
            "incomplete",
        ),
        (
            '{"success":false,"error":[{"code":2016,"message":"Prompt blocked due to security configurations"}]}',
            "content_filter",
        ),
        ("❌ 请求失败（404）：Not found the model kimi-for-coding or Permission denied", "model_not_found"),
        ("调用失败（错误码 1026）：输入内容涉敏，请调整输入内容", "content_filter"),
        ("MiniMax 接口返回 1008：余额不足，请检查您的账户余额", "quota"),
        ("接口返回 200：任务完成，共处理 12 条记录。", None),
        (
            "ERROR: Embedding func: Error in decorated function for task 1387: Error code: 403 - RPM limit exceeded. "
            "Please complete identity verification to lift the restriction.",
            "rate_limit",
        ),
    ],
)
def test_replies_of_the_ninth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "为什么改了还报错：本地模式下 n_ctx、模型上限和 max_tokens 要一起改，报错里的 1048 说明生效的上下文窗口仍是旧值。",
        "Why it still fails: Error code: 429 comes from the per-minute limit of the free tier, not from the key.",
        "为啥一直报错：上游返回 429，是因为我们共用一个 Key，高峰期超过了每分钟的请求数。",
        "调用失败（共 2 次）：均为网络抖动，已自动重试并成功。",
        "Tip: not enough memory for 70B models on a 16 GB laptop — use the 8B variant instead.",
        "curl error codes cheat sheet: 6 = couldn't resolve host, 7 = failed to connect, 28 = timeout.",
    ],
)
def test_an_answer_that_opens_with_a_question_heading_or_borrows_a_new_phrase_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ('Why: Error code: 503 - {"error": {"message": "The server is overloaded"}}', "overloaded"),
        ("How: 429 Too Many Requests", "rate_limit"),
        ('Why Bot: Error code: 500 - {"error": {"message": "Internal server error"}}', "server_error"),
        ('How-To Assistant: Error code: 429 - {"error": {"message": "Rate limit reached for requests"}}', "rate_limit"),
        ("错误代码 1008：账户余额不足", "quota"),
    ],
)
def test_a_name_or_a_bare_label_that_starts_with_a_question_word_is_no_question_heading(reply, category):
    assert category_of(reply) == category


def test_a_label_with_an_amount_is_a_record_not_a_provider_s_detail():
    assert judge("Quota: $180,000. Closed: $151,200. Attainment: 84%. Days left in quarter: 19.") is None
    assert category_of("Insufficient balance: $0.00. Please recharge your account.") == "quota"


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "[LLM] Access denied: 预扣费额度失败, 用户剩余额度: ＄2.533620, 需要预扣费额度: ＄2.627750 (request id: 20260511)",
            "quota",
        ),
        (
            '{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"guardrails triggered for user '
            'input"}],"type":"illegal_argument_exception","reason":"guardrails triggered for user input"},"status":400}',
            "content_filter",
        ),
    ],
)
def test_replies_of_the_tenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


# --- the eleventh batch of public replies (folds-11): per-minute limits, statuses in bodies, leads, wordings -----


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            'API Error: 403 event:error data:{"code":"AccessDenied","message":"Rate limit exceeded. Please wait and '
            'try again, or upgrade your API plan."}',
            "rate_limit",
        ),
        ('{"error":{"message":"Zhipu API error: HTTP 401 - \\"\\"","type":"api_error","code":null}}', "auth"),
        ('{"error": {"message": "Not authenticated", "type": "invalid_request_error"}}', "auth"),
        ('{"error":{"message":"{\\"code\\":7000,\\"msg\\":\\"No permission to access this bot.\\"}"}}', "auth"),
        (
            "{'error': {'message': 'You have been rate limited. Your rate limit is 600 queries per minute. Please "
            "navigate to https://example.ai/settings/billing to upgrade.', 'type': 'credit_limit'}}",
            "rate_limit",
        ),
        (
            "Error code: 413 - {'error': {'message': 'Request too large for model llama-3.3-70b in organization org_1 "
            "on tokens per minute (TPM): Limit 12000, Requested 20111. Need more tokens? Upgrade at "
            "https://console.groq.com/settings/billing', 'code': 'rate_limit_exceeded'}}",
            "context_length",
        ),
        ("fastapi.exceptions.HTTPException: 400: Model 'mistral-large-2411' is not supported", "model_not_found"),
        (
            'DashScope error: {"code": "AccessDenied.Unpurchased", "message": "Access to model denied. Please make '
            'sure you are eligible for using the model."}',
            "model_not_found",
        ),
        (
            "Error: 网络请求失败: Client error '413 Request Entity Too Large' for url 'https://gw.example/api'",
            "context_length",
        ),
        ("503 server is overloaded.", "overloaded"),
        ("系统繁忙，请稍后再试", "overloaded"),
        ("API request failed with status 402", "quota"),
        ("Groq API request failed with status 503: Service Unavailable", "server_error"),
        ("Error: The model has crashed without additional information. (Exit code: 1)", "server_error"),
        (
            "Error 400, Message: The input token count exceeds the maximum number of tokens allowed 1048576.",
            "context_length",
        ),
    ],
)
def test_replies_of_the_eleventh_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("抱歉，您的请求包含不安全内容，已被系统拦截。", "content_filter"),
        ("很抱歉，请求超时，请稍后再试。", "timeout"),
        ("对不起，余额不足，请充值后再试。", "quota"),
    ],
)
def test_a_provider_sentence_after_a_chinese_apology_is_an_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "抱歉，余额不足的话可以先充值。",
        "The request failed with a 500 yesterday; we retried and it passed.",
        "`[Agent Request] Error: Error code: 400 - {'message': '400 Client Error'}` 是模型服务直接返回的 400，框架只是原样抛出。",
        "`Error: 429 Too Many Requests`: you hit the per-minute limit; wait a minute and retry.",
    ],
)
def test_an_apology_before_prose_or_a_quoted_error_that_opens_an_answer_is_no_error(reply):
    assert judge(reply) is None


# --- the twelfth batch of public replies (folds-12) and a breaking pass: subjects before Chinese phrases, bodies
# whose cause beats their wrapper, a bare 404 is a wrong path, answers that open with a heading or report a change --


@pytest.mark.parametrize(
    "reply, category",
    [
        ("引擎内部错误", "server_error"),
        ("服务忙,请稍后再试", "overloaded"),
        ("服务器过载，请稍后重试", "overloaded"),
        ("抱歉，系统超时，请稍后重试。", "timeout"),
        ("The chat session is larger than the context window!", "context_length"),
        ("Error in AI inline completion: Error code: 404 - {'detail': 'Not Found'}", "other"),
        (
            "[API Error: models/gemini-3.1-pro is not found for API version v1beta, or is not supported for generateContent.]",
            "model_not_found",
        ),
        ('402: {"type":"server_error","message":"Upstream request failed: Insufficient account funds"}', "quota"),
        ("AI21 error: 50 per 1 minute", "rate_limit"),
        ("High concurrency usage of this API, please reduce concurrency or contact customer service", "rate_limit"),
        ("Predictions limit exceeded", "quota"),
        ("APIException [Error]: [请求step失败]: token is missing", "auth"),
        (
            "❌ Error code: 400 - {'error': {'message': 'registry.ollama.ai/library/deepseek-r1:latest does not support tools', 'type': 'api_error', 'param': None, 'code': None}}",
            "other",
        ),
        (
            'send request failed: Post "https://rerank.example/v1/rerank": dial tcp 198.18.0.52:443: i/o timeout',
            "network",
        ),
        (
            '{"error":{"code":"tokens_too_long","message":"Prompt tokens too long","type":"invalid_request_error"},"id":"as-k3h7xq2m9p"}',
            "context_length",
        ),
        (
            "The request targeted an endpoint that is currently closed or temporarily unavailable. Request ID: 021738944405180a9f3e",
            "model_not_found",
        ),
        (
            "Error talking to OpenAI: Error code: 429 - [{'error': {'code': 429, 'message': 'You exceeded your current quota, please check your plan and billing details.', 'status': 'RESOURCE_EXHAUSTED', 'details': [{'@type': 'type.googleapis.com/google.rpc.RetryInfo', 'retryDelay': '28s'}]}}]",
            "rate_limit",
        ),
        ("TypeError: terminated\n    at Fetch.onAborted (node:internal/deps/undici/undici:11736:53)", "network"),
        (
            "Error: Perplexity API error during object generation: Failed after 3 attempts. Last error: Cannot connect to API: self-signed certificate in certificate chain",
            "network",
        ),
        (
            "非常抱歉，根据相关法律法规，我们无法提供关于以下内容的答案，包括但不限于：\n(1) 涉及国家安全的信息；\n(2) 涉及政治与宗教类的信息。",
            "content_filter",
        ),
        ("Error: The operation was aborted", "incomplete"),
        ("Error: The operation was aborted due to timeout", "timeout"),
    ],
)
def test_replies_of_the_twelfth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Please upgrade to Pro to continue.", "quota"),
        ("Sorry, I encountered an unexpected error.", "other"),
        (
            "The request failed because you do not have access to the requested resource. Request id: 0217399555030747f2940",
            "auth",
        ),
        ("Unusable response produced by ChatGPT, maybe its unavailable.", "incomplete"),
        ("no healthy upstream", "server_error"),
        ("Upstream idle timeout exceeded", "timeout"),
        ("TypeError: terminated", "network"),
        ("5-hour limit reached ∙ resets 12pm", "rate_limit"),
        ("Failed: Invalid Authentication", "auth"),
        ("出错了，稍后重试吧", "other"),
        ("好像出错了，请稍后再试。", "other"),
        ("status code 400: parameter check failed, max_completion_tokens range is [2, 4096]", "context_length"),
        ("400 field MaxTokens invalid, should be in [1, 384000]", "context_length"),
        ("⎿  API Error: Request was aborted.", "incomplete"),
        ("AbortError: The user aborted a request.", "incomplete"),
        ("Model disabled.", "model_not_found"),
    ],
)
def test_short_failed_replies_a_breaking_pass_found_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "过载保护已开启。",
        "负载测试通过。",
        "负载均衡已切换到最少连接算法。",
        "繁忙度指标已加入看板。",
        "负载均衡器 IP：10.0.3.17",
        "服务器繁忙提示已去掉。",
        "Rate limit lifted.",
        "Quota reset at midnight UTC.",
        "Timeout extended to 120 s.",
        "限流已放开。",
        "限流阈值已下调到每分钟 200 次。",
        "余额不足提醒已关闭。",
        "鉴权失败问题已定位。",
        "超时设置为 30 秒。",
        "服务不可用页面已重新设计。",
        "Translation: 服务器繁忙，请稍后再试。",
        "以下是中文翻译：\n\n服务器繁忙，请稍后再试。",
        "Diagnosis: insufficient quota. Your OpenAI org has no billing method, so every call returns 429 insufficient_quota; add a card and wait ~10 minutes.",
        "诊断：鉴权失败，API Key 多复制了一个空格。",
        "排查结果：鉴权失败，原因是 Key 已在周一轮换。",
        "Note: 429 Too Many Requests responses include a Retry-After header; honour it.",
        "注意：429 Too Many Requests 响应会带 Retry-After 头，请按它等待。",
        "Example: Error code: 429 - {'error': {'message': 'Rate limit reached for gpt-4o'}} is what the SDK raises.",
        "示例：Error code: 429 - {'error': {'message': 'Rate limit reached'}} 就是 SDK 抛出的异常格式。",
        "401 Unauthorized — the API key is missing or wrong. In our setup it was the staging key in prod.",
        "503 Service Unavailable — the upstream was down for 4 minutes during the deploy; nothing to fix on our side.",
        '{"error": "none", "rows_written": 1200}',
        "Model gpt-4o is not supported in offline mode; switch `OFFLINE=1` off to use it.",
        "Model `text-davinci-003` is not supported anymore after OpenAI's January 2024 deprecation; I migrated the prompt to `gpt-3.5-turbo-instruct`.",
        "Heads-up: Error code: 401 will start appearing after Friday's key rotation for anyone still on the old key.",
        "Authentication failed alerts muted until Monday.",
        "Insufficient balance topped up ($50).",
        "Service unavailable page redesigned.",
        "Context length limit documented in the README.",
        "Model not found bug closed as duplicate of #412.",
        "限流说明：rate=10r/s 且未设 burst 时，10ms 内的第二个请求会直接返回 503；已改为 burst=20 nodelay。",
        "Cause: FetchError fixed by pinning node-fetch.",
    ],
)
def test_answers_a_breaking_pass_found_are_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize("reply", ["Timeout set to 5 min.", "524 = origin timeout", "超时默认 1 秒。"])
def test_short_ordinary_answers_that_state_a_setting_are_no_error(reply):
    assert judge(reply) is None


# --- a second breaking pass, on the rules above: status lines that open with a subject, a name or a count, phrases
# of the new built-ins followed by prose, and failed replies whose cause the new rules must still name ------------


@pytest.mark.parametrize(
    "reply",
    [
        "模型超时重试 3 次后成功。",
        "服务器过载告警昨晚触发了两次。",
        "系统繁忙时段为每天 20:00–22:00。",
        "上游限流导致昨天有 12 个任务延迟。",
        "模型上下文长度 128k。",
        "接口鉴权失败 0 次。",
        "平台额度还剩 40%。",
        "引擎内部错误日志已归档到 S3。",
        "后端内部错误 0 起。",
        "网关请求超时 3 次（均在 02:00 备份期间）。",
        "对不起，上游超时让第 4 批数据晚到了 20 分钟。",
        "Sorry, overloaded queue metrics aren't exported to Grafana yet.",
        "Sorry, internal server error details aren't exposed to end users by design.",
        "Sorry, quota numbers for October are not available yet.",
        "Sorry, rate limit details aren't in the docs I have access to.",
        "Sorry, server error logs from last week have rotated out.",
        "Sorry, timeout settings are per-workspace, not per-user.",
        "Sorry, context length limits differ per model; here is the table: gpt-4o 128k, o3 200k.",
        "Sorry, authentication failed for my test account too, so I can't reproduce your login issue from here.",
        "Token is missing from the example request in the README; add the Authorization header.",
        "The operation was aborted due to timeout in 2 of 400 runs; both were retried.",
        "No healthy upstream alerts this week.",
        "Prompt tokens too long warnings dropped to zero after the summariser change.",
        "Upgrade to Pro to continue using the team features after the trial ends on the 14th.",
        "Model is disabled in the router config until the eval finishes.",
        "models/gemini-1.5-pro is not found in the v1 API, so the script now calls v1beta.",
        "The chat session is larger than the context window in aider when you add the whole repo; use /drop.",
        "Invalid authentication attempts this week: 0.",
        "5-hour limit reached twice this week, both times after 3pm.",
        "当前额度充足。",
        "引擎过载 0 次。",
        "目前请求超时 0 次。",
        "I encountered an unexpected error in the test suite: test_login fails on Python 3.13 because datetime.utcnow() is deprecated. Switching to datetime.now(UTC) fixes it.",
        "Sorry, I encountered an unexpected error while parsing your CSV at row 214 — the date column has 31/02/2024. Fix that row and I'll rerun the import.",
        "等待模型回复超时阈值 120 秒。",
        "Model disabled in staging: gpt-4o-mini (replaced by gpt-4.1-mini).",
        "Insufficient account funds: 0 occurrences this month.",
        "Cannot connect to API: 0 occurrences after the proxy fix.",
        "No healthy upstream errors stopped after we added the second replica.",
        "模型请求过多告警 0 条。",
        "平台额度预警线 20%。",
        "后端服务不可用 0 分钟。",
        "目前限流 0 次。",
        "接口超时 2 次。",
        "Sorry, insufficient balance notices go to the account owner only.",
        "Sorry, content filter decisions can't be appealed through the API.",
        "Sorry, insufficient quota warnings went to the old billing email. I've updated the contact.",
        "Predictions limit exceeded emails now go to billing@.",
        "模型过载期间的请求全部排队处理，无丢失。",
    ],
)
def test_answers_a_second_breaking_pass_found_are_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("404 No allowed providers are available for the selected model.", "model_not_found"),
        (
            'OpenRouter 检查失败: HTTP 404: {"error":{"message":"No allowed providers are available for the selected model.","code":404,"metadata":{"available_providers":["z-ai"],"requested_providers":["anthropic"]}}}',
            "model_not_found",
        ),
        (
            'litellm.exceptions.NotFoundError: litellm.NotFoundError: NotFoundError: OpenrouterException - {"error":{"message":"No allowed providers are available for the selected model.","code":404,"metadata":{"available_providers":["google-ai-studio","liquid","arcee-ai","stepfun","open-inference","venice","nvidia"],"requested_providers":["openai","mistral","cloudflare"]}}}',
            "model_not_found",
        ),
        (
            "Error from provider (Console): Upstream request failed: [404] No allowed providers are available for the selected model. Providers serving xiaomi/mimo-v2.5-20260422: gmicloud, deepinfra, xiaomi, parasail, streamlake, novita, but your request's provider.only preference permits only: tencent.",
            "model_not_found",
        ),
        (
            '{"error":{"message":"Error from provider: No allowed providers are available for the selected model.","code":404,"metadata":{"available_providers":["gmicloud"],"requested_providers":["siliconflow"]}}}',
            "model_not_found",
        ),
        (
            "NotFoundError: Error code: 404 - {'error': {'message': 'No allowed providers are available for the selected model.', 'code': 404, 'metadata': {'available_providers': ['deepseek', 'gmicloud', 'atlas-cloud', 'siliconflow', 'parasail', 'novita', 'together'], 'requested_providers': ['xai']}}}",
            "model_not_found",
        ),
        ("Error: 404 No allowed providers are available for the selected model.", "model_not_found"),
    ],
)
def test_failed_replies_a_second_breaking_pass_found_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "## Rate limit exceeded\n\nPlease wait 24 minutes before requesting another review.",
        "# Error\nRequest failed with status code 429",
    ],
)
def test_a_markdown_heading_does_not_hide_an_app_s_error(reply):
    assert not about_errors(reply, head_chars=500)


@pytest.mark.parametrize(
    "reply, category",
    [
        ("服务内部未知错误，请稍后重试", "server_error"),
        ("请求频率过高，请稍后重试", "rate_limit"),
        (
            "There was an error generating a response\nSomething went wrong. If this issue persists please contact us through our help center at help.openai.com.",
            "other",
        ),
        (
            "Root cause: BadRequestError: Error code: 400 - {'error': {'message': \"Invalid prompt: we've limited access to this content for safety reasons.\", 'type': 'invalid_request_error'}}",
            "content_filter",
        ),
        ("LLM response was truncated before it produced valid review JSON", "incomplete"),
        ("Unknown error occurred", "other"),
        ("Could not get a reply from API. Check your connection settings / API key and try again.", "other"),
        (
            "Endpoint error: FetchError: invalid json response body at http://127.0.0.1:5000/api/v1/generate reason: Unexpected end of JSON input",
            "incomplete",
        ),
        ("授权错误：该appId没有相关功能的授权或者业务量超过限制", "auth"),
        ("回复内容为空", "incomplete"),
        (
            "会话处理异常:You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
            "auth",
        ),
        (
            "生成失败：'number of input tokens (167594) has exceeded max_prompt_tokens (163840) limit.'",
            "context_length",
        ),
    ],
)
def test_replies_of_the_thirteenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("We're currently processing too many requests. Please try again later.", "overloaded"),
        ("[Gemini] Translation error: PROHIBITED_CONTENT: PROHIBITED_CONTENT", "content_filter"),
        ("unable to allocate CPU buffer", "server_error"),
        (
            "BadRequestError: Error code: 400 - {'error': {'message': \"input data may contain inappropiate content.\", 'type': 'invalid_request_error'}}",
            "content_filter",
        ),
        (
            "Our website is currently under maintenance.\n\nWe apologize for the inconvenience, we will be back shortly.",
            "server_error",
        ),
        (
            "Too many failed attempts to upstream providers, see https://ngrok.com/docs/ai-gateway/guides/debugging for more information.",
            "server_error",
        ),
        ("The system is currently experiencing high demand and cannot process your request.", "overloaded"),
        (
            'Continue Autocomplete Error: HTTP 500 Internal Server Error from https://gw.example/v1/chat/completions {"error":{"message":"field messages is required"}}',
            "other",
        ),
        ("403 — Key limit exceeded (total limit)", "quota"),
        (
            '请求异常：{\n  "error": {\n    "message": "Your request to GET /dashboard/billing/credit_grants must be made with a session key (that is, it can only be made from the browser)."\n  }\n}',
            "auth",
        ),
        ("获取文章摘要失败，请稍后再试。", "other"),
        ("远程服务器返回了错误的 HTTP 响应码：400。", "other"),
        (
            "Error communicating with OpenAI: ('Connection aborted.', ConnectionResetError(10054, 'An existing connection was forcibly closed by the remote host'))",
            "network",
        ),
    ],
)
def test_replies_of_the_fourteenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "如果获取失败，请稍后再试，或者检查网络。",
        "The service is under maintenance every Sunday 02:00–03:00 UTC; plan batch jobs around it.",
    ],
)
def test_advice_in_the_fourteenth_batch_s_words_is_no_error(reply):
    assert judge(reply) is None


# --- a third breaking pass, on the built-ins of batches 13 and 14: their phrases in reports, code reviews and
# translations, and short or wrapped failed replies ------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "The service is experiencing high latency in eu-west-1; I've paged the on-call.",
        "The server is experiencing high memory usage after the deploy; rolling back.",
        "The system is currently experiencing high traffic from the launch, but p95 latency is still under 300 ms.",
        "shellcheck produced no output.",
        "Lint produced no output.",
        "Stderr produced no output.",
        "没有管理员授权。",
        "没有写入授权",
        "The API is currently under maintenance, so I scheduled the export for 03:00.",
        "The site is currently under maintenance until 14:00 UTC, per status.example.com; the sync will resume after that.",
        "Our API is currently under maintenance window 02:00–04:00 UTC on Sundays; I've added it to the runbook.",
        "Field title is required in the schema but optional in the TypeScript type.",
        "field user_id is required on PATCH but not on PUT — worth aligning.",
        "zh-CN: 加载评论失败，请稍后再试",
        "提交失败，请稍后再试 → Submission failed, please try again later.",
        "获取用户列表失败，请稍后重试 —— 已改为「加载成员列表失败，请稍后重试」。",
        "获取验证码失败，请稍后再试 —— 这是短信服务商限流时前端显示的提示文案。",
        "Too many failed attempts to upstream providers were logged on Tuesday.",
        "The model is currently unavailable in the EU region, so I routed the job to us-east-1 and it finished.",
        "There was an error generating a response in 3 of 200 eval samples; I excluded them from the score.",
        "返回结果为空 ✅（符合预期：该用户没有订单）",
        "NSFW content was detected in 0 of 312 images.",
        "Your queue position is 12 — about 4 minutes at the current render rate.",
        "Prohibited content: none found in the 40 uploaded images.",
        "Here are the Chinese strings:\ncomments.loadError: 加载评论失败，请稍后再试\ncomments.empty: 暂无评论",
        "远程服务器返回了错误的 HTTP 响应码：404，因为词条链接拼错了，已改正。",
    ],
)
def test_answers_a_third_breaking_pass_found_are_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Error: Premature close", "incomplete"),
        ("Gateway Timeout", "timeout"),
        ("当前分组 default 下对于模型 gpt-3.5-turbo-16k 无可用渠道", "model_not_found"),
        ('{"error":"Post \\"https://ollama.com:443/v1/chat/completions?ts=1775218167\\": unexpected EOF"}', "network"),
        ('API Error: {"error":"an error was encountered while running the model: unexpected EOF"}', "server_error"),
        (
            "You're out of extra usage · resets 4am (America/Denver)\n/upgrade or /extra-usage to finish what you’re working on.",
            "quota",
        ),
        (
            '{\n  "error": {\n    "message": "Нет доступных каналов для модели default в текущей группе gpt-4",\n    "type": "one_api_error"\n  }\n}',
            "model_not_found",
        ),
    ],
)
def test_failed_replies_a_third_breaking_pass_found_name_their_cause(reply, category):
    assert category_of(reply) == category


# --- the fifteenth batch's folds --------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Throttled: Request is throttled.", "rate_limit"),
        ("Kimi: 您的授权已过期，请重新登录", "auth"),
        (
            "请求超时: The request was canceled due to the configured HttpClient.Timeout of 10 seconds elapsing.",
            "timeout",
        ),
    ],
)
def test_a_one_word_label_that_repeats_the_message_s_own_words_still_leads_to_the_message(reply, category):
    assert category_of(reply) == category


def test_a_long_chinese_sentence_ending_in_an_error_word_and_a_comma_is_no_error_label():
    reply = (
        "机器人一直回“提问太快啦，请休息一下再问我吧”时，不重启也能判断原因：这句话对应的是接口返回了限流类错误，"
        "要么是短时间内请求太多被限流了；要么是账号额度没了（日志里会出现 exceeded your current quota），只能换账号或充值。"
    )
    assert judge(reply) is None
    assert category_of("翻译失败，插件60秒未响应") == "timeout"


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            '503 - "{\\"error\\":{\\"message\\":\\"No available channels for model gemini-2.5-flash-image in group '
            'default (request id: )\\",\\"type\\":\\"new_api_error\\"}}"',
            "model_not_found",
        ),
        (
            'API Error: 403 {"error":{"message":"该令牌无权访问模型 claude-sonnet-4-20250514","type":"new_api_error"}}',
            "model_not_found",
        ),
        ('403 {"code": "sensitive_word_detected", "type": "security_violation"}', "content_filter"),
        ('{\n  "error_code": 18,\n  "error_msg": "Open api qps request limit reached"\n}', "rate_limit"),
        (
            "ERROR:root:Model Run Async: Error in running for model_process: {'error': 'err.not_enough_balance'}",
            "quota",
        ),
        ("413 Request body too large for meta-llama-3-70b-instruct model. Max size: 8000 tokens.", "context_length"),
    ],
)
def test_a_body_s_cause_beats_its_status_in_the_fifteenth_batch_s_wordings(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("That model does not exist", "model_not_found"),
        (
            "This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use "
            "v1/completions?",
            "model_not_found",
        ),
        ("插件 60 秒未响应", "timeout"),
        ("请求被平台内容安全策略拦截（触发敏感词检测），请调整提问或上传的内容后重试。", "content_filter"),
        ("[ERROR]\n请再问我一次", "server_error"),
        ("ERROR:\n我没有收到你的消息", "timeout"),
        ("[ERROR]\n我连接不到你的网络", "network"),
        ("[ERROR]\n我现在有点累了，等会再来吧", "other"),
    ],
)
def test_failed_replies_of_the_fifteenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "That model does not exist in our catalogue, so I used gpt-4o instead and the job finished.",
        "插件 60 秒未响应时会自动重试一次，这是默认配置。",
        "QPS limit is 50 per key on the standard plan.",
        "机器人回“请再问我一次”说明上游返回了 APIError，一般等几秒再发就好。",
    ],
)
def test_answers_about_the_fifteenth_batch_s_wordings_are_no_error(reply):
    assert judge(reply) is None


# --- a fourth breaking pass --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "API Error: Claude Code is unable to respond to this request, which appears to violate our Usage Policy (https://www.anthropic.com/legal/aup). Please double press esc to edit your last message or start a new session for Claude Code to assist with a different task.",
            "content_filter",
        ),
        ("agents.exceptions.MaxTurnsExceeded: Max turns (10) exceeded", "incomplete"),
        ("Sorry, this message is too long. Please try a shorter question.", "context_length"),
        ("The message you submitted was too long", "context_length"),
        ("Response contained no choices.", "incomplete"),
        ("NetworkError when attempting to fetch resource.", "network"),
        (
            "Due to unexpected capacity constraints, Claude is unable to respond to your message. Please try again soon.",
            "overloaded",
        ),
        ("当前地区当日额度已消耗完", "quota"),
        ('{"error":"API key 无效或已停用","code":"api_key_invalid"}', "auth"),
        ('{"error":{"message":"该令牌状态不可用","type":"one_api_error"}}', "auth"),
        (
            'API Error: 400 {"type":"error","error":{"type":"prompt_limit","message":"输入内容过长，请减少 Prompt 中的 token 数量后重试"}}',
            "context_length",
        ),
        (
            "Error code: 400 - {'error': {'message': 'Incorrect model ID. Please request to view the model page or you do not have permission to use this model', 'type': 'Aihubmix_api_error'}}",
            "model_not_found",
        ),
        (
            "错误名称: AI_APICallError\n错误信息: contents is required (request id: 20251214141141712139925wqB4B4hE)",
            "other",
        ),
    ],
)
def test_failed_replies_a_fourth_breaking_pass_found_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "You exceeded your current quota, please check your plan and billing details. That is the message OpenAI returns when the account has no credits left; top up at platform.openai.com/account/billing.",
        "503 Service Unavailable: the server is temporarily unable to handle the request, usually due to maintenance or overload.",
        "Error code: 401 - Incorrect API key provided. This happens when the key in your .env has a trailing space. I stripped it and the test call now succeeds.",
        "Quota exceeded for quota metric 'Generate Content API requests per minute' — in Google Cloud this is a per-minute limit, not a billing issue. You can request a higher limit in the Quotas page.",
        'Server error (500): the ticket import failed on row 212 because the "due_date" column had an invalid value. I fixed the date format and re-ran the import; all 340 rows are in.',
        "Rate limit exceeded (GitHub API): 5,000 requests per hour for authenticated users; 60 for unauthenticated.",
        "The server had an error while processing your request. Sorry about that! — that's OpenAI's generic 500 text; it's on their side, and the status page showed an incident at the time.",
        "Billing summary: your OpenAI usage this month is $118.20 against a hard limit of $120. Once the hard limit is reached, requests return insufficient_quota until the next cycle, so I recommend raising it to $200.",
        "Request failed with status code 404 was caused by the trailing slash in the base URL; after removing it the webhook registers fine.",
        "Connection error: fixed. The Docker container could not reach host.docker.internal because of the missing extra_hosts entry; I added it to compose.yaml.",
        "Last error: 429 Too Many Requests (resolved at 10:42, no action needed)",
        "Service unavailable during the 02:00–02:30 maintenance window, as announced. All services are back and the smoke tests pass.",
        "错误码 1113：余额不足或无可用资源包，请充值。含义是账户里既没有现金余额，也没有可抵扣的资源包；充值或购买资源包后几分钟内即可恢复调用。",
        "最近一次失败：2024-05-12 10:21，错误：Request timed out，已按退避策略自动重试，第二次调用成功，用户无感知。",
        '排查结论：日志里的 {"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}} 是因为 .env 里的 OPENAI_API_KEY 少复制了最后 4 位，已更正并重启容器，调用恢复正常。',
        '这条报错：\n{"error":{"code":"insufficient_quota","message":"You exceeded your current quota, please check your plan and billing details."}}\n意思是 OpenAI 账户的预付额度已经用完，需要在 Billing 页面充值或绑定付款方式，与代码无关。',
        "余额不足，请充值后再试：这是 DeepSeek 开放平台在账户余额为 0 时返回的 402 提示。本月账单共消费 ¥312.40，已于 6 月 3 日 09:10 充值 ¥500，当前余额 ¥187.60。",
        "鉴权失败：API Key 无效或已过期。出现这句时请到控制台确认 Key 是否被删除、是否属于当前项目，以及请求头是否写成 Authorization: Bearer <key>。",
        "网络错误，请检查网络连接 —— 周报：本周机器人共回复 4,213 条，其中 9 条因服务器出网代理重启出现这句提示，代理恢复后已补发。",
        "内容包含敏感词，请修改后重试：这是百度千帆内容审核拦截时的提示，与 Key、余额无关；本月共被拦截 3 次，均为用户输入里含违规词，已在前端加了提示。",
        "当前分组上游负载已饱和，请稍后再试 —— one-api 的这条提示说明上游渠道被限流或并发打满，不是本地网络问题。我们已在“default”分组新增两个渠道，今天未再出现。",
        "超时设置：请求超时 60 秒，流式首包超时 15 秒，超过后自动重试 2 次。",
        "429 Too Many Requests：单位时间内请求数超过限制。Moonshot 免费档为 3 RPM，遇到时按 Retry-After 头等待后重试即可。",
        '状态报告：智谱接口昨天报错 {"error":{"code":"1302","message":"您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}，我们已把并发从 10 降到 3，今天未再出现。',
    ],
)
def test_answers_a_fourth_breaking_pass_wrote_are_no_error(reply):
    assert judge(reply) is None


# --- the sixteenth batch's folds --------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "insufficient_quota 当前分组上游负载已饱和，请稍后再试 (request id: 2025022112482585670542332302066)",
            "overloaded",
        ),
        ("insufficient_user_quota user quota is not enough (request id: 2024040323172594066980027391365)", "quota"),
        ("openai_api_compatible TIMEOUT", "timeout"),
    ],
)
def test_a_snake_case_code_before_the_message_leads_to_the_message_s_cause(reply, category):
    assert category_of(reply) == category


def test_a_comma_and_a_last_clause_naming_a_failure_end_a_provider_sentence():
    assert category_of("服务暂时不可用，第三方响应错误") == "server_error"
    assert judge("服务暂时不可用，已切换到备用线路并完成任务。") is None


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "google.genai.errors.ClientError: 429 RESOURCE_EXHAUSTED\nQuota exceeded for quota metric 'Session Event "
            "Append Requests'\nand limit 'Session Event Append Requests per minute per region'",
            "rate_limit",
        ),
        ("Caused by: java.io.IOException: unexpected end of stream on https://api.openai.com/...", "network"),
        ("litellm.APIConnectionError: OllamaException - [Errno 65] No route to host", "network"),
        ("revChatGPT.typings.APIConnectionError: 404 Not Found", "other"),
        (
            'API Error: 422 {"error":{"message":"格式转换错误: Failed to parse OpenAI response: expected value at line 1 '
            'column 1","type":"proxy_error"}}',
            "incomplete",
        ),
        ("Error from v1/chat: Failed to deserialize api response", "incomplete"),
        ("AI返回的数据格式错误", "incomplete"),
        ("返回内容为空或接口错误", "incomplete"),
        ("Model deepseek-v3 not exist.", "model_not_found"),
        ("backend overloaded", "overloaded"),
        ("Server busy! Try later.", "overloaded"),
        ("Model not yet loaded", "overloaded"),
        ("⏺ Sorry, the model cannot answer this question.", "content_filter"),
        ("The prompt has 13284 tokens and the max_tokens is 4096 tokens.", "context_length"),
        ("校验失败，请检查 api_key secret_key 是否正确", "auth"),
    ],
)
def test_failed_replies_of_the_sixteenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Backend overloaded alerts fired twice last night; both cleared within a minute.",
        "Server busy rate stayed under 0.1 % this week.",
        "The prompt has 300 tokens and the max_tokens is 1024 tokens, so the request fits comfortably.",
        "AI返回的数据格式错误时，解析器会回退到纯文本模式，这是默认行为。",
    ],
)
def test_answers_about_the_sixteenth_batch_s_wordings_are_no_error(reply):
    assert judge(reply) is None


# --- the seventeenth batch's folds ------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            'API Error (429 {"error":{"message":"Error from provider: {\\"errors\\":{\\"message\\":\\"Request limit '
            'exceeded.\\"}}","type":"api_error"}}',
            "rate_limit",
        ),
        (
            'Error from provider(modelscope,Kwaipilot/KAT-Dev-72B-Exp: 400): {"errors":{"message":"Model id : '
            'Kwaipilot/KAT-Dev-72B-Exp , has no provider supported"}}',
            "model_not_found",
        ),
        (
            "PermissionDeniedError: Error code: 403 - {'error': {'message': 'You are not allowed to sample from this "
            "model', 'type': 'invalid_request_error', 'param': None, 'code': None}}",
            "model_not_found",
        ),
        (
            '{\n  "Response": {\n    "Error": {\n      "Code": "UnsupportedOperation.PkgExhausted",\n      "Message": '
            '"The resource pack allowance has been exhausted, please check your resource pack."\n    }\n  }\n}',
            "quota",
        ),
        ('{"error":"This user is inactive."}', "auth"),
        ('Error retrieving models: {"error":"An API key is required for api.openai.com"}', "auth"),
        (
            "Error while sending message: The server experienced an error while processing your request. Sorry about "
            "that! You can retry your request.",
            "server_error",
        ),
        ("ollama._types.ResponseError: no slots available after 10 retries", "overloaded"),
        ("api调用超时", "timeout"),
        (
            "Reduce the length. 本次输入过长, 或历史数据过长. 历史缓存数据已部分释放, 您可以请再次尝试.",
            "context_length",
        ),
        ("APIException [Error]: [请求失败]: Not enough credits left (错误码: 1006)", "quota"),
    ],
)
def test_failed_replies_of_the_seventeenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "No slots available alerts paged the on-call twice; we added a second llama.cpp replica.",
        "api调用超时的阈值是 30 秒，可以在配置里调整。",
        "The server experienced an error while processing your request — that's OpenAI's generic 500 text.",
    ],
)
def test_answers_about_the_seventeenth_batch_s_wordings_are_no_error(reply):
    assert judge(reply) is None


# --- this stop's kinds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, category",
    [
        ("接口响应错误 - Too Many Requests", "rate_limit"),
        ("任务-'replyer' 模型-'deepseek-v3': 客户端错误 402 - Insufficient balance", "quota"),
        (
            "发生异常: NotFoundError - Error code: 404 - {'error': {'code': 'InvalidEndpoint.NotFound', 'message': "
            "'The request targeted an endpoint that does not exist'}}",
            "model_not_found",
        ),
    ],
)
def test_an_error_label_then_a_dash_opens_the_message(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Error – Rate limit exceeded\nThis section of the runbook covers what on-call should do when the dashboard "
        "shows this alert.",
        "错误 - 余额不足：请前往控制台充值。以上是用户看到的提示文案，我们建议改为更友好的语气。",
        "Error - Context length exceeded? Split your document into chunks of 3,000 tokens and summarise each.",
    ],
)
def test_a_bare_error_word_and_a_dash_heads_prose_not_an_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply",
    [
        "Known error - Too Many Requests is returned when the rate limit is exceeded; we retry with backoff.",
        "Known error: Too Many Requests is returned when the rate limit is exceeded; we retry with backoff.",
        "Timeout error – what it means: the upstream took longer than 30 seconds, so retry later.",
        "Connection error: ECONNREFUSED occurs when nothing listens on the port, so start the server first.",
    ],
)
def test_a_label_whose_message_says_when_the_error_is_returned_is_an_explanation(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Response status code does not indicate success: 429 (Too Many Requests).", "rate_limit"),
        ("Response status code does not indicate success: 500 (Internal Server Error).", "server_error"),
        ("Server returned HTTP response code: 401 for URL: https://api.openai.com/v1/chat/completions", "auth"),
        ("Received non-200 status code 429: rate limit exceeded", "rate_limit"),
    ],
)
def test_an_http_client_s_status_exception_opens_the_status_it_names(reply, category):
    assert category_of(reply) == category


def test_an_answer_about_an_http_client_s_status_exception_is_no_error():
    assert judge("Response status code does not indicate success: 429 is thrown when HttpClient gets a 429.") is None


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            'Error: GET "http://localhost:8330/v1/models": 503 Service Unavailable {"message":"Loading model"}',
            "overloaded",
        ),
        (
            "提问失败:  {\n  header: {\n    code: 11200,\n    message: 'AppIdNoAuthError:(16:26:07.442) tokens.total',\n"
            "    status: 2\n  }\n}",
            "quota",
        ),
        ("[Local Message] 请求失败：{'header': {'code': 11200, 'message': 'AppIdNoAuthError'}}", "auth"),
        (
            "instructor.exceptions.IncompleteOutputException: The output is incomplete due to a max_tokens length "
            "limit.",
            "incomplete",
        ),
        (
            '{\n  "error": { "code": 400, "message": "Request contains an invalid argument.",\n    "status": '
            '"INVALID_ARGUMENT",\n    "details": [ { "reason": "PUBLIC_ERROR_UNSAFE_GENERATION" } ] }\n}',
            "content_filter",
        ),
    ],
)
def test_a_provider_s_own_words_name_the_cause_before_its_status(reply, category):
    assert category_of(reply) == category


def test_loading_a_model_in_a_progress_report_is_no_error():
    assert judge("Loading model weights took 12 s; the server is ready.") is None


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "[请求错误]\n\n此翻译引擎不可用，可能是密钥错误，也可能是请求过快。\n\nError: HTTP POST https://api.example.com/v1/chat"
            "/completions failed with status code 401:\n\n401 Authorization Required",
            "auth",
        ),
        (
            "✕ [API Error: 429 status code (no body)]\n  Possible quota limitations in place or slow response times "
            "detected.",
            "rate_limit",
        ),
        ("Error: The server may be overloaded, please try again later.", "overloaded"),
    ],
)
def test_a_cause_an_app_only_guesses_at_does_not_name_the_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Your API key is invalid or revoked", "auth"),
        ('Error: Status Code: 424\nResponse Content: {"title":"Failed dependency","status":424}', "server_error"),
        (
            "Error: OpenAI API request failed [404]:\n\nThe model `text-davinci-003` has been deprecated",
            "model_not_found",
        ),
        ('{\n  "error": true,\n  "message": "missing BAIDU_API_KEY or BAIDU_SECRET_KEY in server env vars"\n}', "auth"),
        (
            'Status code: 400, body: {"errors":[{"code":"invalid_input_argument","message":"Token sequence length is '
            'longer than the specified maximum sequence length for this model (1336 > 512)."}]}',
            "context_length",
        ),
        (
            'ModelError: Received server error (500) from model with message "<title>500 Internal Server Error</title>'
            ' Either the server is overloaded or there is an error in the application."',
            "server_error",
        ),
        ('AnthropicException - {"type":"error","error":{"type":"not_found_error","message":"Not Found"}}', "other"),
        (
            '{"type":"error","error":{"type":"not_found_error","message":"model: claude-3-opus-2024"}}',
            "model_not_found",
        ),
        (
            "flutter: have Error [429] => Data: {error: {message: You exceeded your current quota, type: "
            "insufficient_quota}}\n#0 DioMixin.fetch (package:dio/src/dio_mixin.dart:488:35)\n"
            "#1 DioMixin.request (package:dio/src/dio_mixin.dart:483:12)\n#2 DioMixin.post (package:dio/src/dio_mixin.dart:97:12)",
            "quota",
        ),
        (
            '错误："Workflow execution failure: Error code: 404 - {\\"code\\":\\"InvalidEndpointOrModel.NotFound\\",'
            '\\"message\\":\\"The model or endpoint doubao-seed-1.6 does not exist\\"}"',
            "model_not_found",
        ),
    ],
)
def test_failed_replies_of_the_eighteenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "Quota planning note: 37 scaling plans in use (limit 100, adjustable); no increase request needed.",
        "网络性能监控周报（第 32 周）\n\n一、整体情况：本周共产生告警 9 条，均为短时 Ping 超时。",
        "Incident summary: rate limit exceeded twice on Tuesday, both retried after 2 s.",
        '报错："Rate limit reached for gpt-4o" 怎么办？',
        "Your API key is invalid if it was created before March; rotate it in the console.",
    ],
)
def test_answers_about_the_eighteenth_batch_s_wordings_are_no_error(reply):
    assert judge(reply) is None


def test_an_app_s_error_report_heading_still_opens_the_error():
    assert category_of("错误报告：error: 500 Internal Server Error Internal server error") == "server_error"


def test_a_reference_table_with_a_meaning_column_is_an_answer_about_errors():
    table = "| status_code | 含义 | 处理 |\n|---|---|---|\n| 50001 | Invalid API key | 检查 Key |\n| 50002 | Insufficient balance | 充值 |"
    assert about_errors(table, head_chars=500) and judge(table) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Streaming response failed: [503] The request queue is full.", "overloaded"),
        ("Failed to connect to LLM Provider: License validation failed", "auth"),
        ("2023-11-22 10:01:37 [ERROR] Pipeline failed on step 4: No result returned", "incomplete"),
        ('EnforcementMessage: "This agent is currently unavailable. It has reached its usage limit."', "quota"),
        ("ERROR | 请求百川 API 时发生错误：{'error_code': 10105, 'text': 'Invalid Signature parameter'}", "auth"),
    ],
)
def test_the_words_of_a_reply_the_model_decides_name_its_category(reply, category):
    found = builtin_matcher().name(reply, head_chars=500, tail_chars=800)
    assert found is not None and found.category == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Error summary: 429 Too Many Requests", "rate_limit"),
        ("Exception report: openai.RateLimitError: Error code: 429 - rate limit reached", "rate_limit"),
    ],
)
def test_an_error_s_own_summary_label_still_opens_the_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("Meeting summary: Error: This model's maximum context length is 16385 tokens.", "context_length"),
        ("AI code review: Error 401 Unauthorized - Incorrect API key provided.", "auth"),
        ("Failed to generate summary: Error code: 429 - {'error': {'code': 'rate_limit_exceeded'}}", "rate_limit"),
    ],
)
def test_a_task_s_name_before_an_error_is_no_report_heading(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "【周报】API 调用情况：429 Too Many Requests 37 次，均在重试后成功。",
        'Exception: "429 Too Many Requests" was thrown by the SDK in 3 of 200 runs; all were retried successfully.',
        'Error: "401 Unauthorized" — fixed. The key had a trailing space; calls work again.',
        'Error message: "The model `gpt-4` does not exist" — this happens because your key lacks access to GPT-4.',
    ],
)
def test_a_report_or_a_quoted_message_talked_about_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        ('Error: "Rate limit reached for gpt-4o" (request id: abc)', "rate_limit"),
        ('Error: "Invalid API key provided". Please check your settings.', "auth"),
    ],
)
def test_a_quoted_message_after_a_label_that_ends_there_is_the_error(reply, category):
    assert category_of(reply) == category


def test_an_introduction_that_says_the_call_failed_keeps_its_blockquote_an_error():
    from patterns.matching import about_errors

    assert not about_errors("Sorry, I couldn't answer that:\n> Error code: 429 - Rate limit reached", head_chars=500)
    assert about_errors(
        'In the run log the last line was:\n> {"error": {"code": 500}}\n\nTrim the input.', head_chars=500
    )


@pytest.mark.parametrize(
    "reply",
    [
        '错误："Rate limit exceeded" 是什么意思？我每分钟只发了两个请求。',
        'Error: "Service Unavailable" you saw last night was our maintenance window; it is over now.',
    ],
)
def test_the_model_yields_on_a_quoted_message_the_reply_talks_about(reply):
    assert about_errors(reply, head_chars=500)


def test_the_model_still_judges_a_quoted_message_that_is_the_error():
    assert not about_errors('错误："Workflow execution failure: Error code: 429 - rate limit reached"', head_chars=500)


# --- the nineteenth batch's folds ---------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            'PROXY ERROR 400: data:{"error":{"code":"421","message":"Moderation Block","param":"The request was '
            'rejected because it was considered high risk","type":"content_filter"}}',
            "content_filter",
        ),
        ("API Error: BadRequestError(\"Error code: 400 - {'message': 'Engine is not loaded yet'}\")", "overloaded"),
        ("Proxy error: connection refused by upstream 10.0.0.4:8080", "network"),
    ],
)
def test_failed_replies_of_the_nineteenth_batch_s_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "WARN proxy::rate_limit: 检测到模型容量不足 (MODEL_CAPACITY_EXHAUSTED)，服务端暂无可用实例，15秒后重试",
            "overloaded",
        ),
        ("Error: Processing the pdf failed due to excess load. Please try again later.", "overloaded"),
        (
            "Query or prefix prompt is too long, you can reduce the prefix prompt, or shrink the max token",
            "context_length",
        ),
        ("对话时，直接报错为：Inference server exited with code  4294967295。", "server_error"),
        ("xinference ERROR [address=0.0.0.0:35395, pid=157] CUDA error: device-side assert triggered", "server_error"),
        ("Your secretKey is not configured.", "auth"),
    ],
)
def test_the_words_of_the_nineteenth_batch_s_failed_replies_name_their_category(reply, category):
    found = builtin_matcher().name(reply, head_chars=500, tail_chars=800)
    assert found is not None and found.category == category


def test_an_exception_s_quoted_argument_is_the_error_not_a_quotation():
    assert not about_errors("API Error: BadRequestError(\"Error code: 400 - {'message': 'x'}\")", head_chars=500)


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "error : Error code: 500 - {'statusCode': 500, 'message': '400 Unable to access model gpt-4o-mini. '}",
            "model_not_found",
        ),
        (
            '400: {"error":{"code":"InvalidParameter","message":"The parameter `model` specified in the request are '
            'not valid: the requested model doubao-x does not support this api."}}',
            "model_not_found",
        ),
        ('[400]: {"status":400,"detail":"Function id \'87ea\': DEGRADED function cannot be invoked"}', "server_error"),
        (
            "httpx.HTTPStatusError: Server error '504 No response from server' for url 'http://localhost:3000/v1'",
            "timeout",
        ),
        ("OpenAI API错误, 原因: 连接出错: Invalid URL (POST /chat/completions)", "other"),
        (
            'Post "https://api.openai.com/v1/chat/completions": dial tcp 1.2.3.4:443: connect: connection timed out',
            "network",
        ),
        (
            '{"error":{"message":"Status { code: ResourceExhausted, message: \\"Admission denied: '
            'load_shed_probability=0.85\\" }"}}',
            "overloaded",
        ),
        (
            "openai.PermissionDeniedError: Error code: 403 - {'error': {'message': 'The free quota has been "
            "exhausted.'}}",
            "quota",
        ),
    ],
)
def test_the_body_s_cause_beats_the_status_or_the_wrapper_around_it(reply, category):
    assert category_of(reply) == category


def test_a_port_after_port_is_not_a_status():
    reply = (
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example', port=443): Max retries "
        "exceeded with url: /models (Caused by NameResolutionError(\"Failed to resolve 'api.example'\"))"
    )
    assert category_of(reply) == "network"


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "botocore.errorfactory.ValidationException: An error occurred (ValidationException) when calling the "
            "InvokeModel operation: Malformed input request: expected maxLength: 42000, actual: 46735",
            "context_length",
        ),
        ("Generate API was removed on September 15 2025. Please migrate to Chat API.", "model_not_found"),
        (
            "ValidationException: Invocation of model ID anthropic.claude-x with on-demand throughput isn’t supported.",
            "other",
        ),
        ('[WARN] request failed, body={"code":4101,"msg":"The token you entered is incorrect."}', "auth"),
        ("Error: OpenAI or Azure OpenAI API key not found", "auth"),
        ("tenacity.RetryError: RetryError[<Future at 0x26f state=finished raised PermissionDeniedError>]", "auth"),
        (
            'ERROR  Bad Request\n\nFailed to load model "qwen/qwen3-coder-30b". Error: Operation canceled.',
            "server_error",
        ),
        ("请珍惜机器人，当前提问内容不合规！", "content_filter"),
        ("Unexpected token 'N', \"Not Found\" is not valid JSON", "incomplete"),
        ("xinference: An error occurred during streaming.", "incomplete"),
        ("Problem in node 'AI Agent' \"nomic-embed-text:latest\" does not support chat", "model_not_found"),
        (
            "srv update_slots: failed to decode the batch: KV cache is full - try increasing it via the context size",
            "context_length",
        ),
        ("Input length (700001 tokens) exceeds the maximum allowed length (536826 tokens).", "context_length"),
    ],
)
def test_the_words_of_failed_replies_the_model_finds_name_their_category(reply, category):
    found = builtin_matcher().name(reply, head_chars=500, tail_chars=800)
    assert found is not None and found.category == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("已被安全过滤器拦截。", "content_filter"),
        ("超出上下文长度限制。", "context_length"),
        ("API 密钥无效 (401)。", "auth"),
        ("需要计费 (402)。请在 Google Cloud 项目中启用计费。", "quota"),
        ("网络问题。请检查连接或 CORS。", "network"),
        ("配额已超限", "quota"),
        ("响应解析错误", "incomplete"),
        ("模型已被官方禁用", "model_not_found"),
    ],
)
def test_an_app_s_short_chinese_error_string_is_an_error_of_its_category(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            '{"error":"HTTP 請求失敗: error sending request for url (https://api.poe.com/bot/claude-3.5-sonnet)"}',
            "network",
        ),
        (
            "stream error: stream disconnected before completion: error sending request for url "
            "(https://api.openai.com/v1/responses); retrying 3/5 in 1.2s",
            "network",
        ),
        (
            "[AI分析] 第1次尝试AI调用失败: Failed to deserialize the JSON body into the target type: messages[0]",
            "other",
        ),
        (
            '{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not '
            'supported","type":"request_forbidden"}}',
            "auth",
        ),
        ('{\n    "error": "No API key found",\n    "trace": "isAuthenticated.error"\n}', "auth"),
        (
            'Error calling LLM: litellm.BadRequestError: DeepseekException -       \n{"error":{"message":"Model Not'
            '       \nExist","type":"invalid_request_error"}}',
            "model_not_found",
        ),
        ("RuntimeError: No model has been loaded", "model_not_found"),
        ("Not enough resources to load the model with the current settings", "server_error"),
        (
            "Error: Request failed with status code 429. More information about this error: "
            "https://www.codegpt.co/docs/tutorial-basics/api_errors",
            "rate_limit",
        ),
    ],
)
def test_failed_replies_of_the_twentieth_and_twenty_first_batches_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        'Claude Code 里出现 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}，说明 Anthropic '
        "的服务器当前负载过高，暂时处理不了请求。",
        "Service error:TooManyRequests（http status code: 429）说明 OCI 对该用户的请求做了限流，各服务的阈值不同。",
        '{"detail":"Not Found"} 是本地服务返回的 404，说明请求到了一个不存在的路径。',
    ],
)
def test_an_error_followed_by_what_it_shows_is_an_answer_about_it(reply):
    assert judge(reply) is None


def test_an_error_whose_own_words_say_what_it_shows_is_still_an_error():
    assert category_of("服务返回错误：429，说明请求过于频繁或超出额度限制，请稍后再试。") == "rate_limit"


@pytest.mark.parametrize(
    "reply, category",
    [
        ("100002 触发平台限流规则,请稍后重试", "rate_limit"),
        ("100011 无可用额度", "quota"),
        ("200004 大模型调用超时", "timeout"),
        ("100008 请求内容没有通过安全策略", "content_filter"),
        ("您的积分余额不足，请及时充值以继续使用", "quota"),
    ],
)
def test_a_short_chinese_app_string_is_an_error_wherever_its_provider_words_stand(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "连接超时 3.05 秒",
        "余额不足会停用。",
        "已设为 500。",
        "默认超时：60 秒",
        "余额不足是什么意思？",
        "限流：指单位时间内的请求数被限制。",
    ],
)
def test_a_short_chinese_figure_question_definition_or_remark_is_no_error(reply):
    assert judge(reply) is None


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "stream disconnected before completion: An error occurred while processing your request. You can retry "
            "your request.",
            "server_error",
        ),
        (
            "stream disconnected before completion: error sending request for url "
            "(https://chatgpt.com/backend-api/codex/responses)",
            "network",
        ),
        ("stream disconnected before completion: stream closed before response.completed", "incomplete"),
        (
            'Error communicating with OpenAI: "Rate limit reached for 10KTPM-200RPM in organization org-x on tokens '
            'per min. Limit: 10000 / min. Please try again in 6ms."',
            "rate_limit",
        ),
        ("Error calling LLM: litellm.BadGatewayError: BadGatewayError: OpenAIException -", "server_error"),
    ],
)
def test_a_stream_cut_short_or_a_failed_call_takes_the_category_of_the_cause_it_names(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ('The model "llama3.1:8b" was not found. To download it, run `ollama run llama3.1:8b`.', "model_not_found"),
        (
            'API Error: 400 {"error":{"message":"unknown provider for model claude-sonnet-4-5","type":"x"}}',
            "model_not_found",
        ),
        ('{"error": true, "message": "you are not allowed to use xxx model"}', "model_not_found"),
        ("Error code: 413 - {'message': 'batch size 77 > maximum allowed batch size 32', 'code': 413}", "other"),
        ('API validation failed: {"error":{"message":"max_tokens must be at least 16 for sonar."}}', "other"),
        ("The reasoning_content in the thinking mode must be passed back to the API.", "other"),
        (
            "unexpected status 502 Bad Gateway: upstream stream error: The `content[].thinking` in the thinking mode "
            "must be passed back to the API.",
            "other",
        ),
        (
            "请求千问 API 时发生错误：{'error_code': <HTTPStatus.INTERNAL_SERVER_ERROR: 500>, 'text': 'Role must be user "
            "or assistant and Content length must be greater than 0'}",
            "other",
        ),
        (
            "Error code: 400 - {'error': {'message': 'Exceeded limit on max bytes to request body : 6291456'}}",
            "context_length",
        ),
        ('AI_APICallError: Failed to process successful response url: "http://127.0.0.1:11434/api/chat"', "incomplete"),
        ("Ollama Unreachable", "network"),
    ],
)
def test_failed_replies_of_the_twenty_second_batch_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        (
            "Service unavailable - try again later or consider setting this node to retry automatically (in the node "
            "settings) [GoogleGenerativeAI Error]: Error fetching from https://generativelanguage.googleapis.com: "
            "[503 Service Unavailable] The model is overloaded. Please try again later.",
            "overloaded",
        ),
        ("502 - the provider rejected the gateway's credentials", "auth"),
        (
            'Reason: Rate limit exceeded {"message":"The engine is currently overloaded, please try again later",'
            '"type":"engine_overloaded"}',
            "overloaded",
        ),
        ("NETWORK ERROR DUE TO HIGH TRAFFIC. PLEASE REGENERATE OR REFRESH THIS PAGE. (error_code: 4)", "overloaded"),
        (
            "NETWORK ERROR DUE TO HIGH TRAFFIC. PLEASE REGENERATE OR REFRESH THIS PAGE. (error_code: 50004, Prompt "
            "tokens (9471) + max-sampled tokens (512) exceeds max (9216))",
            "context_length",
        ),
    ],
)
def test_once_a_reply_is_an_error_the_cause_in_its_body_beats_its_wrapper_or_status(reply, category):
    assert category_of(reply) == category


def test_the_verdict_is_the_first_of_every_matching_pattern_when_the_body_beats_the_status():
    reply = "502 - the provider rejected the gateway's credentials"
    matcher = builtin_matcher()
    matches = matcher.matches(reply, head_chars=500, tail_chars=800)
    assert matches[0] == judge(reply) and matches[0].category == "auth"
    assert "server_error" in {found.category for found in matches}


@pytest.mark.parametrize(
    "reply, category",
    [
        ('openai.error.APIError: HTTP code 200 from API ("{\\"rate_limit_usage\\": {\\)', "incomplete"),
        ("KeyError 'content'", "incomplete"),
        (
            "Response payload is not completed: <TransferEncodingError: 400, message='Not enough data to satisfy "
            "transfer length header.'>",
            "network",
        ),
        ("ValueError: Unable to instantiate model", "server_error"),
        (
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`",
            "server_error",
        ),
    ],
)
def test_failed_replies_of_the_twenty_third_batch_wordings_name_their_cause(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("prompt is too long: 202128 tokens > 200000 maximum", "context_length"),
        ("[Local Message] You exceeded your current quota. OpenAI以账户额度不足为由, 拒绝服务.", "quota"),
        ("[Local Message] Input (or history) is too long, please reduce input or clear history.", "context_length"),
        ("Something went wrong during completion. Reason: Error communicating with OpenAI", "network"),
        (
            "Something went wrong during completion. Reason: You exceeded your current quota, please check your plan "
            "and billing details.",
            "quota",
        ),
    ],
)
def test_a_statement_before_its_figures_or_a_wrapper_that_gives_a_reason_is_the_error(reply, category):
    assert category_of(reply) == category


@pytest.mark.parametrize(
    "reply",
    [
        "退款结果：FAIL，err_code=NOTENOUGH，基本账户余额不足。",
        "POS 显示：51-余额不足。",
        "排查步骤：先在商家中心查看可用余额；不足则充值。",
        "Quota exceeded: 3 of 40 teams this quarter (sales, ops, support).",
    ],
)
def test_a_short_record_of_another_system_s_result_is_no_error(reply):
    assert judge(reply) is None
