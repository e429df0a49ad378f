"""The shipped built-in error patterns and their seeding (SPEC §3.2).

``BUILTINS`` is data only: one dict per pattern with a stable ``key``. Keys
never change meaning; a new shape gets a new key, so ``seed_builtins`` can add
it to existing databases on the next ``migrate`` without touching rows ops
have edited.
"""

from __future__ import annotations

# --- shared fragments ------------------------------------------------------------------------
# An error reply *starts* as an error (SPEC §3.2). These fragments recognise
# that opening, so a keyword deeper in the reply only counts when the reply
# opened as an error, and prose that explains or quotes an error never does.
# Every stored pattern must stay within 500 characters, hence the terse forms.

#: A few leading symbols (emoji, brackets, bullets) but no quote, backtick or
#: blockquote: a quoted or code-fenced error is an answer *about* an error.
_LEAD = r"^[^\pL\pN`\"“'>]{0,6}"

#: An error label: at most two words, a token ending in an error noun, at most
#: two more words, then ":", newline, "(" or ","; e.g. "Error code:", "API Error (",
#: "openai.RateLimitError:", "Upstream error from Alibaba:", "错误：", "AGENT ERROR\n",
#: and JSON error bodies ({"error": …, {"detail": …, {"type":"error", …).
#: Words start with a letter, so "> Error: …" (a quoted error) is no label.
_LABEL = (
    r"(?:[\pL\[]\S* ){0,2}[\pL\pN._\[{\"':,]*?(?:error|exception|detail|错误|失败|ошибка|wrong)(?: \S+){0,2}\"? ?"
    r"[:：\n(，,]"
)

#: Retry and transport wrappers (hermes-agent, the AI SDK, LangChain, axios, urllib3).
_WRAPPER = r"(?:api call )?failed after \d+|invalid api response|retrying \S+ in|request failed with|\w*pool\("

#: A status line ("HTTP 503:", "status code: 429,", "状态码：503") followed by punctuation,
#: not by prose ("HTTP 503 is what a load balancer returns"); google-genai's "429 RESOURCE_EXHAUSTED. {".
_STATUS_LINE = r"(?:http\S*|status code|状态码) ?[:：]? ?\d{3} ?[^\s\pL]|[45]\d\d \w+\. \{"

#: The opening of an error reply.
_OPENING = _LEAD + r"(?:" + "|".join((_LABEL, _WRAPPER, _STATUS_LINE)) + r")"

#: After a status code: an optional Title Case reason ("Too Many Requests"), then
#: punctuation or the end.
_CODE_END = r"(?-i:(?: [A-Z][\w-]*)*)\s?(?:[:：\-–(\[{,，.\n]|$)"


def _after_start(keywords: str) -> str:
    """An error opening followed, within 400 characters, by one of ``keywords``."""
    return r"regex:" + _OPENING + r"(?s:.){0,400}?(?:" + keywords + r")"


def _status(codes: str) -> str:
    """A reply whose first line, after up to three "label:" segments, is a status with one
    of ``codes`` (a regex over three digits), or that opens with the code and its reason."""
    return (
        r"regex:" + _LEAD + r"(?:(?:[\pL\pN][^\n:：]{0,40}[:：,，(]|" + _WRAPPER + r") ?){0,3}(?:\S*?(?:http\S*"
        r"|status(?: ?code)?|error(?: code)?|状态码) ?[:：=(]? ?\[?)?(?:" + codes + r")(?:" + _CODE_END
        + r"|(?-i: [A-Z_]{5,})| (?:too many|provider returned|\pL+ error))"
    )


def _sentence(opening: str) -> str:
    """A reply that opens with a sentence that is itself an error report."""
    return r"regex:" + _LEAD + r"(?:" + opening + r")"


def _builtin(key, name, pattern, description, category, retryable, priority):
    return {
        "key": key,
        "name": name,
        "pattern": pattern,
        "description": description,
        "category": category,
        "retryable": retryable,
        "priority": priority,
    }


_END = r"\s*(?:[.!。！,，;:(]|$|please|try|请)"

BUILTINS: list[dict] = [
    # --- hermes-agent's own terminal texts (run_agent.py, agent/, gateway/) ---------------
    _builtin(
        "hermes-no-reply", "hermes-agent: No reply",
        r"regex:(?m)^[^\p{L}\n]{0,4}No reply: ",
        "hermes-agent's turn explainer (\"⚠️ No reply: …\"), alone or appended after a partial answer.",
        "incomplete", True, 10,
    ),
    _builtin(
        "hermes-truncated", "hermes-agent: response truncated or incomplete",
        _sentence(r"(?:first )?response truncated due to output length limit|codex response remained incomplete"
                  r"|incomplete reasoning_scratchpad|response remained truncated"
                  r"|\**thinking budget exhausted|operation interrupted: waiting for model response"),
        "hermes-agent stopped without a usable answer: output cap, thinking budget, or an interrupted call.",
        "incomplete", True, 12,
    ),
    _builtin(
        "hermes-iteration-limit", "hermes-agent: iteration limit reached",
        _sentence(r"i reached the (?:iteration limit|maximum iterations)"),
        "hermes-agent ran out of tool iterations before a final answer.",
        "incomplete", False, 12,
    ),
    _builtin(
        "hermes-invalid-tool-call", "hermes-agent: invalid tool call or model response",
        _sentence(r"model generated invalid tool call:|i apologize, but i encountered (?:an error while processing"
                  r" the model response|repeated errors):"),
        "hermes-agent gave up on a model that kept producing unusable tool calls or responses.",
        "other", False, 14,
    ),
    _builtin(
        "hermes-context-overflow", "hermes-agent: context length exceeded",
        _sentence(r"context length exceeded|context overflow and auto-compaction|request payload too large"
                  r"|max_tokens exceeds the provider's output cap"),
        "hermes-agent could not fit the conversation into the model's context or output cap.",
        "context_length", False, 14,
    ),
    _builtin(
        "hermes-gateway-auth", "hermes-agent gateway: provider authentication failed",
        _sentence(r"provider authentication failed"),
        "The gateway's short reply for a rejected API key or token.",
        "auth", False, 14,
    ),
    _builtin(
        "hermes-gateway-policy", "hermes-agent: provider safety filter",
        _sentence(r"the model provider(?:'s safety filter blocked| rejected the request\. i kept)"
                  r"|provider safety filter blocked"),
        "The provider's safety filter refused the request (gateway and agent wording).",
        "content_filter", False, 14,
    ),
    _builtin(
        "hermes-gateway-rate-limit", "hermes-agent gateway: provider is rate-limiting",
        _sentence(r"the model provider is rate-limiting"),
        "The gateway's short reply for a provider rate limit.",
        "rate_limit", True, 14,
    ),
    _builtin(
        "hermes-thinking-timeout", "hermes-agent: reasoning model timed out",
        _sentence(r"the model was thinking for so long|the model's thinking phase exceeded"
                  r"|agent inactive for \d+ min"),
        "A reasoning model (or the whole agent) went silent until a proxy or gateway timeout cut it off.",
        "timeout", True, 14,
    ),
    _builtin(
        "hermes-stream-dropped", "hermes-agent: stream or proxy connection dropped",
        _sentence(r"stream repeatedly dropped|proxy connection error|proxy error \(\d+\)"),
        "The streaming connection to the model kept dropping.",
        "network", True, 14,
    ),
    _builtin(
        "hermes-billing", "hermes-agent: billing or credits exhausted",
        _sentence(r"billing or credits exhausted"),
        "hermes-agent classified the provider error as billing: credits or balance are spent.",
        "quota", False, 16,
    ),
    # --- what the provider said, after an error opening; specific before generic ---------
    _builtin(
        "content-filter", "Content filter / safety block",
        _after_start(r"content[_ ]?(?:filter|management|policy)|safety (?:filter|system)|responsibleai"
                     r"|data_inspection|inappropriate|sensitive|moderation|flagged|不安全|敏感|违规"),
        "The provider refused the prompt or output on safety grounds (OpenAI/Azure content_filter, "
        "Qwen data_inspection_failed, GLM 1301 不安全或敏感内容, MiniMax sensitive output).",
        "content_filter", False, 20,
    ),
    _builtin(
        "quota-exhausted", "Quota or credits exhausted",
        _after_start(r"insufficient[_ ](?:quota|balance|credit|fund)|exceeded (?:\w+ ){0,2}quota|quota (?:exceed"
                     r"|exhaust)|out of (?:quota|credit)|exhausted your|credit balance"),
        "The account's quota or balance is spent: OpenAI insufficient_quota, Anthropic credit balance too low, "
        "DeepSeek Insufficient Balance, Gemini daily quota.",
        "quota", False, 22,
    ),
    _builtin(
        "billing", "Billing, credits or payment required",
        _after_start(r"billing|more credits|arrear|payment required|resource_exhausted|suspended"),
        'The provider wants payment: check your plan and billing details, OpenRouter "requires more credits", '
        "402 Payment Required, DashScope Arrearage, Gemini RESOURCE_EXHAUSTED, a suspended account.",
        "quota", False, 22,
    ),
    _builtin(
        "quota-exhausted-zh", "余额不足 / 额度用尽",
        _after_start(r"余额不足|欠费|额度(?:不足|已用|用[尽完]|已达|超)|套餐(?:已到期|已过期)|资源包|充值"),
        "Chinese providers' balance and quota messages (余额不足, 欠费, 额度已用尽, 套餐已到期).",
        "quota", False, 22,
    ),
    _builtin(
        "model-not-found", "Model or endpoint not found",
        _after_start(r"model_not_found|model\W[^\n]{0,50}?(?:not found|does not exist|not exist)|no endpoints"
                     r"|not a valid model|(?:invalid|unknown|no such) model|invalidendpoint"),
        "The requested model or endpoint does not exist or is not available to this key.",
        "model_not_found", False, 24,
    ),
    _builtin(
        "model-not-found-zh", "模型不存在 / 无可用渠道",
        _after_start(r"模型不存在|模型[^\n]{0,20}?(?:不可用|未找到|下线)|无可用渠道"),
        "Chinese providers and relays (one-api, new-api): the model does not exist or no channel serves it.",
        "model_not_found", False, 24,
    ),
    _builtin(
        "context-length", "Context length or token limit exceeded",
        _after_start(r"context[_ ]length|maximum context|context window|(?:prompt|input) is too long|too many"
                     r" tokens|max_tokens|payload too large|range of input length|上下文长度|长度超"),
        "The prompt plus requested output does not fit the model (context_length_exceeded, prompt is too long, "
        "max_tokens over the cap, 413 payload too large).",
        "context_length", False, 26,
    ),
    _builtin(
        "auth-invalid-key", "Invalid API key or authentication failed",
        _after_start(r"(?:invalid|incorrect|wrong|missing|expired)[_ ](?:x-)?api[_ ]?key|api key (?:not"
                     r" valid|is invalid)|authenticat\w*[_ ](?:error|fail)|unauthori[sz]ed|invalid token"),
        "The provider rejected the credentials (invalid_api_key, authentication_error, 401 Unauthorized, "
        "permission denied).",
        "auth", False, 28,
    ),
    _builtin(
        "auth-invalid-key-zh", "无效的 API Key / 身份验证失败 / permission denied",
        _after_start(r"无效的 ?api|api ?key ?无效|身份验证|鉴权|认证失败|令牌(?:无效|已过期)|permission[_ ]denied"),
        "Chinese providers' authentication messages (无效的 API Key, 身份验证失败, 鉴权失败) and PERMISSION_DENIED.",
        "auth", False, 28,
    ),
    _builtin(
        "overloaded", "Provider overloaded",
        _after_start(r"overload|high (?:load|demand)|at capacity|under (?:high|heavy) load|too busy|server is busy"
                     r"|访问量过大|负载|繁忙|过载"),
        "The provider is at capacity (Anthropic overloaded_error 529, Moonshot engine_overloaded, "
        "GLM 1305 该模型当前访问量过大, 系统繁忙).",
        "overloaded", True, 30,
    ),
    _builtin(
        "rate-limit", "Rate limit",
        _after_start(r"rate[_ -]?limit|too many requests|throttl|requests? per (?:minute|second|day)|request rate"
                     r"|slow down|速率限制|限流|频率|过于频繁|太快"),
        "Too many requests or tokens per minute (rate_limit_exceeded, Too Many Requests, GLM 1302 速率限制).",
        "rate_limit", True, 32,
    ),
    _builtin(
        "timeout", "Timeout",
        _after_start(r"timed? ?out|timeout|deadline[_ ]exceeded|超时"),
        "The call to the model timed out (read timeout, 504/524 gateway timeout, DEADLINE_EXCEEDED).",
        "timeout", True, 34,
    ),
    _builtin(
        "network", "Connection error",
        _after_start(r"connection (?:error|refused|reset|aborted|closed|failed)|(?:could not|unable to|failed to)"
                     r" connect|network (?:error|is unreachable)|disconnected|网络|连接"),
        "The model could not be reached (connection error, refused or reset, network unreachable).",
        "network", True, 36,
    ),
    _builtin(
        "network-socket", "Socket, DNS or TLS failure",
        _after_start(r"econn|enotfound|getaddrinfo|name resolution|ssl|certificate verif|broken pipe|fetch failed"),
        "Low-level transport failures: ECONNRESET/ECONNREFUSED, DNS (ENOTFOUND, getaddrinfo), TLS, broken pipe.",
        "network", True, 36,
    ),
    _builtin(
        "server-error", "Provider server error",
        _after_start(r"internal (?:server )?error|server error|bad gateway|service unavailable|temporarily"
                     r" unavailable|api_error|服务器(?:内部)?错误|内部错误|服务(?:暂时)?不可用"),
        "The provider failed on its side (500 Internal Server Error, 502/503, Anthropic api_error).",
        "server_error", True, 38,
    ),
    # --- whole replies that are one provider sentence ------------------------------------
    _builtin(
        "overloaded-sentence", "Model or service at capacity",
        _sentence(r"(?:the |this |selected |requested )?(?:model|server|service|engine|system|provider|api|upstream)s?"
                  r"(?: service)? (?:is |are )?(?:currently |temporarily )?(?:at capacity|overloaded"
                  r"|under (?:high|heavy) load|experiencing (?:high|heavy) (?:load|demand|traffic)|too busy)" + _END
                  + r"|(?:服务器|系统|服务|模型|当前)(?:繁忙|负载过高|过载|访问量过大)"),
        "A reply that is just the provider saying it is at capacity (\"Selected model is at capacity.\", 系统繁忙).",
        "overloaded", True, 40,
    ),
    _builtin(
        "rate-limit-sentence", "Requests throttled",
        _sentence(r"(?:the |your )?(?:request|requests|account|organization)(?: (?:was|were|have been|has been"
                  r"|are being|is being|is|are))? (?:throttled|rate[ -]limited)(?: by [\w ]{1,30})?" + _END
                  + r"|(?:您的)?(?:提问|请求|访问|调用|操作|发送)(?:太快|过快|过于频繁|太频繁|频率过高|次数过多)"),
        "A reply that is just a throttling notice (\"The request was throttled by the service\", 提问太快啦).",
        "rate_limit", True, 40,
    ),
    _builtin(
        "auth-sentence", "Invalid API key",
        _sentence(r"(?:incorrect|invalid|wrong) (?:\S+ )?api key|api key not valid|authentication failed"
                  r"|无效的 ?api ?key|(?:身份验证|鉴权|认证)失败"),
        "A reply that opens with the provider refusing the key (\"Incorrect API key provided: …\").",
        "auth", False, 40,
    ),
    _builtin(
        "network-sentence", "Could not connect to the model",
        _sentence(r"(?:could not|couldn't|cannot|can't|unable to|failed to) (?:connect to|reach) (?:the )?"
                  r"(?:model|server|api|provider|upstream|service|llm|endpoint)"),
        "A reply that is just a connection failure (\"Could not connect to Model.\").",
        "network", True, 40,
    ),
    _builtin(
        "timeout-sentence", "Request timed out",
        _sentence(r"(?:the )?(?:api |model |llm )?(?:request|connection|call)s? (?:has |have )?timed out" + _END),
        "A reply that is just a timeout notice (\"Request timed out.\").",
        "timeout", True, 40,
    ),
    _builtin(
        "quota-sentence", "Out of quota or credits",
        _sentence(r"(?:the )?(?:ai |model )?provider rejected the request because the api key is out of quota"
                  r"|(?:you have|you've) (?:exhausted|run out of|used up) (?:your )?(?:\w+ )?(?:quota|credits?)"
                  r"|(?:您的)?(?:账户|账号)?(?:余额不足|已欠费)" + _END),
        "A reply that is just an out-of-quota notice.",
        "quota", False, 40,
    ),
    # --- status codes after an error opening: the seed's HTTP 4 / HTTP 5 intents ----------
    _builtin(
        "http-429", "HTTP 429 Too Many Requests",
        _status("429"), "An error reply whose status is 429: the provider is rate limiting.",
        "rate_limit", True, 60,
    ),
    _builtin(
        "http-529", "HTTP 529 / 503 overloaded",
        _status("529"), "Anthropic's 529: the API is overloaded.", "overloaded", True, 60,
    ),
    _builtin(
        "http-auth", "HTTP 401 / 403",
        _status("401|403"), "An error reply whose status is 401 or 403: the key or its permissions were refused.",
        "auth", False, 60,
    ),
    _builtin(
        "http-402", "HTTP 402 Payment Required",
        _status("402"), "An error reply whose status is 402: the account has no credit.", "quota", False, 60,
    ),
    _builtin(
        "http-404", "HTTP 404 Not Found",
        _status("404"), "An error reply whose status is 404: usually an unknown model or endpoint.",
        "model_not_found", False, 60,
    ),
    _builtin(
        "http-413", "HTTP 413 Payload Too Large",
        _status("413"), "An error reply whose status is 413: the request is too large.", "context_length", False, 60,
    ),
    _builtin(
        "http-timeout", "HTTP 408 / 504 / 524 timeout",
        _status("408|504|524"), "An error reply whose status is a timeout (408, 504 gateway, 524 Cloudflare).",
        "timeout", True, 60,
    ),
    _builtin(
        "http-5xx", "HTTP 5xx server error",
        _status(r"5\d\d"), "An error reply whose status is 5xx: the provider failed on its side.",
        "server_error", True, 70,
    ),
    _builtin(
        "http-4xx", "HTTP 4xx client error",
        _status(r"4\d\d"), "An error reply whose status is another 4xx: the provider refused the request.",
        "other", False, 80,
    ),
    # --- last resorts -------------------------------------------------------------------------
    _builtin(
        "hermes-api-call-failed", "hermes-agent: API call failed after retries",
        _sentence(r"api call failed after \d+ retr|invalid api response|non-retryable error|rate limited after \d+ retr"),
        "hermes-agent gave up on the LLM call and returned its error as the reply (seed: API call failed after).",
        "other", True, 90,
    ),
    _builtin(
        "error-json", "JSON error body",
        r"regex:" + _LEAD + r"[\[{\s]*\"(?:error|detail)\"\s*:",
        "A reply that is a provider's JSON error body with no more specific sign.",
        "other", False, 95,
    ),
]


def seed_builtins(*, using: str = "default", apps=None) -> int:
    """Insert every built-in whose key is missing; return how many were inserted (SPEC §3.2).

    Never overwrites a stored row (an edited or disabled built-in stays as
    ops left it). A name already taken by another pattern gets a suffix.
    ``apps`` is the app registry of a ``post_migrate`` signal (defaults to the
    global one). Inserted rows are marked built-in and get an "installed"
    history entry.
    """
    if apps is None:
        from django.apps import apps as global_apps

        apps = global_apps
    try:
        Pattern = apps.get_model("patterns", "HermesErrorPattern")
        Change = apps.get_model("patterns", "PatternChange")
    except LookupError:
        return 0
    try:
        Version = apps.get_model("patterns", "PatternSetVersion")
    except LookupError:
        Version = None

    from django.db import transaction

    from patterns.detection import version_bump

    inserted = 0
    with transaction.atomic(using=using):
        patterns = Pattern.objects.using(using)
        stored_keys = set(patterns.exclude(key=None).values_list("key", flat=True))
        taken_names = set(patterns.values_list("name", flat=True))
        for builtin in BUILTINS:
            if builtin["key"] in stored_keys:
                continue
            name = _free_name(builtin["name"], taken_names)
            taken_names.add(name)
            row = patterns.create(
                key=builtin["key"],
                name=name,
                pattern=builtin["pattern"],
                description=builtin["description"],
                category=builtin["category"],
                retryable=builtin["retryable"],
                priority=builtin["priority"],
                enabled=True,
                is_built_in=True,
            )
            Change.objects.using(using).create(
                pattern=row,
                pattern_ref=row.pk,
                pattern_name=row.name,
                actor_label="migrate",
                via="migration",
                action="seed",
                before=None,
                after=_snapshot(row),
            )
            inserted += 1
        if inserted and Version is not None:
            version_bump(Version, using=using)
    return inserted


def builtin_by_key(key: str) -> dict | None:
    """The shipped definition for ``key``, or None."""
    return next((b for b in BUILTINS if b["key"] == key), None)


def _free_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    base = f"{name} (built-in)"
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base[:90]} {n}"
        n += 1
    return candidate[:100]


def _snapshot(row) -> dict:
    return {
        "key": row.key,
        "name": row.name,
        "pattern": row.pattern,
        "enabled": row.enabled,
        "description": row.description,
        "category": row.category,
        "retryable": row.retryable,
        "priority": row.priority,
    }


def seed_builtins_after_migrate(sender, *, using="default", apps=None, **kwargs) -> None:
    """``post_migrate`` receiver: add missing built-ins on every ``migrate`` (SPEC §3.2)."""
    seed_builtins(using=using, apps=apps)
