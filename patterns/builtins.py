"""The shipped built-in error patterns (SPEC §3.2): data only.

``BUILTINS`` holds one dict per pattern with a stable ``key``. Keys never
change meaning; a new shape gets a new key, so :mod:`patterns.seeding` can add
it to existing databases on the next ``migrate`` without touching rows ops
have edited, and removes rows of keys that are no longer shipped unless ops
edited them.

Each built-in names what a provider or hermes-agent says as a plain phrase or
a short regex, with scope ``error``: *where* an error sits (the reply starts
as an error, is one provider sentence, or ends with an error block) is the
detector's business (:func:`patterns.matching.error_regions`, SPEC §3.3).
Specific causes come before status codes (lower priority is tried first), so
the body's cause beats the status line.
"""

from __future__ import annotations


def _builtin(key, name, pattern, category, retryable, priority, description):
    return {
        "key": key,
        "name": name,
        "pattern": pattern,
        "description": description,
        "category": category,
        "retryable": retryable,
        "priority": priority,
        "scope": "error",
    }


BUILTINS: list[dict] = [
    # --- hermes-agent's own failure texts ------------------------------------------------------
    _builtin("hermes-no-reply", "hermes-agent: No reply", "No reply:", "incomplete", True, 10,
             'hermes-agent\'s turn explainer "⚠️ No reply: …": no usable answer this turn.'),
    _builtin("hermes-truncated", "hermes-agent: response truncated",
             "regex:response (?:truncated due to output length|remained (?:incomplete|truncated))", "incomplete",
             True, 12, "hermes-agent saying the answer was cut off by the output cap."),
    _builtin("hermes-interrupted", "hermes-agent: thinking budget or call interrupted",
             "regex:thinking budget exhausted|operation interrupted: waiting for model", "incomplete", True, 12,
             "hermes-agent saying the thinking budget ran out or the model call was interrupted."),
    _builtin("hermes-iteration-limit", "hermes-agent: iteration limit reached",
             "regex:i reached the (?:iteration limit|maximum iterations)", "incomplete", False, 12,
             'hermes-agent\'s "I reached the iteration limit …".'),
    _builtin("hermes-invalid-tool-call", "hermes-agent: invalid tool call", "model generated invalid tool call",
             "other", False, 14, 'hermes-agent giving up on unusable tool calls ("Model generated invalid tool call: …").'),
    _builtin("hermes-repeated-errors", "hermes-agent: repeated errors",
             "regex:i apologize, but i encountered (?:an error while processing|repeated errors)", "other", False, 14,
             'hermes-agent\'s "I apologize, but I encountered repeated errors: …".'),
    _builtin("hermes-context-overflow", "hermes-agent: context overflow",
             "regex:context length exceeded|context overflow and auto-compaction", "context_length", False, 14,
             'hermes-agent\'s "Context length exceeded …".'),
    _builtin("hermes-gateway-auth", "hermes-agent: provider authentication failed", "provider authentication failed",
             "auth", False, 14, 'The gateway\'s "⚠️ Provider authentication failed …".'),
    _builtin("hermes-safety-filter", "hermes-agent: provider safety filter",
             "regex:provider(?:'s)? safety filter blocked|provider rejected the request\\. i kept", "content_filter",
             False, 14, "hermes-agent saying the provider's safety filter blocked the request."),
    _builtin("hermes-rate-limiting", "hermes-agent: provider is rate-limiting", "the model provider is rate-limiting",
             "rate_limit", True, 14, 'The gateway\'s "⏱️ The model provider is rate-limiting requests …".'),
    _builtin("hermes-thinking-timeout", "hermes-agent: reasoning model timed out",
             "regex:the model was thinking for so long|the model's thinking phase exceeded|agent inactive for \\d+ min",
             "timeout", True, 14, "hermes-agent's reasoning-timeout texts."),
    _builtin("hermes-stream-dropped", "hermes-agent: stream connection dropped",
             "regex:(?:the provider's )?stream (?:repeatedly dropped|connection keeps dropping)|proxy (?:connection )?error",
             "network", True, 14, "hermes-agent saying the model's stream connection kept dropping."),
    _builtin("hermes-billing", "hermes-agent: billing or credits exhausted", "billing or credits exhausted", "quota",
             False, 16, 'hermes-agent\'s "Billing or credits exhausted: …".'),
    _builtin("hermes-billing-guidance", "hermes-agent: billing guidance",
             "regex:\\S+ reported that (?:billing, credits, or account entitlement|your claude subscription usage)"
             " is exhausted",
             "quota", False, 16, 'hermes-agent\'s "<provider> reported that billing, credits, or account '
             'entitlement is exhausted …".'),
    # --- content filters -----------------------------------------------------------------------
    _builtin("content-filter", "Content filter", "regex:content[_ ]?(?:filter|management|policy)", "content_filter",
             False, 20, "The provider's content filter refused the request (content_filter, content management policy)."),
    _builtin("safety-system", "Safety system", "regex:safety (?:filter|system)|responsibleai|data_inspection",
             "content_filter", False, 20, "A safety system refused the request (ResponsibleAI, data_inspection_failed)."),
    _builtin("inappropriate-content", "Inappropriate or flagged content",
             "regex:inappropriate|moderation|flagged|sensitive content", "content_filter", False, 20,
             "The input or output was flagged as inappropriate."),
    _builtin("content-filter-zh", "不安全 / 敏感内容", "regex:不安全|敏感|违规", "content_filter", False, 20,
             "A Chinese provider's content filter (不安全或敏感内容)."),
    # --- a retry hint: a short wait means a rate limit, whatever the text calls it ---------------
    _builtin("retry-in-seconds", "Retry in a few seconds", "regex:(?:retry|try again) in [\\d.]+ ?(?:s|ms|sec)\\b",
             "rate_limit", True, 21, 'A per-minute limit with a retry hint ("Please retry in 2.18s"): rate limited, '
             "even when the text says quota."),
    # --- quota, credits, billing ---------------------------------------------------------------
    _builtin("insufficient-quota", "Insufficient quota or balance",
             "regex:insufficient[_ ](?:quota|balance|credit|fund)\\w*", "quota", False, 22,
             "insufficient_quota, Insufficient Balance."),
    _builtin("quota-exceeded", "Quota exceeded", "regex:(?:you )?exceeded (?:\\w+ ){0,2}quota|(?:allocated )?quota (?:exceed|exhaust)\\w*",
             "quota", False, 22, '"You exceeded your current quota", "Quota exceeded".'),
    _builtin("out-of-credits", "Out of quota or credits",
             "regex:out of (?:quota|credit\\w*)|exhausted your|more credits|credit balance", "quota", False, 22,
             '"out of quota", "You have exhausted your daily quota", "Your credit balance is too low".'),
    _builtin("balance-exhausted", "Balance exhausted", "regex:(?:\\w+ )?balance (?:exhausted|is too low|insufficient)",
             "quota", False, 22, '"Workspace balance exhausted", "Account balance is too low".'),
    _builtin("billing", "Billing", "billing", "quota", False, 22, "The provider asks to check the plan and billing."),
    _builtin("account-overdue", "Account overdue or suspended",
             "regex:arrear|overdue|payment required|suspended", "quota", False, 22,
             "Arrearage, AccountOverdueError, 402 Payment Required, a suspended account."),
    _builtin("resource-exhausted", "Resource exhausted", "regex:resource[_ ]?(?:has been )?exhausted", "quota",
             False, 22, "RESOURCE_EXHAUSTED, google.api_core.exceptions.ResourceExhausted."),
    _builtin("quota-out", "Provider out of quota",
             "regex:(?:the )?(?:ai )?provider rejected the request because the api key is out of quota",
             "quota", False, 22, "The AI SDK's out-of-quota sentence."),
    _builtin("balance-zh", "余额不足", "regex:(?:您的|当前)?(?:账户|账号)?余额不足", "quota", False, 22, "余额不足 (the seed's phrase)."),
    _builtin("quota-zh", "额度不足 / 额度已用尽", "regex:(?:该|您的|当前)?(?:令牌|账户|账号|用户)?额度(?:不足|已用|用[尽完]|已达|超|已耗尽)", "quota", False, 22,
             "额度不足, 额度已用尽."),
    _builtin("arrears-zh", "欠费 / 充值 / 套餐到期", "regex:欠费|充值|资源包|套餐已(?:到期|过期)", "quota", False, 22,
             "欠费, 请充值, 无可用资源包, 套餐已到期."),
    # --- model not found -------------------------------------------------------------------------
    _builtin("model-not-found", "Model not found", "model_not_found", "model_not_found", False, 24,
             "model_not_found."),
    _builtin("model-does-not-exist", "Model does not exist",
             "regex:model\\W[^\\n]{0,50}?(?:not found|does not exist)", "model_not_found", False, 24,
             "\"The model `x` does not exist\", \"model 'x' not found\"."),
    _builtin("invalid-model", "Invalid model or endpoint",
             "regex:(?:invalid|unknown|no such) model|not a valid model|no endpoints|invalidendpoint",
             "model_not_found", False, 24, '"Invalid model", "No endpoints found", InvalidEndpoint.'),
    _builtin("model-not-found-zh", "模型不存在 / 无可用渠道", "regex:模型不存在|无可用渠道|模型[^\\n]{0,20}?(?:不可用|未找到|下线)",
             "model_not_found", False, 24, "模型不存在, 无可用渠道."),
    # --- context length --------------------------------------------------------------------------
    _builtin("context-length", "Context length", "regex:context[_ ](?:length|window|size)|maximum context",
             "context_length", False, 26, "context_length_exceeded, maximum context length, context size."),
    _builtin("prompt-too-long", "Prompt too long",
             "regex:(?:prompt|input) is too long|too many tokens|max_tokens|range of input length", "context_length",
             False, 26, '"prompt is too long", "too many tokens", max_tokens.'),
    _builtin("payload-too-large", "Payload too large", "regex:(?:request )?payload too large", "context_length",
             False, 26, '"Request payload too large (413)".'),
    _builtin("context-length-zh", "上下文长度超限", "regex:上下文长度|长度超", "context_length", False, 26,
             "上下文长度超限."),
    # --- authentication --------------------------------------------------------------------------
    _builtin("invalid-api-key", "Invalid API key",
             "regex:(?:invalid|incorrect|wrong|missing|expired)[_ ](?:\\S+ )?(?:x-)?api[_ -]?key|api key not valid",
             "auth", False, 28, '"Incorrect API key provided", invalid_api_key, "API key not valid".'),
    _builtin("authentication-failed", "Authentication failed",
             "regex:authenticat\\w*[_ ](?:error|fail\\w*)|unauthori[sz]ed|invalid token", "auth", False, 28,
             "authentication_error, Authentication Fails, Unauthorized."),
    _builtin("permission-denied", "Permission denied", "regex:permission[_ ]denied", "auth", False, 28,
             "PERMISSION_DENIED."),
    _builtin("invalid-api-key-zh", "无效的 API Key", "regex:无效的 ?(?:api|令牌|token)", "auth", False, 28,
             "无效的 API Key, 无效的令牌 (the seed's 无效的 api)."),
    _builtin("auth-failed-zh", "身份验证失败", "regex:身份验证|鉴权|认证失败|令牌(?:无效|已过期)", "auth", False, 28,
             "身份验证失败, 鉴权失败, 令牌已过期."),
    # --- overloaded ------------------------------------------------------------------------------
    _builtin("overloaded", "Overloaded", "regex:overload\\w*", "overloaded", True, 30,
             "overloaded_error, Overloaded, service overload."),
    _builtin("high-demand", "High demand or at capacity",
             "regex:high (?:load|demand)|at capacity|too busy|server is busy", "overloaded", True, 30,
             '"high demand", "Selected model is at capacity".'),
    _builtin("at-capacity", "Model at capacity",
             "regex:(?:selected |the |this )?model is (?:currently )?at capacity", "overloaded", True, 30, '"Selected model is at capacity."'),
    _builtin("busy-model-zh", "该模型当前访问量过大", "该模型当前访问量过大", "overloaded", True, 30,
             "该模型当前访问量过大 (the seed's phrase)."),
    _builtin("busy-zh", "访问量过大", "访问量过大", "overloaded", True, 30, "访问量过大 (the seed's phrase)."),
    _builtin("overloaded-zh", "系统繁忙 / 负载过高", "regex:繁忙|负载|过载", "overloaded", True, 30,
             "服务器繁忙, 上游负载已饱和."),
    # --- rate limits -----------------------------------------------------------------------------
    _builtin("rate-limit", "Rate limit", "regex:(?:requests? )?rate[_ -]?limit", "rate_limit", True, 32,
             "rate limit, rate_limit_exceeded, RateLimitError (the seed's phrase)."),
    _builtin("too-many-requests", "Too many requests", "too many requests", "rate_limit", True, 32,
             "Too Many Requests."),
    _builtin("throttled", "Throttled", "regex:(?:the )?(?:request|account)s? (?:was |were |is )?throttl\\w*|throttl\\w*",
             "rate_limit", True, 32, '"The request was throttled", ThrottlingException.'),
    _builtin("concurrency-limit", "Concurrency or request-rate limit",
             "regex:concurrency limit|request rate|requests? per (?:minute|second|day)|slow down", "rate_limit", True,
             32, '"Concurrency limit exceeded", "Request rate increased too quickly".'),
    _builtin("rate-limit-zh", "请求过于频繁 / 速率限制",
             "regex:(?:您的)?(?:账户|账号)?(?:已达到)?速率限制|限流|并发数?过高|(?:提问|请求|访问|调用)(?:太快|过快|过于频繁|太频繁)",
             "rate_limit", True, 32, "速率限制, 请求过于频繁, 提问太快啦."),
    # --- timeouts, network, server -----------------------------------------------------------------
    _builtin("timeout", "Timeout", "regex:(?:(?:the )?(?:request|connection|call) )?timed? ?out|deadline[_ ]exceeded",
             "timeout", True, 34, '"Request timed out", ReadTimeout, DEADLINE_EXCEEDED.'),
    _builtin("timeout-zh", "超时", "超时", "timeout", True, 34, "请求超时."),
    _builtin("connection-error", "Connection error",
             "regex:connection (?:error|refused|reset|aborted|closed|failed)|(?:could not|couldn't|unable to|failed to)"
             " (?:connect|reach)", "network", True, 36, '"Connection error", "Could not connect to Model".'),
    _builtin("socket-error", "Socket, DNS or TLS failure",
             "regex:econn\\w*|enotfound|getaddrinfo|name resolution|\\bssl|broken pipe|fetch failed|network error",
             "network", True, 36, "ECONNRESET, ENOTFOUND, getaddrinfo, SSL."),
    _builtin("network-zh", "网络 / 连接错误", "regex:网络|连接", "network", True, 36, "网络错误, 连接失败."),
    _builtin("server-error", "Server error",
             "regex:internal (?:server )?error|server error|bad gateway|(?:service|temporarily) unavailable|api_error",
             "server_error", True, 38, "Internal Server Error, Bad Gateway, Service Unavailable, api_error."),
    _builtin("server-error-zh", "服务器错误", "regex:服务器(?:内部)?错误|内部错误|服务(?:暂时)?不可用", "server_error", True, 38,
             "服务器内部错误, 服务暂时不可用."),
    # --- generic words of the seed list --------------------------------------------------------
    _builtin("quota", "Quota", "quota", "quota", False, 50, "quota (the seed's word)."),
    _builtin("quota-word-zh", "额度", "额度", "quota", False, 50, "额度 (the seed's word)."),
    _builtin("authentication", "Authentication", "authentication", "auth", False, 52,
             "authentication (the seed's word)."),
    # --- status codes: the seed's HTTP 4 / HTTP 5 ------------------------------------------------
    _builtin("http-429", "HTTP 429", "regex:\\b429\\b", "rate_limit", True, 60, "A 429 status: rate limited."),
    _builtin("http-529", "HTTP 529", "regex:\\b529\\b", "overloaded", True, 60, "Anthropic's 529: overloaded."),
    _builtin("http-401-403", "HTTP 401 / 403", "regex:\\b40[13]\\b", "auth", False, 60,
             "A 401 or 403 status: the key or its permissions were refused."),
    _builtin("http-402", "HTTP 402", "regex:\\b402\\b", "quota", False, 60, "A 402 status: payment required."),
    _builtin("http-404", "HTTP 404", "regex:\\b404\\b", "model_not_found", False, 60,
             "A 404 status: usually an unknown model or endpoint."),
    _builtin("http-413", "HTTP 413", "regex:\\b413\\b", "context_length", False, 60, "A 413 status: too large."),
    _builtin("http-timeout", "HTTP 408 / 504 / 524", "regex:\\b(?:408|504|524)\\b", "timeout", True, 60,
             "A timeout status."),
    _builtin("http-5xx", "HTTP 5xx", "regex:\\b5\\d\\d\\b", "server_error", True, 70,
             "A 5xx status: the provider failed on its side (the seed's HTTP 5)."),
    _builtin("http-4xx", "HTTP 4xx", "regex:\\b4\\d\\d\\b", "other", False, 80,
             "Any other 4xx status: the provider refused the request (the seed's HTTP 4)."),
    # --- last resorts ------------------------------------------------------------------------------
    _builtin("provider-returned-error", "Provider returned error", "provider returned error", "other", False, 85,
             '"Provider returned error" with no better-known cause.'),
    _builtin("api-call-failed", "API call failed after retries", "API call failed after", "other", True, 90,
             "hermes-agent's \"API call failed after N retries: …\" naming no better-known cause (the seed's phrase)."),
    _builtin("hermes-error", "hermes error", "hermes error", "other", False, 95,
             '"[hermes error: …]", even with no message.'),
    _builtin("error-body", "JSON error body", "regex:[{,]\\s*[\"']error[\"']\\s*:", "other", False, 95,
             'A provider\'s error body ({"error": …}) with no more specific sign.'),
]


def builtin_by_key(key: str) -> dict | None:
    """The shipped definition for ``key``, or None."""
    return next((b for b in BUILTINS if b["key"] == key), None)
