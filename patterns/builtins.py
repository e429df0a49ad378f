"""The shipped built-in error patterns (SPEC §3.2): data only.

``BUILTINS`` holds one dict per pattern with a stable ``key``. Keys never
change meaning; a new shape gets a new key, so :mod:`patterns.seeding` can add
it to existing databases on the next ``migrate`` without touching rows ops
have edited.

Three reply shapes are recognised (SPEC §3.2, §3.3):

* **starts as an error** — ``^`` (the start of the reply), an error opening
  ("Error code: 429 -", "HTTP 503:", "openai.RateLimitError:", "错误："), then
  the provider's words within 400 characters;
* **is one provider sentence** — the whole reply is a bare provider message
  ("Rate limit exceeded.", "该模型当前访问量过大，请稍后再试"), so the sentence
  must end there or go on the way provider messages do ("please try again",
  "请稍后再试", ": details"); prose that uses the same words as a subject
  ("余额不足时系统会提醒", "Invalid API key errors mean …") does not match;
* **ends as an error** — an error that follows a partial answer: a line that
  starts with a strong error opening (hermes-agent's own texts, an SDK's
  status or exception line, a JSON error body) and runs, with only JSON or
  indented continuation lines, to the very end of the reply (``\\z``). A
  quoted error followed by more prose, a fenced one (the closing fence starts
  a line with a backtick) or a blockquoted or bulleted one never ends a reply
  this way.
"""

from __future__ import annotations

# --- shared fragments ------------------------------------------------------------------------
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

#: How a bare provider sentence ends: the end of the reply; "请…"; sentence or clause
#: punctuation followed by the end or by the way provider messages go on ("Please try
#: again", "Your api key …", "请稍后再试", "您…"); or details after ":" or "(".
#: "Rate limit exceeded errors mean …" or "余额不足时…" go on as prose and do not end here.
_END = r"\s*(?:$|请|[.!。！,，;；]\s*(?:$|please|try|retry|wait|check|you|请|您)|[:：(（\[])"

#: The start of a line after a partial answer: a few emoji (⚠️, ❌, ⏱️) but no quote,
#: backtick, blockquote, bullet, table bar, heading mark or list number.
_TAIL_LEAD = r"(?m:^)[\p{So}\pM]{0,3} ?"

#: Strong error openings that prose does not start a line with: hermes-agent's retry
#: wrappers, "HTTP 503:", "Error code: 429", "API Error (429", "openai.RateLimitError:",
#: "Error:", a JSON error body, google-genai's "429 RESOURCE_EXHAUSTED. {", "错误：".
_TAIL_OPENING = (
    r"(?:api call failed|invalid api response) after|http \d{3}:|(?:api )?[\w.]*(?:error|exception)(?: code)?"
    r'(?::|:? ?\(?\d{3}\b)|\{\s*"(?:type":\s*")?error"|[45]\d\d [A-Z_]+\. \{|错误[:：]|请求失败'
)

#: The rest of an error block: its line, then only JSON or indented continuation lines
#: (never a blank line followed by prose, a closing code fence or a blockquote).
_BLOCK = r'(?:[^\n]|\n[ \t{}"\]])*'

#: The rest of a hermes-agent text: its lines (numbered workarounds included) up to the
#: end, with no blank line and no line starting with a backtick or ">".
_HERMES_REST = r"(?:[^\n]|\n[^\n`>])*\s*\z"


def _after_start(keywords: str) -> str:
    """An error opening at the start of the reply followed, within 400 characters, by one
    of ``keywords``."""
    return r"regex:" + _OPENING + r"(?s:.){0,400}?(?:" + keywords + r")"


def _at_end(keywords: str, codes: str | None = None) -> str:
    """A line after a partial answer (or the whole reply) that opens as an error and names
    one of ``keywords`` or one of the status ``codes`` ("HTTP 503:", "Error code: 503 -"),
    or that is such a status line itself, and runs to the end of the reply."""
    opened = r"(?:" + _TAIL_OPENING + r")" + _BLOCK + r"?"
    if codes is None:
        body = opened + r"(?:" + keywords + r")"
    else:
        status = r"(?:http|code:) (?:" + codes + r") ?[:-]"
        body = r"(?:" + opened + r"(?:" + keywords + r"|" + status + r")|" + status + r")"
    return r"regex:" + _TAIL_LEAD + body + _BLOCK + r"\s*\z"


def _status(codes: str) -> str:
    """A reply whose first line, after up to three "label:" segments, is a status with one
    of ``codes`` (a regex over three digits), or that opens with the code and its reason."""
    return (
        r"regex:" + _LEAD + r"(?:(?:[\pL\pN][^\n:：]{0,40}[:：,，(]|" + _WRAPPER + r") ?){0,3}(?:\S*?(?:http\S*"
        r"|status(?: ?code)?|error(?: code)?|状态码) ?[:：=(]? ?\[?)?(?:"
        + codes
        + r")(?:"
        + _CODE_END
        + r"|(?-i: [A-Z_]{5,})| (?:too many|provider returned|\pL+ error))"
    )


def _sentence(ended: str, free: str | None = None) -> str:
    """A reply that opens with a provider sentence: one of ``ended`` followed by ``_END``,
    or one of ``free`` (phrases specific enough to stand alone)."""
    body = r"(?:" + ended + r")" + _END
    if free:
        body = r"(?:" + free + r")|" + body
    return r"regex:" + _LEAD + r"(?:" + body + r")"


def _hermes(phrases: str) -> str:
    """hermes-agent's own text: at the start of the reply, or as the last lines after a
    partial answer (the text then runs to the end of the reply)."""
    return r"regex:" + _LEAD + r"(?:" + phrases + r")|" + _TAIL_LEAD + r"(?:" + phrases + r")" + _HERMES_REST


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


# --- what providers say, by category (used after an error opening) ----------------------------
_K_CONTENT = (
    r"content[_ ]?(?:filter|management|policy)|safety (?:filter|system)|responsibleai|data_inspection"
    r"|inappropriate|sensitive|moderation|flagged|不安全|敏感|违规"
)
_K_QUOTA = (
    r"insufficient[_ ](?:quota|balance|credit|fund)|exceeded (?:\w+ ){0,2}quota|quota (?:exceed|exhaust)"
    r"|out of (?:quota|credit)|exhausted your|credit balance"
)
_K_BILLING = r"billing|more credits|arrear|payment required|resource_exhausted|suspended"
_K_QUOTA_ZH = r"余额不足|欠费|额度(?:不足|已用|用[尽完]|已达|超)|套餐(?:已到期|已过期)|资源包|充值"
_K_MODEL = (
    r"model_not_found|model\W[^\n]{0,50}?(?:not found|does not exist|not exist)|no endpoints"
    r"|not a valid model|(?:invalid|unknown|no such) model|invalidendpoint"
)
_K_MODEL_ZH = r"模型不存在|模型[^\n]{0,20}?(?:不可用|未找到|下线)|无可用渠道"
_K_CONTEXT = (
    r"context[_ ]length|maximum context|context window|(?:prompt|input) is too long|too many tokens"
    r"|max_tokens|payload too large|range of input length|上下文长度|长度超"
)
_K_AUTH = (
    r"(?:invalid|incorrect|wrong|missing|expired)[_ ](?:x-)?api[_ ]?key|api key (?:not valid|is invalid)"
    r"|authenticat\w*[_ ](?:error|fail)|unauthori[sz]ed|invalid token"
)
_K_AUTH_ZH = r"无效的 ?api|api ?key ?无效|身份验证|鉴权|认证失败|令牌(?:无效|已过期)|permission[_ ]denied"
_K_OVERLOADED = (
    r"overload|high (?:load|demand)|at capacity|under (?:high|heavy) load|too busy|server is busy"
    r"|访问量过大|负载|繁忙|过载"
)
_K_RATE = (
    r"rate[_ -]?limit|too many requests|throttl|requests? per (?:minute|second|day)|request rate"
    r"|slow down|速率限制|限流|频率|过于频繁|太快"
)
_K_TIMEOUT = r"timed? ?out|timeout|deadline[_ ]exceeded|超时"
_K_NETWORK = (
    r"connection (?:error|refused|reset|aborted|closed|failed)|(?:could not|unable to|failed to)"
    r" connect|network (?:error|is unreachable)|disconnected|网络|连接"
)
_K_SOCKET = r"econn|enotfound|getaddrinfo|name resolution|ssl|certificate verif|broken pipe|fetch failed"
_K_SERVER = (
    r"internal (?:server )?error|server error|bad gateway|service unavailable|temporarily"
    r" unavailable|api_error|服务器(?:内部)?错误|内部错误|服务(?:暂时)?不可用"
)

BUILTINS: list[dict] = [
    # --- hermes-agent's own terminal texts (run_agent.py, agent/, gateway/) ---------------
    _builtin(
        "hermes-no-reply",
        "hermes-agent: No reply",
        r"regex:(?m:^)[^\pL\n]{0,4}No reply: " + _HERMES_REST,
        'A reply that is, or ends with, hermes-agent\'s turn explainer "⚠️ No reply: …" (no usable answer this turn).',
        "incomplete",
        True,
        10,
    ),
    _builtin(
        "hermes-truncated",
        "hermes-agent: response truncated or incomplete",
        _hermes(
            r"(?:first )?response truncated due to output length|(?:codex )?response remained (?:incomplete"
            r"|truncated)|incomplete reasoning_scratchpad|\**thinking budget exhausted"
            r"|operation interrupted: waiting for model"
        ),
        "A reply that starts or ends with hermes-agent saying the answer was cut off (output cap, thinking "
        "budget, interrupted call).",
        "incomplete",
        True,
        12,
    ),
    _builtin(
        "hermes-iteration-limit",
        "hermes-agent: iteration limit reached",
        _hermes(r"i reached the (?:iteration limit|maximum iterations)"),
        'A reply that starts or ends with hermes-agent\'s "I reached the iteration limit …".',
        "incomplete",
        False,
        12,
    ),
    _builtin(
        "hermes-invalid-tool-call",
        "hermes-agent: invalid tool call or model response",
        _hermes(
            r"model generated invalid tool call:|i apologize, but i encountered (?:an error while processing"
            r" the model response|repeated errors):"
        ),
        'A reply that starts or ends with hermes-agent giving up on unusable tool calls ("Model generated '
        'invalid tool call: …").',
        "other",
        False,
        14,
    ),
    _builtin(
        "hermes-context-overflow",
        "hermes-agent: context length exceeded",
        _hermes(
            r"context length exceeded|context overflow and auto-compaction|request payload too large"
            r"|max_tokens exceeds the provider's output cap"
        ),
        'A reply that starts or ends with hermes-agent\'s "Context length exceeded …" or "Request payload '
        'too large …".',
        "context_length",
        False,
        14,
    ),
    _builtin(
        "hermes-gateway-auth",
        "hermes-agent gateway: provider authentication failed",
        _hermes(r"provider authentication failed"),
        'A reply that starts or ends with the gateway\'s "⚠️ Provider authentication failed …".',
        "auth",
        False,
        14,
    ),
    _builtin(
        "hermes-gateway-policy",
        "hermes-agent: provider safety filter",
        _hermes(
            r"the model provider(?:'s safety filter blocked| rejected the request\. i kept)"
            r"|provider safety filter blocked"
        ),
        "A reply that starts or ends with hermes-agent saying the provider's safety filter blocked the request.",
        "content_filter",
        False,
        14,
    ),
    _builtin(
        "hermes-gateway-rate-limit",
        "hermes-agent gateway: provider is rate-limiting",
        _hermes(r"the model provider is rate-limiting"),
        'A reply that starts or ends with the gateway\'s "⏱️ The model provider is rate-limiting requests …".',
        "rate_limit",
        True,
        14,
    ),
    _builtin(
        "hermes-thinking-timeout",
        "hermes-agent: reasoning model timed out",
        _hermes(
            r"the model was thinking for so long|the model's thinking phase exceeded"
            r"|agent inactive for \d+ min"
        ),
        "A reply that starts or ends with hermes-agent's reasoning-timeout text (\"The model's thinking phase "
        'exceeded …").',
        "timeout",
        True,
        14,
    ),
    _builtin(
        "hermes-stream-dropped",
        "hermes-agent: stream or proxy connection dropped",
        _hermes(
            r"stream repeatedly dropped|proxy connection error|proxy error \(\d+\)"
            r"|the provider's stream connection keeps dropping"
        ),
        "A reply that starts or ends with hermes-agent saying the model's stream connection kept dropping.",
        "network",
        True,
        14,
    ),
    _builtin(
        "hermes-billing",
        "hermes-agent: billing or credits exhausted",
        _hermes(
            r"billing or credits exhausted|[\w .-]{1,40} reported that (?:billing, credits, or account"
            r" entitlement|your claude subscription usage) is exhausted"
        ),
        'A reply that starts or ends with hermes-agent\'s "Billing or credits exhausted: …" or its billing guidance.',
        "quota",
        False,
        16,
    ),
    # --- what the provider said, after an error opening; specific before generic ---------
    _builtin(
        "content-filter",
        "Content filter / safety block",
        _after_start(_K_CONTENT),
        "A reply that opens as an error and says the provider's safety or content filter refused it "
        "(content_filter, data_inspection_failed, 不安全或敏感内容).",
        "content_filter",
        False,
        20,
    ),
    _builtin(
        "quota-exhausted",
        "Quota or credits exhausted",
        _after_start(_K_QUOTA),
        "A reply that opens as an error and says the quota or balance is spent (insufficient_quota, credit "
        "balance too low, Insufficient Balance).",
        "quota",
        False,
        22,
    ),
    _builtin(
        "billing",
        "Billing, credits or payment required",
        _after_start(_K_BILLING),
        "A reply that opens as an error and asks for payment (billing details, more credits, 402 Payment "
        "Required, Arrearage, RESOURCE_EXHAUSTED, suspended).",
        "quota",
        False,
        22,
    ),
    _builtin(
        "quota-exhausted-zh",
        "余额不足 / 额度用尽",
        _after_start(_K_QUOTA_ZH),
        "A reply that opens as an error and says, in Chinese, the balance or quota is spent (余额不足, 欠费, "
        "额度已用尽, 套餐已到期).",
        "quota",
        False,
        22,
    ),
    _builtin(
        "model-not-found",
        "Model or endpoint not found",
        _after_start(_K_MODEL),
        "A reply that opens as an error and says the model or endpoint does not exist (model_not_found, "
        "no endpoints found).",
        "model_not_found",
        False,
        24,
    ),
    _builtin(
        "model-not-found-zh",
        "模型不存在 / 无可用渠道",
        _after_start(_K_MODEL_ZH),
        "A reply that opens as an error and says, in Chinese, the model does not exist or no channel serves "
        "it (模型不存在, 无可用渠道).",
        "model_not_found",
        False,
        24,
    ),
    _builtin(
        "context-length",
        "Context length or token limit exceeded",
        _after_start(_K_CONTEXT),
        "A reply that opens as an error and says the prompt is too long for the model (context_length_exceeded, "
        "prompt is too long, max_tokens).",
        "context_length",
        False,
        26,
    ),
    _builtin(
        "auth-invalid-key",
        "Invalid API key or authentication failed",
        _after_start(_K_AUTH),
        "A reply that opens as an error and says the credentials were refused (invalid_api_key, "
        "authentication_error, Unauthorized).",
        "auth",
        False,
        28,
    ),
    _builtin(
        "auth-invalid-key-zh",
        "无效的 API Key / 身份验证失败 / permission denied",
        _after_start(_K_AUTH_ZH),
        "A reply that opens as an error and says the key was refused, in Chinese (无效的 API Key, 身份验证失败) "
        "or as PERMISSION_DENIED.",
        "auth",
        False,
        28,
    ),
    _builtin(
        "overloaded",
        "Provider overloaded",
        _after_start(_K_OVERLOADED),
        "A reply that opens as an error and says the provider is at capacity (overloaded_error, high demand, "
        "该模型当前访问量过大, 系统繁忙).",
        "overloaded",
        True,
        30,
    ),
    _builtin(
        "rate-limit",
        "Rate limit",
        _after_start(_K_RATE),
        "A reply that opens as an error and says requests are rate limited (rate_limit_exceeded, Too Many "
        "Requests, 速率限制).",
        "rate_limit",
        True,
        32,
    ),
    _builtin(
        "timeout",
        "Timeout",
        _after_start(_K_TIMEOUT),
        "A reply that opens as an error and says the call timed out (read timeout, gateway timeout, "
        "DEADLINE_EXCEEDED, 超时).",
        "timeout",
        True,
        34,
    ),
    _builtin(
        "network",
        "Connection error",
        _after_start(_K_NETWORK),
        "A reply that opens as an error and says the model could not be reached (connection error, refused, "
        "reset, 网络, 连接).",
        "network",
        True,
        36,
    ),
    _builtin(
        "network-socket",
        "Socket, DNS or TLS failure",
        _after_start(_K_SOCKET),
        "A reply that opens as an error and names a socket, DNS or TLS failure (ECONNRESET, ENOTFOUND, "
        "getaddrinfo, SSL).",
        "network",
        True,
        36,
    ),
    _builtin(
        "server-error",
        "Provider server error",
        _after_start(_K_SERVER),
        "A reply that opens as an error and says the provider failed on its side (Internal Server Error, Bad "
        "Gateway, Service Unavailable, api_error).",
        "server_error",
        True,
        38,
    ),
    # --- the same, as the last lines after a partial answer -------------------------------
    _builtin(
        "content-filter-at-end",
        "Content filter / safety block (at the end)",
        _at_end(_K_CONTENT),
        "A reply whose last lines are an SDK or hermes-agent error saying the safety or content filter "
        "refused the request.",
        "content_filter",
        False,
        21,
    ),
    _builtin(
        "quota-at-end",
        "Quota, credits or billing (at the end)",
        _at_end(
            r"insufficient[_ ]\w+|quota|credit|billing|arrear|payment required|resource_exhausted"
            r"|余额不足|欠费|额度|充值",
            "402",
        ),
        "A reply whose last lines are an SDK or hermes-agent error saying the quota, credits or balance are spent.",
        "quota",
        False,
        23,
    ),
    _builtin(
        "model-not-found-at-end",
        "Model or endpoint not found (at the end)",
        _at_end(
            r"model_not_found|model\W[^\n]{0,50}?not (?:found|exist)|no endpoints|(?:invalid|unknown|no such) model"
            r"|invalidendpoint|模型不存在|无可用渠道",
            "404",
        ),
        "A reply whose last lines are an SDK or hermes-agent error saying the model or endpoint does not exist.",
        "model_not_found",
        False,
        25,
    ),
    _builtin(
        "context-length-at-end",
        "Context length exceeded (at the end)",
        _at_end(
            r"context[_ ]length|maximum context|context window|too long|too many tokens|max_tokens"
            r"|payload too large|上下文|长度超",
            "413",
        ),
        "A reply whose last lines are an SDK or hermes-agent error saying the prompt is too long for the model.",
        "context_length",
        False,
        27,
    ),
    _builtin(
        "auth-at-end",
        "Invalid API key (at the end)",
        _at_end(
            r"(?:invalid|incorrect|wrong)[_ ]\S*api[_ ]?key|api key not valid|authenticat|unauthori[sz]ed"
            r"|invalid token|permission[_ ]denied|无效的|身份验证|鉴权|认证失败|令牌",
            "401|403",
        ),
        "A reply whose last lines are an SDK or hermes-agent error saying the API key or credentials were refused.",
        "auth",
        False,
        29,
    ),
    _builtin(
        "overloaded-at-end",
        "Provider overloaded (at the end)",
        _at_end(_K_OVERLOADED, "529"),
        "A reply whose last lines are an SDK or hermes-agent error saying the provider is overloaded "
        "(overloaded_error, 访问量过大).",
        "overloaded",
        True,
        31,
    ),
    _builtin(
        "rate-limit-at-end",
        "Rate limit (at the end)",
        _at_end(_K_RATE, "429"),
        "A reply whose last lines are an SDK or hermes-agent error saying requests are rate limited "
        '("… HTTP 429: Too Many Requests").',
        "rate_limit",
        True,
        33,
    ),
    _builtin(
        "timeout-at-end",
        "Timeout (at the end)",
        _at_end(_K_TIMEOUT, "408|504|524"),
        "A reply whose last lines are an SDK or hermes-agent error saying the call timed out.",
        "timeout",
        True,
        35,
    ),
    _builtin(
        "network-at-end",
        "Connection error (at the end)",
        _at_end(
            r"connect|network|disconnected|econn|enotfound|getaddrinfo|name resolution|ssl|broken pipe"
            r"|fetch failed|网络|连接"
        ),
        "A reply whose last lines are an SDK or hermes-agent error saying the model could not be reached.",
        "network",
        True,
        37,
    ),
    _builtin(
        "server-error-at-end",
        "Provider server error (at the end)",
        _at_end(
            r"internal (?:server )?error|server error|bad gateway|service unavailable|temporarily"
            r" unavailable|api_error|服务器|内部错误|服务(?:暂时)?不可用",
            r"5\d\d",
        ),
        "A reply whose last lines are an SDK or hermes-agent error saying the provider failed on its side "
        '("API call failed after 3 retries: HTTP 503: …").',
        "server_error",
        True,
        39,
    ),
    # --- whole replies that are one provider sentence ------------------------------------
    _builtin(
        "overloaded-sentence",
        "Model or service at capacity",
        _sentence(
            r"(?:the |this |that |selected |requested )?(?:model|server|service|engine|system|provider|api"
            r"|upstream)s?(?: service)? (?:is |are )?(?:currently |temporarily )?(?:at capacity|overloaded"
            r"|under (?:high|heavy) load|experiencing (?:high|heavy) (?:load|demand|traffic)|too busy)"
            r"|overloaded"
        ),
        'A reply that is just the provider saying it is at capacity ("Selected model is at capacity.", "Overloaded").',
        "overloaded",
        True,
        40,
    ),
    _builtin(
        "overloaded-sentence-zh",
        "访问量过大 / 系统繁忙",
        _sentence(
            r"(?:该|此|当前|所选)?(?:模型|服务器?|系统|接口|api|分组)?(?:当前)?(?:上游)?"
            r"(?:访问量过大|繁忙|负载过高|过载|负载已饱和)"
        ),
        'A reply that is just a Chinese provider saying it is busy ("该模型当前访问量过大，请稍后再试", '
        '"访问量过大", "系统繁忙").',
        "overloaded",
        True,
        40,
    ),
    _builtin(
        "rate-limit-sentence",
        "Requests throttled",
        _sentence(
            r"(?:the |your )?(?:requests?|account|organization) (?:\w+ ){0,2}(?:throttled|rate[ -]limited)"
            r"(?: by [\w ]{1,30})?|(?:requests? )?rate limit"
            r" (?:exceeded|reached)|rate[ -]limited|too many requests|rate_limit_exceeded"
            r"|you(?: have|'ve) (?:hit|exceeded|reached) (?:the|your) rate limit",
            r"rate limit reached for \S+ in org|this request would exceed the rate limit"
            r"|open api \w+ request limit",
        ),
        'A reply that is just a throttling notice ("Rate limit exceeded.", "The request was throttled by '
        'the service").',
        "rate_limit",
        True,
        40,
    ),
    _builtin(
        "rate-limit-sentence-zh",
        "请求过于频繁 / 速率限制",
        _sentence(
            r"(?:您的)?(?:提问|请求|访问|调用|操作|发送)(?:太快|过快|过于频繁|太频繁|频率过高|次数过多)(?:啦|了)?"
            r"|(?:您的)?(?:账户|账号)?已达到速率限制|(?:请求|调用)?(?:频率|并发数?)(?:超限|过高)"
            r"|(?:今日)?调用次数已达上限|触发限流",
            r"您当前使用该 ?api 的并发数过高",
        ),
        'A reply that is just a Chinese throttling notice ("提问太快啦", "您的账户已达到速率限制，请您控制请求频率").',
        "rate_limit",
        True,
        40,
    ),
    _builtin(
        "auth-sentence",
        "Invalid API key",
        _sentence(
            r"(?:incorrect|invalid|wrong) (?:\S+ )?api[ -]?key(?: provided)?|api key not valid|invalid x-api-key"
            r"|authentication (?:failed|fails|error|required)|authentication_error|invalid_api_key"
            r"|unauthori[sz]ed"
        ),
        'A reply that is just the provider refusing the key ("Incorrect API key provided: …", '
        '"Authentication Fails, Your api key …").',
        "auth",
        False,
        40,
    ),
    _builtin(
        "auth-sentence-zh",
        "无效的 API Key / 身份验证失败",
        _sentence(
            r"无效的 ?(?:api ?(?:key|密钥)|令牌|token)|api ?(?:key|密钥) ?(?:无效|错误|不正确)(?:或已过期)?"
            r"|令牌(?:无效|已过期)|(?:身份验证|鉴权|认证)失败"
        ),
        'A reply that is just a Chinese provider refusing the key ("无效的 API Key", "身份验证失败").',
        "auth",
        False,
        40,
    ),
    _builtin(
        "network-sentence",
        "Could not connect to the model",
        _sentence(
            r"(?:could not|couldn't|cannot|can't|unable to|failed to) (?:connect to|reach) (?:the )?"
            r"(?:model|server|api|provider|upstream|service|llm|endpoint)"
        ),
        'A reply that is just a connection failure ("Could not connect to Model.").',
        "network",
        True,
        40,
    ),
    _builtin(
        "timeout-sentence",
        "Request timed out",
        _sentence(r"(?:the )?(?:api |model |llm )?(?:request|connection|call)s? (?:has |have )?timed out"),
        'A reply that is just a timeout notice ("Request timed out.").',
        "timeout",
        True,
        40,
    ),
    _builtin(
        "quota-sentence",
        "Out of quota or credits",
        _sentence(
            r"you(?: have|'ve)? (?:exhausted|run out of|used up|exceeded) (?:your |the )?(?:\w+ )?(?:quota"
            r"|credits?)|(?:allocated )?quota (?:exceeded|exhausted)|insufficient[_ ](?:quota|balance)"
            r"|resource has been exhausted|your credit balance is too low",
            r"(?:the )?(?:ai )?provider rejected the request because the api key is out of quota"
            r"|quota exceeded for (?:quota )?metric",
        ),
        'A reply that is just an out-of-quota notice ("You exceeded your current quota, …", "Insufficient Balance").',
        "quota",
        False,
        40,
    ),
    _builtin(
        "quota-sentence-zh",
        "余额不足 / 额度不足",
        _sentence(
            r"(?:您的|当前|该)?(?:api ?(?:key)? ?|账户|账号|用户|令牌|免费|剩余)*额度(?:不足|已用尽|已用完|用尽|用完"
            r"|已耗尽|已达上限)|(?:您的|当前)?(?:账户|账号)?(?:余额不足|已欠费)",
            r"余额不足或无可用资源包|(?:该)?令牌额度已用尽|用户额度不足",
        ),
        'A reply that is just a Chinese out-of-balance notice ("余额不足", "账户余额不足，请充值", '
        '"该令牌额度已用尽").',
        "quota",
        False,
        40,
    ),
    # --- status codes after an error opening: the seed's HTTP 4 / HTTP 5 intents ----------
    _builtin(
        "http-429",
        "HTTP 429 Too Many Requests",
        _status("429"),
        'A reply whose first line is a 429 status ("HTTP 429: …", "Error code: 429"): rate limited.',
        "rate_limit",
        True,
        60,
    ),
    _builtin(
        "http-529",
        "HTTP 529 / 503 overloaded",
        _status("529"),
        "A reply whose first line is Anthropic's 529 status: the API is overloaded.",
        "overloaded",
        True,
        60,
    ),
    _builtin(
        "http-auth",
        "HTTP 401 / 403",
        _status("401|403"),
        "A reply whose first line is a 401 or 403 status: the key or its permissions were refused.",
        "auth",
        False,
        60,
    ),
    _builtin(
        "http-402",
        "HTTP 402 Payment Required",
        _status("402"),
        "A reply whose first line is a 402 status: the account has no credit.",
        "quota",
        False,
        60,
    ),
    _builtin(
        "http-404",
        "HTTP 404 Not Found",
        _status("404"),
        "A reply whose first line is a 404 status: usually an unknown model or endpoint.",
        "model_not_found",
        False,
        60,
    ),
    _builtin(
        "http-413",
        "HTTP 413 Payload Too Large",
        _status("413"),
        "A reply whose first line is a 413 status: the request is too large.",
        "context_length",
        False,
        60,
    ),
    _builtin(
        "http-timeout",
        "HTTP 408 / 504 / 524 timeout",
        _status("408|504|524"),
        "A reply whose first line is a timeout status (408, 504 gateway, 524 Cloudflare).",
        "timeout",
        True,
        60,
    ),
    _builtin(
        "http-5xx",
        "HTTP 5xx server error",
        _status(r"5\d\d"),
        "A reply whose first line is a 5xx status: the provider failed on its side.",
        "server_error",
        True,
        70,
    ),
    _builtin(
        "http-4xx",
        "HTTP 4xx client error",
        _status(r"4\d\d"),
        "A reply whose first line is any other 4xx status: the provider refused the request.",
        "other",
        False,
        80,
    ),
    # --- last resorts -------------------------------------------------------------------------
    _builtin(
        "hermes-api-call-failed",
        "hermes-agent: API call failed after retries",
        _hermes(
            r"api call failed after \d+ retr\w*(?:[:.]|\s*\z)|invalid api response (?:shape|after \d+ retr)"
            r"|non-retryable error|rate limited after \d+ retr"
        ),
        'A reply that starts or ends with hermes-agent\'s "API call failed after N retries: …" naming no '
        "better-known cause.",
        "other",
        True,
        90,
    ),
    _builtin(
        "error-json",
        "JSON error body",
        r"regex:" + _LEAD + r"[\[{\s]*\"(?:error|detail)\"\s*:",
        'A reply that is a provider\'s JSON error body ({"error": …}) with no more specific sign.',
        "other",
        False,
        95,
    ),
]


def builtin_by_key(key: str) -> dict | None:
    """The shipped definition for ``key``, or None."""
    return next((b for b in BUILTINS if b["key"] == key), None)
