"""The pattern matcher (SPEC §3.1, §3.3): pure, plain data in and out, no Django.

``validate_pattern`` checks one pattern's text, ``compile_patterns`` builds an
immutable :class:`Matcher` from rows, and ``Matcher.detect`` judges a reply.
:mod:`patterns.detection` adds the database: which set is enabled now, the
per-process cache and hit counting.

How a matcher works: substring patterns are Unicode-case-folded and put in one
re2 ``Set`` run over the case-folded window; ``regex:`` patterns go into a
second re2 ``Set`` (case-insensitive) run over the original window. Each set
says *which* patterns match in one linear pass whatever their number; only
those candidates, best ``(priority, id)`` first, are then searched one by one
for the exact span. The cost per reply therefore stays nearly flat as the set
grows.
"""

from __future__ import annotations

import bisect
import json
import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import re2

logger = logging.getLogger(__name__)

REGEX_PREFIX = "regex:"

#: A single ``regex:`` pattern whose compiled program is larger than this is
#: refused as too costly (a bounded `.{0,500}` needs about 4,500).
MAX_PROGRAM_SIZE = 20000

#: Memory bound handed to re2 for one pattern (it refuses bigger programs).
_PATTERN_MAX_MEM = 8 << 20
#: Memory bound for the combined sets: their lazily built DFA needs room for
#: a few states of a thousand patterns at once.
_SET_MAX_MEM = 256 << 20


@dataclass(frozen=True)
class Detection:
    """What matched a reply (SPEC §3.3).

    ``span`` is ``(start, end)``, end exclusive, in offsets of the original
    text as given to ``detect`` (characters, not bytes, and before case
    folding).
    """

    pattern_id: int | None
    key: str | None
    name: str
    pattern: str
    category: str
    retryable: bool
    span: tuple[int, int] | None
    #: What decided: ``"pattern"`` (an enabled pattern matched) or ``"blank"``
    #: (the reply is empty or whitespace); a second signal adds its own (§3.3a).
    matched_by: str = "pattern"

    def as_verdict(self) -> dict:
        """The camelCase verdict of the API's POST /detect and ``manage.py detect``."""
        return verdict_json(self)


def verdict_json(detection: Detection | None) -> dict:
    """``{isError, matchedBy, matchedPatternId, matchedPatternKey, matchedPatternName,
    category, retryable, span}`` for a detection, or the all-null "no error" verdict
    (SPEC §3.4). ``matchedBy`` is ``"pattern"``, ``"blank"`` or null."""
    if detection is None:
        return {
            "isError": False,
            "matchedBy": None,
            "matchedPatternId": None,
            "matchedPatternKey": None,
            "matchedPatternName": None,
            "category": None,
            "retryable": None,
            "span": None,
        }
    return {
        "isError": True,
        "matchedBy": detection.matched_by,
        "matchedPatternId": detection.pattern_id,
        "matchedPatternKey": detection.key,
        "matchedPatternName": detection.name,
        "category": detection.category,
        "retryable": detection.retryable,
        "span": list(detection.span) if detection.span is not None else None,
    }


def blank_detection() -> Detection:
    """The verdict on a blank reply (SPEC §3.3): FAILED, category ``incomplete``,
    not retryable, no pattern, ``matched_by="blank"``."""
    return Detection(
        pattern_id=None,
        key=None,
        name="",
        pattern="",
        category="incomplete",
        retryable=False,
        span=None,
        matched_by="blank",
    )


def is_blank(text: str | None) -> bool:
    """True when ``text`` is None, empty or only whitespace, or is an answer envelope with nothing in
    it (:func:`empty_answer_envelope`: ``{"text": ""}``): a reply that carries no answer (SPEC §3.3)."""
    stripped = text.strip() if text else ""
    return not stripped or _document_empty(_json_document(stripped, max_chars=ENVELOPE_MAX_CHARS))


#: What :func:`_json_document` returns for text that is not one JSON document.
_NOT_JSON = object()


def _json_document(stripped: str, *, max_chars: int):
    """``stripped`` (text without surrounding whitespace) parsed as one JSON object or array, or :data:`_NOT_JSON`
    when it is longer than ``max_chars``, is not bracketed as one, or does not parse."""
    if len(stripped) > max_chars or stripped[:1] not in "{[" or stripped[-1:] not in "}]":
        return _NOT_JSON
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return _NOT_JSON


#: Fields of an LLM's answer envelope that hold the answer ("text", OpenAI's message "content", Gemini's "parts" …).
_ANSWER_FIELDS = frozenset(
    {"text", "content", "parts", "output", "output_text", "response", "answer", "completion", "reply", "generated_text"}
)
#: Lists of candidate answers: the envelope is empty when there are none or every one is empty.
_CANDIDATE_FIELDS = frozenset({"choices", "candidates"})
#: Fields that hold a nested answer: OpenAI's choice "message", a stream's "delta", Bedrock Converse's "output".
_MESSAGE_FIELDS = frozenset({"message", "delta"})
#: Fields that must be empty for the envelope to be empty: a refusal, a tool call, audio, annotations.
_MUST_BE_EMPTY_FIELDS = frozenset({"refusal", "tool_calls", "function_call", "tool_use", "audio", "annotations"})
#: The other fields an LLM API's response carries (ids, model, roles, stop reasons, token counts, timings and
#: usage blocks of OpenAI, Anthropic, Gemini, Bedrock, Ollama, llama.cpp, TGI, Replicate and their relays). A field
#: outside these, and outside the answer's, makes the JSON a node's structured output
#: ({"reply": "", "handoff": true, "next_agent": "billing"}), which is an answer, not an empty one.
_ENVELOPE_FIELDS = frozenset(
    {
        "id",
        "object",
        "created",
        "created_at",
        "model",
        "model_version",
        "modelversion",
        "role",
        "index",
        "type",
        "status",
        "usage",
        "usagemetadata",
        "metadata",
        "metrics",
        "timings",
        "logprobs",
        "finish_reason",
        "finishreason",
        "stop_reason",
        "stopreason",
        "stop_sequence",
        "stop",
        "stop_type",
        "stopping_word",
        "done",
        "done_reason",
        "system_fingerprint",
        "service_tier",
        "safetyratings",
        "citationmetadata",
        "avglogprobs",
        "tokens",
        "tokens_predicted",
        "tokens_evaluated",
        "tokens_cached",
        "truncated",
        "generation_settings",
        "prompt",
        "id_slot",
        "provider",
        "api",
        "timestamp",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
        "context",
        "request_id",
        "responseid",
        "x_groq",
    }
)
#: Stop reasons that mean a filter withheld the answer: the envelope is a content filter's verdict, not empty.
_FILTERED = frozenset({"content_filter", "safety", "blocklist", "prohibited_content", "spii", "recitation", "refusal"})
#: The longest reply :func:`empty_answer_envelope` parses.
ENVELOPE_MAX_CHARS = 4000


def empty_answer_envelope(text: str) -> bool:
    """True when ``text`` is an LLM API's response with no answer in it (pure; SPEC §3.3): one JSON object
    (or a list of them, TGI's ``[{"generated_text": ""}]``) with an answer field of :data:`_ANSWER_FIELDS` or a
    ``choices``/``candidates`` list, every answer empty (``""``, whitespace, ``null``, ``[]``, or parts that are
    themselves empty), nothing in :data:`_MUST_BE_EMPTY_FIELDS`, no stop reason of a filter (:data:`_FILTERED`),
    and no field but a response's own (:data:`_ENVELOPE_FIELDS`).

    ``{"text": ""}``, ``{"model": "gemini-2.5-flash", "text": "", "usage": {…}}``, Bedrock's
    ``{"role": "assistant", "content": [], "stopReason": "stop"}``, ``{"choices": []}``: the call returned,
    with no answer in it. ``{"reply": "", "handoff": true}`` (a node's structured output), a message with
    ``tool_calls`` or a ``refusal``, and ``"finish_reason": "content_filter"`` are not empty. Replies over
    :data:`ENVELOPE_MAX_CHARS` are never envelopes.
    """
    return _document_empty(_json_document(text.strip(), max_chars=ENVELOPE_MAX_CHARS))


def _document_empty(parsed) -> bool:
    """True when a parsed JSON document (or :data:`_NOT_JSON`) is an empty answer envelope or a list of them."""
    if isinstance(parsed, list):
        return bool(parsed) and all(isinstance(item, dict) and _envelope_empty(item, depth=0) for item in parsed)
    return isinstance(parsed, dict) and _envelope_empty(parsed, depth=0)


def _envelope_empty(envelope: dict, *, depth: int) -> bool:
    """True when ``envelope`` (a parsed JSON object) has answer, candidate or message fields and all are empty,
    and its other fields are a response's own (:func:`empty_answer_envelope`)."""
    if depth > 4:
        return False
    found = False
    for key, value in envelope.items():
        name = str(key).lower()
        if name in _ANSWER_FIELDS or name in _CANDIDATE_FIELDS or (name in _MESSAGE_FIELDS and isinstance(value, dict)):
            found = True
            if not _answer_empty(value, depth=depth):
                return False
        elif name in _MUST_BE_EMPTY_FIELDS:
            if value not in (None, "", [], {}):
                return False
        elif name not in _ENVELOPE_FIELDS:
            return False
        elif isinstance(value, str) and value.strip().lower() in _FILTERED:
            return False
    return found


def _answer_empty(value, *, depth: int) -> bool:
    """True when an answer field's or a candidate list's ``value`` holds no answer."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    if isinstance(value, list):
        return all(isinstance(item, dict) and _envelope_empty(item, depth=depth + 1) for item in value)
    if isinstance(value, dict):
        return _envelope_empty(value, depth=depth + 1)
    return False


# --- validation ---------------------------------------------------------------------------


def _regex_options(*, max_mem: int = _PATTERN_MAX_MEM) -> re2.Options:
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = max_mem
    options.log_errors = False
    return options


class PatternRefused(ValueError):
    """A pattern text that may not be stored (SPEC §3.1).

    ``code`` names the rule (a key of :data:`REFUSALS`), ``params`` fill its
    sentence; ``str()`` is the English sentence. ``patterns.models`` turns it
    into a translated validation error for forms, serializers and the admin.
    """

    def __init__(self, code: str, **params):
        self.code = code
        self.params = params
        super().__init__(REFUSALS[code] % params)


#: The sentence of each refusal, with ``%(name)s`` placeholders (English;
#: ``patterns.models.PATTERN_REFUSALS`` holds the same sentences for translation).
REFUSALS = {
    "empty": "The pattern is empty; give a substring or regex:<expression>.",
    "empty_regex": "The regular expression after regex: is empty.",
    "too_costly": "The regular expression is too costly to run (re2 says: %(detail)s); simplify it.",
    "invalid_regex": (
        "The regular expression does not compile (re2 says: %(detail)s). "
        "Backreferences and lookarounds are not supported."
    ),
    "too_many_instructions": (
        "The regular expression is too costly to run (%(size)d instructions, at most %(limit)d); "
        "simplify it or use fewer repetitions."
    ),
    "matches_empty": "The regular expression matches empty text, so it would flag every reply.",
    "matches_ordinary": "The pattern matches the ordinary answer “%(answer)s”, so it would flag good replies.",
}

#: Plain replies no pattern may match (SPEC §3.1): a pattern that matches one
#: of them (``regex:.``, ``regex:\\b``, a common word) would fail good runs.
#: They hold no error vocabulary, so every shipped phrase passes.
ORDINARY_ANSWERS = (
    "OK",
    "Done.",
    "Yes",
    "42",
    "The report is ready: three sections, twelve pages.",
    "Here is the summary:\n- Revenue grew 12%\n- Costs were flat",
    "I updated the configuration and restarted the service.",
    "Thanks! Let me know if you need anything else.",
    '{"result": "ok", "items": [1, 2, 3]}',
    "```python\nprint('hello')\n```",
    "好的，已完成。",
    "报告已生成，共三页。",
)


def _compile_regex(source: str):
    """Compile one ``regex:`` body with re2, or raise :class:`PatternRefused`."""
    try:
        compiled = re2.compile(source, _regex_options())
    except re2.error as exc:
        message = exc.args[0] if exc.args else ""
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        if any(sign in message for sign in ("too large", "too big", "repetition size")):
            raise PatternRefused("too_costly", detail=message) from None
        raise PatternRefused("invalid_regex", detail=message) from None
    if compiled.programsize > MAX_PROGRAM_SIZE:
        raise PatternRefused("too_many_instructions", size=compiled.programsize, limit=MAX_PROGRAM_SIZE)
    if compiled.search("") is not None:
        raise PatternRefused("matches_empty")
    return compiled


def validate_pattern(text: str) -> None:
    """Check a pattern's text before it is stored (SPEC §3.1).

    Raises :class:`PatternRefused` (a ``ValueError``) when the text is empty
    or blank, when a ``regex:`` body is empty, does not compile on re2 (for
    instance a backreference), is refused as too costly, matches empty text,
    or matches one of :data:`ORDINARY_ANSWERS` (wherever it sits: the check
    ignores scope; the refusal names the answer).
    """
    if text is None or not str(text).strip():
        raise PatternRefused("empty")
    if text.startswith(REGEX_PREFIX):
        source = text[len(REGEX_PREFIX) :]
        if not source.strip():
            raise PatternRefused("empty_regex")
        compiled = _compile_regex(source)
        matched = next((answer for answer in ORDINARY_ANSWERS if compiled.search(answer) is not None), None)
    else:
        folded = text.casefold()
        matched = next((answer for answer in ORDINARY_ANSWERS if folded in answer.casefold()), None)
    if matched is not None:
        raise PatternRefused("matches_ordinary", answer=matched.replace("\n", " ")[:60])


# --- where an error sits (SPEC §3.3): the detector's vocabulary, tested once ---------------

#: Scopes of a pattern (SPEC §3.1, §3.3).
SCOPE_ERROR = "error"
SCOPE_ANYWHERE = "anywhere"
SCOPES = (SCOPE_ERROR, SCOPE_ANYWHERE)

#: How far, in characters, an opening's message runs past the opening.
OPENING_REACH = 400
#: A phrase at least this long that starts the reply is the message itself
#: (hermes-agent's sentences); a shorter one must end the way messages end.
LONG_PHRASE_CHARS = 30

#: A few leading symbols (emoji, brackets, bullets, bold marks) but no quote,
#: backtick or blockquote: a quoted or fenced error is an answer about an error.
_LEAD = r"[^\pL\pN`\"“'>\n]{0,6}"
#: Where a provider sentence may start: after the lead and a bare 4xx/5xx status ("429 余额不足，请充值。", "403 — Key
#: limit exceeded") or a snake_case code ("insufficient_quota 当前分组上游负载已饱和，请稍后再试": the message's cause
#: beats its code).
#: Not after an article: "The quota resets at midnight." is prose; a built-in names its own "(?:the )?".
#: A built-in names the subject a Chinese sentence opens with ("(?:引擎|服务)?内部错误"): a general subject lead
#: made status lines ("当前额度充足。", "模型超时重试 3 次后成功。") read as messages.
_SENTENCE_LEAD = _LEAD + r"(?:[45]\d\d[ :：—–-]+|(?:(?:非常|很)?抱歉|对不起)[，,] ?|(?-i:[a-z]+(?:_[a-z]+)+) )?"
#: Or after the lead, a one-word name and a colon (a model's or a tool's: "deepseek/deepseek-v4-flash: stream
#: ended before …", "[undefined]: Insufficient Balance"), a Chinese word for a failure ("翻译中断：该模型目前…
#: 过载", "会话处理异常:You didn't provide an API key.") or a code it returned ("MiniMax 接口返回 1008：余额不足"), when a letter follows ("Total: 499 USD." is a
#: figure), or a stream cut short or a failed call that names its cause ("stream disconnected before completion: An
#: error occurred while processing your request", 'Error communicating with OpenAI: "Rate limit reached …"'), gpt_academic's
#: "[Local Message] " or a failure that gives its reason ("Something went wrong during completion. Reason: …"). The sentence must still go on the way provider messages go on
#: (:func:`sentence_goes_on`): "Summary: rate limit exceeded twice today, both retried" is a report.
_NAMED_SENTENCE_LEAD = (
    _LEAD
    + r"(?:[\w./@\[\]-]{1,40}(?:: |：)|\p{Han}{0,8}(?:中断|失败|出错|异常|超时)[:：] ?"
    + r"|stream (?:disconnected|closed|ended) before(?: completion)?[:：] ?"
    + r"|error (?:when |while )?(?:communicating with|calling|connecting to) [^:：\n]{1,30}[:：] ?[\"“]?"
    + r"|\[local message\] ?|[^\n.:]{0,40}?(?:went wrong|failed|error|can't invoke)[^\n.:]{0,40}?[.,]? reason[:：] ?['\"]?"
    + r"|[\w\p{Han} .-]{0,24}?(?:返回码?|错误码|错误代码|状态码) ?\d{3,6} ?[:：] ?)"
)
#: A bare status and a JSON body ("400 {"type":"error","error":{"message":"prompt is too long: …"}}"): the body is
#: the error's message, where the provider's words may stand anywhere.
_STATUS_BODY = _LEAD + r"[45]\d\d[ :-]*[{\[]"

#: An error label in any dress: up to two words, a token ending in an error noun,
#: up to two qualifiers ("from X", "in thread", a status code, "(…)", a full-width bracket with a code: "（错误码
#: 1026）"; not "handling", nor Chinese ones: "错误原因：第 42 行…" and "错误信息：无。" open explanations and
#: reports), closing marks,
#: then ":", a newline, "(" or ",":
#: "Error:", "[Error]:", "**Error:**", "API Error (", "Upstream error from X:",
#: "openai.RateLimitError:", "错误：", "[Agent运行错误]:", "Something went wrong:". A bare "detail"
#: needs ":", "(" or a newline: "… test client: list, detail, create" is a list, not a label. A label
#: that ends with a comma is a lone token ("error, status code: 429", '{"object":"error",'): after
#: words or a qualifier it is prose ("Reading the error, …", "catch FooException from Bar, …"), and so is a run of
#: more than eight Chinese characters before the noun ("翻译失败，…" is a label; "这句话对应的是接口返回了限流类错误，…" a sentence).
_QUALIFIERS = (
    r"[\]*]*(?: (?:from|in|on|at|while|calling|during|for|occurred|details?|message|code|text|response|type)\b"
    r"(?: [^\s:：]+)?| \d{3}\b| \([^)\n]{0,40}\)| ?（[^）\n]{0,20}?\d{3}[^）\n]{0,20}）){0,2}[\"\]*]* ?"
)
_NOUN = r"(?:error|exception|failure|错误|失败|报错|出错|ошибка|wrong)"
_LABEL = (
    r"(?:[\pL\[]\S* ){0,2}[\pL\pN._\[{\"':,]*?(?:"
    + _NOUN
    + _QUALIFIERS
    + r"[:：\n(]|detail"
    + _QUALIFIERS
    + r"[:：\n(])|(?:[^\P{L}\p{Han}\s]|[\pN._\[{\"':,]|\p{Han}{1,8}(?:[^\P{L}\p{Han}\s]|[\pN._\[{\"':,]))*?\p{Han}{0,8}"
    + _NOUN
    + r"[\"\]*]*[，,]"
    # A dash after a label with a word or code before its noun ("接口响应错误 - Too Many Requests", "NotFoundError -
    # Error code: 404", "客户端错误 402 - Insufficient balance"); a bare "Error – …" is as often a heading of prose.
    + r"|(?:(?:[\pL\[]\S* ){1,2}[\pL\pN._\[{\"':,]*?|[\pL\pN._\[{\"':,]+?)"
    + _NOUN
    + _QUALIFIERS
    + r" ?[-–—] "
)
#: Exception names of any suffix: a dotted path ending in a CamelCase name
#: ("google.api_core.exceptions.ResourceExhausted:", "httpx.ReadTimeout:") or a
#: bare CamelCase name with a failure suffix.
_EXCEPTION = (
    r"(?-i:(?:[a-z_]\w*\.)+[A-Z]\w*|[A-Z]\w*(?:Error|Exception|Exhausted|Timeout|Exceeded|Unavailable|Denied"
    r"|NotFound|Failure))[:(]"
)
#: Retry and transport wrappers (hermes-agent, SDKs, LangChain, axios, urllib3, Go's net/http; "LLM call failed:",
#: "create chat completion failed:", not "Run failed:" nor "Tests failed:", which CI reports open with;
#: 'Post "https://…": context deadline exceeded', "Failed to get response from OpenAI …"), and an
#: error chain: a first line that starts with a failure ("Failed to get answer"), then a "Caused by:" line
#: (Rust's anyhow, Java's stack traces); a commit message or a postmortem's "Caused by:" is prose.
_WRAPPER = (
    r"(?:\w+ ){0,3}failed after \d+ \w+[:.]|invalid api response|retrying \S+ in"
    r"|(?:(?:\w+ )?(?:api|http|upstream|provider|llm|model) )?request failed with"
    r"|(?:llm|api|model|chat|completion|generation|inference)(?: \w+){0,2} (?:call |request )?failed[:：]"
    r"|(?:failed|unable|could not|cannot|exception)\b[^\n]{0,80}\n\s*caused by:"
    r"|failed to get (?:an? )?(?:\w+ )?response from"
    r"|response status code does not indicate success:|server returned http response code:"
    r"|received (?:a )?non-2\d\d (?:status|response)(?: code)?"
    r"|\w*pool\(|❌|✕|✖|⛔|🚫|(?:get|post|put|patch|delete) \"https?://[^\"\s]{1,200}\":"
)
#: The first word of an HTTP reason phrase after a bare status ("503 Service Unavailable", "429 Too Many
#: Requests", "529 Overloaded"), so that "404 Hamilton Ave," and "Total: 499 USD." are no status lines.
_REASON_WORD = (
    r"(?:Bad|Not|Too|Service|Internal|Gateway|Request|Unauthorized|Forbidden|Payment|Unavailable|Error|Timeout"
    r"|Conflict|Gone|Unprocessable|Precondition|Method|Length|Upgrade|Network|Client|Server|Overloaded|Unknown"
    r"|Insufficient|Locked|Failed|Misdirected|Variant|Loop|Proxy|Rate|Quota|Model|Invalid|Authentication)\b"
)
#: Status lines: "HTTP 429:", "status code: 429,", "状态码：503", "Error code: 400 -",
#: "unexpected status 403 Forbidden:", "429 RESOURCE_EXHAUSTED.", "503 Service Unavailable", a bare
#: status then a quoted message or a body ('429 "Your team …"', '403 {"error": …'), DashScope's
#: "<400> InternalError.Algo.DataInspectionFailed:",
#: but not "HTTP 503 Service Unavailable is what a load balancer returns" nor a success ("HTTP 200, …"), nor a
#: figure ("Status: 100% complete", "status: 1000 rows"), nor a
#: URL that ends in three digits ("Opened PR: https://github.com/acme/web/pull/431": "http" takes no "://").
_STATUS = (
    r"(?:\w+ )?(?:http[^\s/:]*(?:/[\d.]+)?|status(?: ?code)?|error(?: code)?|状态码) ?[:：=(]? ?\[?[1345]\d\d"
    r"(?-i:(?: [A-Z][\w-]*)*) ?(?:[^\s\pL%\d]|$)"
    r"|\[?[45]\d\d(?:(?-i: [A-Z_]{4,})\b|(?-i: " + _REASON_WORD + r"(?: [A-Z][\w-]*)*) ?(?:[^\s\pL]|$)"
    r"| (?:provider returned|too many)| (?:- )?[\"{])"
    r"|<[45]\d\d> ?(?-i:[A-Z]\w*[.:])"
)
#: A JSON or Python value that says something (matched case-insensitively): a non-empty string, object or
#: list, a number other than 0, true, a name other than null, none or false. ``"error": null`` reports no error.
_NOT_A_STRING = "[{\\[]\\s*[^\\s}\\]]|[^\\s\"'{\\[nf0]|n[^uo]|f[^a]"
NON_EMPTY_VALUE = "(?:[\"'][^\"']|" + _NOT_A_STRING + ")"
#: :data:`NON_EMPTY_VALUE` that is not the string "none" or "n/a" either: what an error body's opening needs
#: ('{"job": "backup", "error": "none"}' and '{"error": "N/A"}' report no error). The built-ins that follow the
#: opening use the shorter form: where no opening is found they do not match.
_SAYS_SOMETHING = (
    "(?:[\"'](?:[^\"'n]|n(?:[^o/\"']|o(?:[^n\"']|n(?:[^e\"']|e[^\"'])))|n/(?:[^a\"']|a[^\"']))|" + _NOT_A_STRING + ")"
)

#: Error bodies printed as JSON or as a Python dict ({"error": …, {'detail': …, MiniMax's {"base_resp": …; an empty
#: value — null, false, 0, "", [], {} — is a record that had no error: {"status": "success", "error": null},
#: Baidu's {"error_code": …, "error_msg": …), a body whose "message" is an error ('{"message":"API error
#: occurred: Status 429 …'), and Gemini's answer blocked for safety ('{"promptFeedback": {"blockReason":
#: "SAFETY"', '"finishReason": "SAFETY"') or cut off ('"finishReason": "MAX_TOKENS"'; not OpenAI's "length", which
#: a log-triage table lists beside "stop");
#: a "STOP" finish is an answer. A node's JSON output is no error body for carrying a code, a status or a message
#: ('{"code": 404, "message": "Order 88123 not found"}', '{"status": 503, "url": …, "healthy": false}').
_BODY = (
    r"[\[{](?s:.){0,30}?[\"'](?:error(?:_code|_msg)?|detail|base_resp)[\"']\s*:\s*"
    + _SAYS_SOMETHING
    + r"|\{\s*[\"']message[\"']\s*:\s*[\"'](?:"
    + _LABEL
    + "|"
    + _STATUS
    + r")|[\[{](?s:.){0,200}?[\"'](?:finish|block)_?reason[\"']\s*:\s*[\"'](?-i:SAFETY|PROHIBITED_CONTENT|BLOCKLIST|SPII|MAX_TOKENS)\b"
)

#: A log line's level and time ("[ERROR] 2023-12-27 23:43:12 ", loguru's "2025-03-07 15:41:02.741 | ERROR    | ").
_LOG_STAMP = (
    r"(?:\[(?:error|err|warn|warning)\] )?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"(?:\| ?(?:error|warning|warn|critical) *\| )?|\[(?:error|err|warn|warning)\] "
)
#: A log line's level, time and source, each optional (the source: loguru's "app.llm:ask_tool:260 - "). An
#: opening after a level or a time counts only when the reply is nothing but log lines (:func:`log_lines_only`).
_LOG_PREFIX = r"(?:" + _LOG_STAMP + r")?(?:[\w.]+:\w+:\d+ - )?"

#: Where an opening may start: the reply's start, a few symbols, an optional "Something: " prefix that, like the
#: lead, does not open with a quote mark or a backtick ("`[Agent Request] Error: …` 是…返回的 400" quotes an error).
_OPENING_START = r"^" + _LEAD + r"(?:[^\n:：`\"“'>][^\n:：]{0,39}[:：] ?)?" + _LEAD
#: The opening of a reply that is an error, after an optional "Something: " prefix.
_OPENING = _OPENING_START + _LOG_PREFIX + r"(?:" + "|".join((_LABEL, _EXCEPTION, _WRAPPER, _STATUS, _BODY)) + r")"

#: A quote mark opened after a word (group 1 is the mark): 'Q: What does "Error: …', 'That
#: `RateLimitError:', 'Glossary entry — `{"error": …', '问：“relay error'. A quote right after a key's
#: colon ('Error { code: "ThrottlingException"') is part of an error, and so are a quoted URL (Go's
#: 'Post "https://…": …') and single quotes (Python's "<class 'x.Error'>"); a quote that closes
#: again before the error's opening ends names something ('Agent "researcher" failed: …').
_QUOTE_MARK = r"\pL[\s：(（—–-]+([`“「\"])"
#: The closing mark of each opening mark that differs from it.
_CLOSING_MARKS = {"“": "”", "「": "」"}

#: The start of a reply that quotes something after a few words; group 1 is the quote mark.
_QUOTE_START = r"^[^\n]{0,60}?" + _QUOTE_MARK

#: A heading that opens a glossary or reference entry ("Glossary entry — `Error code: 429 …`", "Term: …",
#: "术语解释 —— …", "名词解释：…", "额度说明：…", "限流说明：…"), a diagnosis or a note ("Diagnosis: …",
#: "Note: …", "Example: …", "诊断：…", "排查结果：…", "注意：…", "示例：…") or a translation ("Translation: …", "以下是中文翻译：…",
#: a locale's string: "zh-CN: 加载评论失败，请稍后再试").
_TERM_HEAD = (
    r"(?:glossary(?: entry)?|terms?|definitions?|explanation|术语(?:解释)?|名词解释|释义|词条|\p{Han}{1,6}说明"
    r"|diagnosis|note|example|heads-up|translation|(?:zh|en|ja|ko|fr|de|es|ru|pt|it)(?:[-_][a-z]{2,4})?|(?:以下是)?\p{Han}{0,4}(?:翻译|译文)(?:结果|如下)?"
    r"|诊断|排查结果|排查结论|结论|状态报告|周报|日报|总结|注意|示例|\p{Han}{1,6}设置"
    r"|\p{Han}{0,8}(?:速查|字典|摘录|对照表|一览)表?)\s*[:：—–-]"
)
#: A question heading: a question word and a few more words before the colon ("为什么改了还报错：…", "Why it still
#: fails: …"; not a bare "Why:" nor a name such as "Why Bot:").
_QUESTION_HEAD = r"(?:为什么|为何|为啥|怎么|怎样|如何)[^\n:：]{2,40}[:：]|(?:why|how) [^\s:：]+ [^\n:：]{1,40}[:：]"
#: Either heading at the reply's start: the reply defines or explains an error rather than being one. Not a Markdown
#: heading: an app may put its error in one (CodeRabbit's "## Rate limit exceeded").
#: A report's heading: a few words ending in a report word, then a colon ("Quota planning note: 37 plans in use …",
#: "Incident summary: …"), or a Chinese report's title on a line of its own, optionally with its period
#: ("网络性能监控周报（第 32 周）", "【周报】…"). Not when the words say the task failed ("Failed to generate summary:",
#: "Error report:", an app's "错误报告："), nor when an error opens right after it (:func:`opens_with_a_heading`).
#: Python's re (a lookahead), on the reply's first 200 characters.
_REPORT_HEAD_RE = re.compile(
    r"\W{0,3}(?:(?!(?:error|exception|failure|crash|bug|failed|unable|cannot|could)s? )[\w'-]+ ){1,3}"
    r"(?:note|notes|summary|report|overview|review|update|digest)\s*[:：—–-]"
    r"|\W{0,3}(?:[\u4e00-\u9fff]{0,12}(?:周报|日报|月报|总结|汇总)|[\u4e00-\u9fff]{0,11}[^\W\d_误败错]报告)"
    r"(?:（[^）\n]{0,20}）|\([^)\n]{0,20}\))?[ \t]*\n"
    r"|\W{0,3}(?P<title>【[^】\n]{0,10}(?:周报|日报|月报|报告|总结|汇总)】)",
    re.I,
)
#: A reference table's header row with a column of meanings ("| status_code | 含义 | 处理 |", "| Code | Meaning |").
_TABLE_HEAD = r"[^\n]{0,60}?\|\s*(?:含义|说明|释义|解释|原因|meaning|description|explanation|cause)\s*\|"
_GLOSSARY_HEAD = r"^\W{0,3}(?:" + "|".join((_TERM_HEAD, _QUESTION_HEAD, _TABLE_HEAD)) + ")"

#: What follows a label when the line is a glossary entry or an explanation, or says there was none
#: ("Error message: none. All 12 tasks succeeded.", "错误：无。", '{"error": "none", "rows": 1200}').
_DEFINITION = (
    r"\s*(?:指|是指|表示|意思是|即|means?\b|refers? to|occurs? when|happens? when|is (?:an?|the|when|what)\b"
    r"|[\"'](?:none|n/a|null)?[\"']|(?:none|nothing|n/a|null|no errors?)\b|(?:fixed|resolved)[.。!]|无[。.，,；;\s]|没有)"
)

#: Words that explain what an error means ("… does not always mean you sent too many requests", "这不是限流而是
#: 套餐问题", "表示上游响应超时"), refer to the message they follow ("That is the message OpenAI returns …", "— that's
#: OpenAI's generic 500 text", "：这是…返回的 402 提示") or report that it was dealt with ("I fixed …", "调用恢复正常",
#: "今天未再出现"), or follow an error's closing bracket to say what it shows ("…（http status code: 429）说明 OCI
#: 做了限流", "{"detail":"Not Found"} 是本地服务返回的 404"): after a label, and anywhere in a one-sentence reply's
#: head, they make the reply an answer about an error, not the error. Provider messages explain how to go on, not what they mean ("Did you mean …?" is no
#: explanation). Chosen on the folds: no failed reply there carries one.
_EXPLAINS = (
    r"\b(?:means|meaning|(?:errors?|codes?|statuses|messages?) mean|does not (?:always )?mean|do not treat|actually|root cause|the real (?:error|cause))\b"
    r"|这不是|而是|表示|意味着|一般有|一般是|并不是|真正的|的原因是|根本原因|\s→\s|——\s*(?:这是|已改为|改为|译为)"
    r"|\bthat(?:'s| is) (?:the|what|\w+'s) (?:[\w-]+ ){0,2}(?:message|error|text|status|code)\b|\b(?:this|it) happens when"
    r"|\b(?:is|are) (?:returned|raised|thrown|sent|shown) (?:when|if|whenever)\b|\boccurs? (?:when|whenever)\b"
    r"|\b(?:is|was) caused by\b|\busually (?:due to|means|caused|happens)\b|\bresolved at\b|\bno action needed|\bI (?:fixed|added|removed|stripped|changed|re-?ran"
    r"|updated|restarted|raised)\b|\s[—–]\s[^\n]{0,30}?\b(?:this|that|it) (?:is|'s|means)\b"
    r"|含义是|意思是|什么意思|指的是|是因为|怎么办|怎么解决|如何解决|\bhow (?:do I|to|can I) (?:fix|solve|resolve)\b|[:：—]\s*这是|(?:重试|调用|请求)成功|恢复正常|已(?:更正|修复|解决)|出现这句|未再出现"
    r"|(?:出现|遇到)(?:这个|此|该)?(?:错误|提示|报错)?时|(?:这条|此|该)(?:提示|报错|错误)(?:说明|表示)|——\s*\p{Han}{1,6}[:：]"
    r"|[）)\]}][，,]?\s*说明[^:：]|[}\]]\s*是\p{Han}"
)

#: A label's message that describes rather than reports: a lowercase "the" and a verb of being or duty within a
#: few words ("Server error: the 500 with code model_load_error is lemonade's wrapper …", "429 Too Many Requests:
#: the client is being rate limited", "Billing error: the annual plan was charged …"). A provider's message after a
#: label reports what happened ("HTTP 400 Bad Request: the request exceeds the available context size").
_DESCRIBES = r"\s*(?-i:the) [a-z0-9][\w'’-]*(?: [\w`'’.,()-]+){0,6}? (?:is|are|was|were|must|should)\b"

#: A status or an error's name, an em dash, and a description: a glossary line or a triage note ("401 Unauthorized —
#: the API key is missing or wrong.", "503 Service Unavailable — the upstream was down for 4 minutes"), however short.
#: A provider's message after a dash reports or tells what to do ("… — Invalid request: …", "… – check your API key").
_DASH_DESCRIBES = r"\s?(?:—|——)" + _DESCRIBES

#: A reply that opens with a condition ("如果获取失败，请稍后再试", "If the request failed: …") gives advice about a
#: failure; its "…失败，" is no error's label.
_CONDITIONAL = r"\W{0,3}(?:如果|若是?|假如|要是|一旦|万一|if )"

#: An answer's closing remark on an error it reported ("HTTP 429: explained, no bug in Cline.", "HTTP 500: one
#: occurrence, retried fine", "HTTP 401: key problem, not a robin problem."): an error block or a last paragraph
#: that says one of these is no error (no failed reply in the folds says them).
_TAIL_COMMENT = (
    r"\b(?:explained|no bug|not an? (?:\w+ )?(?:bug|problem|issue)|retried (?:fine|ok|successfully)"
    r"|one occurrence|seen (?:once|twice)|harmless)\b"
)

#: The start of a line after a partial answer: a few emoji (⚠️, ❌, ⏱️) but no quote,
#: backtick, blockquote, bullet, table bar, heading mark or list number.
_TAIL_LEAD = r"[\p{So}\pM]{0,3} ?"
#: Strong openings that prose does not start a line with.
_TAIL_OPENING = (
    r"(?:\w+ ){0,3}failed after \d+ \w+[:.]|invalid api response after|http \d{3}:|\[?\**(?:api )?[\w.]*(?:error|exception)"
    r"(?: code)?\]?\**(?::|:? ?\(?\d{3}\b)|\{\s*[\"'](?:type[\"']:\s*[\"'])?error[\"']|[45]\d\d [A-Z_]+\. \{|错误[:：]"
    r"|请求失败|" + _EXCEPTION + r"|❌|✕"
)
#: An error block: its line, then only JSON or indented continuation lines, to the end.
_TAIL_BLOCK = r"(?m:^)" + _TAIL_LEAD + r"(?:" + _TAIL_OPENING + r")(?:[^\n]|\n[ \t{}\"\]'])*\s*\z"

#: Words after a phrase that make it the subject of prose ("Rate limit exceeded errors
#: are retried", "余额不足时…", "该模型当前访问量过大的原因是…"), an " = " that defines it ("524 = origin timeout"), a
#: count ("接口超时 2 次。") or a noun the phrase names ("Invalid authentication attempts this week: 0.", "服务器过载告警…",
#: "引擎内部错误日志已归档", "error rate"), or an arrow that maps it ("提交失败，请稍后再试 → Submission failed").
_CONNECTOR = (
    r"[\s,，—–-]*(?:=\s|→|->|=>|\d+\s*次|errors?\b|attempts?\b|alerts?\b|logs?\b|warnings?\b|metrics?\b|rates?\b|summary\b|reports?\b|overview\b|breakdown\b|statements?\b|is\b|are\b|was\b|were\b|means?\b|can\b|could\b|should\b|will\b|would\b|may\b"
    r"|might\b|happens?\b|occurs?\b|usually|typically|often|when\b|if\b|because|which\b|refers?\b|indicates?\b"
    r"|的|时|是|通常|表示|指|意味|一般|可能|会|可以|问题|原因|情况|这|等|告警|报警|日志|提示|指标|率|汇总|报告|概览|明细)"
)
#: Verbs of prose inside the rest of a short sentence, and of a report ("Rate limit raised to 500 RPM", "网络已恢复正常").
_PROSE = (
    r"\b(?:is|are|was|were|be|been|means?|can|should|will|would|could|may|might|do|does|did|has|have|had"
    r"|happens?|occurs?|because|since|which|who|yesterday|today|now|also|just|still|already|we|our|i|my|vs|versus"
    r"|raised|increased|decreased|lowered|updated|fixed|resolved|restored|recovered|enabled|added|removed|changed"
    r"|adjusted|bumped|rotated|renewed|completed|finished|succeeded|passed|approved|merged|deployed|migrated"
    r"|lifted|reset|extended|topped|redesigned|documented|closed|muted|located|configured|scheduled|set)\b"
    r"|的|时|是|会|可以|通常|默认|我们|已经|恢复正常|(?:设置?|改|调整|调|降|升|提高)[为到]"
    r"|已(?:恢复|修复|解除|提升|调整|更新|完成|处理|解决|上调|下调|扩容|放开|关闭|开启|定位|去掉|移除|重新|上线|切换|加入|配置)"
)
#: How provider messages go on after a sentence ends.
_GOES_ON = (
    r"(?:please|pls\b|try|retry|wait|check|you|your|top up|contact|visit|see\b|for (?:more|details)|learn|either\b"
    r"|request id|upgrade|add\b|go to|switch|likely|send|use\b|reduce|increase|请|您|稍后|详情|如有|已被(?:系统)?(?:拦截|屏蔽))"
)
#: Details after ":" in a provider message (not a definition: "余额不足：指…").
_DETAIL = r"(?:" + _GOES_ON + r"|[\d\"'“{\[(<]|https?:|(?-i:[A-Z]{2,})|sk-|\S*[_\d])"
#: What may follow a closed bracket after a short provider sentence's phrase: the end, a line break, another
#: bracket, a stop, a comma before how provider messages go on, details after a colon, "after 3 retries".
_END_AFTER_BRACKET = (
    r"\s*(?:\z|\n|[(（\[]|请|您|[.!。！?？…]|[,，;；]\s*" + _GOES_ON + r"|[:：]\s*" + _DETAIL + r"|after \d+ )"
)
#: The end of a short provider sentence, tried right after the phrase: the reply's end, a stop and then how
#: provider messages go on, a comma and a last short clause naming a failure ("服务暂时不可用，第三方响应错误"), details
#: after a colon, or a bracket ("(code 1113)", "（错误码 1113）") that closes
#: and is followed by :data:`_END_AFTER_BRACKET` ("参数有误（第 3 行），已改成…" is a report). Not a question mark:
#: "Rate limited? Wait 60 seconds and retry." is an FAQ's heading.
_SENTENCE_END = (
    r"\s*(?:\z|请|您|[.!。！,，;；…]+\s*(?:\z|"
    + _GOES_ON
    + r")|[，,]\s*[^\n，,。.!！?？]{0,16}?(?:错误|失败|异常)[。.!！]?\s*\z|[(（\[][^)）\]\n]{0,120}[)）\]]"
    + _END_AFTER_BRACKET
    + r"|[:：]\s*"
    + _DETAIL
    + r")"
)
#: The rest of the phrase's sentence (a few words, no line break), before its end. Not past a comma:
#: "余额不足，已自动切换到备用账户并完成任务。" and "Timed out, retried and finished." are reports.
_SENTENCE_REST = r"(?:\d[:：]\d|[^\n.!?。！？,，;；:：(（\[]){1,100}"


#: A value with a preposition right after the phrase's colon: a spec or glossary line ("Rate limit: 60 requests
#: per minute per key.", "Timeout: 30 s for each call", SPEC §3.3), not a provider's detail ("Insufficient
#: balance: 0.00 CNY. Please recharge.").
#: A short bracket a spec line may put before its colon ("Rate limit exceeded (GitHub API): 5,000 requests per hour").
_BEFORE_COLON = r"\s*(?:[(（][^)）\n]{0,40}[)）]\s*)?"
_SPEC_VALUE = _BEFORE_COLON + r"[:：]\s*[$€£¥]?\d[^\n.。!！?？;；]{0,80}?\b(?:per|for|each|of)\b"
#: A colon and a figure or an amount: a spec line's or a record's value ("Rate limit: 100 req/min", "超时：30 秒",
#: "Quota: $180,000."), unless the message then goes on as provider messages do (:data:`_VALUE_GOES_ON`).
_COLON_VALUE = _BEFORE_COLON + r"[:：]\s*[$€£¥]?\d"
#: A colon, a value, then a line that is another "Key: value" (a config or spec block; not "Request ID:").
_SPEC_BLOCK = r"\s*[:：][^\n]{1,80}\n[ \t]*(?:[-*•] )?(?:[^\n:：]{1,40})[:：]\s*\S"
_VALUE_GOES_ON = _BEFORE_COLON + r"[:：]\s*[$€£¥]?\d(?:[^\n.。!！?？;；]|\.\d){0,160}?[.。!！?？;；,，]+\s*" + _GOES_ON


#: A head that names this many different 4xx/5xx statuses is a reference about statuses (a
#: glossary, a table, "400 Invalid Format, 401 Authentication Fails, 402 …"), not one error.
STATUS_REFERENCE_CODES = 3
#: A 4xx/5xx number standing alone (not inside a word, an id or a decimal, nor a stack frame's line and column:
#: "dio_mixin.dart:488:35"). Python's re: the lookarounds are one or two characters wide, so the scan stays linear.
_STATUS_NUMBER_RE = re.compile(r"(?<![\w.:])[45]\d\d(?![\w.]|:\d)")


def _names_many_statuses(head: str) -> bool:
    """True when ``head`` names at least :data:`STATUS_REFERENCE_CODES` different 4xx/5xx statuses."""
    return len(set(_STATUS_NUMBER_RE.findall(head))) >= STATUS_REFERENCE_CODES


# --- compiling ----------------------------------------------------------------------------

#: The enabled set as a whole may hold at most this many compiled instructions
#: (the sum over its ``regex:`` programs): past it the combined sets would need
#: more memory than they are given (SPEC §3.1, §3.3). A thousand ordinary
#: patterns need well under a tenth of it.
MAX_SET_PROGRAM_SIZE = 1_000_000


class SetTooCostly(ValueError):
    """The enabled set as a whole is too costly to compile (SPEC §3.3).

    ``size`` is its total of compiled instructions, ``limit`` the bound
    (:data:`MAX_SET_PROGRAM_SIZE`), or ``size`` is None when re2 itself
    refused to compile the combined set.
    """

    def __init__(self, *, size: int | None, limit: int = MAX_SET_PROGRAM_SIZE):
        self.size = size
        self.limit = limit
        if size is None:
            message = "The enabled patterns together are too costly to compile."
        else:
            message = f"The enabled patterns together are too costly to compile ({size} instructions, at most {limit})."
        super().__init__(message)


@dataclass(frozen=True)
class _Rule:
    id: int
    key: str | None
    name: str
    pattern: str
    category: str
    retryable: bool
    priority: int
    scope: str

    @property
    def order(self) -> tuple[int, int]:
        return (self.priority, self.id)


def _field(rule: Any, name: str, default: Any = None) -> Any:
    if isinstance(rule, dict):
        return rule.get(name, default)
    return getattr(rule, name, default)


def _rule_from(rule: Any) -> _Rule:
    scope = _field(rule, "scope") or SCOPE_ANYWHERE
    return _Rule(
        id=_field(rule, "id") or 0,
        key=_field(rule, "key"),
        name=_field(rule, "name") or "",
        pattern=_field(rule, "pattern") or "",
        category=_field(rule, "category") or "other",
        retryable=bool(_field(rule, "retryable", False)),
        priority=int(_field(rule, "priority", 100) if _field(rule, "priority") is not None else 100),
        scope=scope if scope in SCOPES else SCOPE_ANYWHERE,
    )


class _FoldedWindow:
    """A window of the reply, Unicode-case-folded, with a map back to original offsets.

    Folding can lengthen text ('ß' → 'ss', 'İ' → 'i̇'), so a folded offset is
    mapped back through the start offsets of each original character's folding.
    """

    __slots__ = ("text", "_starts", "_origin")

    def __init__(self, window: str, origin: int):
        folded = window.casefold()
        self.text = folded
        self._origin = origin
        # Each character folds to at least one character: equal lengths mean 1:1.
        self._starts = None if len(folded) == len(window) else self._fold_starts(window)

    @staticmethod
    def _fold_starts(window: str) -> list[int]:
        starts, position = [], 0
        for char in window:
            starts.append(position)
            position += len(char.casefold())
        return starts

    def folded_offset(self, offset: int) -> int:
        """The offset in ``text`` where the original character at ``offset`` (of the reply) starts."""
        if self._starts is None:
            return offset - self._origin
        index = offset - self._origin
        return self._starts[index] if index < len(self._starts) else len(self.text)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        if self._starts is None:
            return (self._origin + start, self._origin + end)
        first = bisect.bisect_right(self._starts, start) - 1
        last = bisect.bisect_right(self._starts, end - 1) - 1
        return (self._origin + first, self._origin + last + 1)


# --- where an error sits --------------------------------------------------------------------


def _vocabulary(source: str):
    return re2.compile(source, _regex_options(max_mem=64 << 20))


_OPENING_RE = _vocabulary(_OPENING)
#: A reply (or a line) that starts as a log line, after the lead and an optional "Something: " prefix.
_LOG_START_RE = _vocabulary(_OPENING_START + r"(?:" + _LOG_STAMP + r")")
_DEFINITION_RE = _vocabulary(_DEFINITION)
_EXPLAINS_RE = _vocabulary(_EXPLAINS)
_TAIL_COMMENT_RE = _vocabulary(_TAIL_COMMENT)
_DESCRIBES_RE = _vocabulary(_DESCRIBES)
_DASH_DESCRIBES_RE = _vocabulary(_DASH_DESCRIBES)
_CONDITIONAL_RE = _vocabulary(_CONDITIONAL)
#: A CamelCase name (an exception's class or a provider's error code) before a colon, case-sensitive:
#: RateLimitError, APIError, ModelNotReadyException, InternalError.Algo.DataInspectionFailed.
_CLASS_NAME_END_RE = re.compile(r"(?:[a-z][A-Z]|[A-Z]{2}[a-z])\w*\W*$")
#: How a provider's message goes on after what happened (a describing label's message does not).
_GOES_ON_LIKE_A_PROVIDER_RE = re.compile(r"(?i)please|retry|try again|请|稍后")
#: A label's describing message at the reply's start must run on this long (characters) to be an answer:
#: "Error: the token is expired" is a provider's message; "Server error: the 500 with code model_load_error
#: is lemonade's wrapper around a llama-server process that exited during startup. Run …" explains one.
#: Chosen on the folds and a breaking set of short provider messages.
DESCRIPTION_MIN_CHARS = 100
_QUOTE_MARK_RE = _vocabulary(_QUOTE_MARK)
#: Words before a quote mark that are an error's label ("错误：", "调用失败：", "Something went wrong: "): the quote holds
#: that error's message rather than quoting an error to talk about it.
_LABEL_THEN_QUOTE_RE = _vocabulary(_LEAD + r"[^\n]{0,24}?" + _NOUN + r"[\]*]* ?[:：] ?\z")
_QUOTE_START_RE = _vocabulary(_QUOTE_START)
_GLOSSARY_HEAD_RE = _vocabulary(_GLOSSARY_HEAD)


def opens_with_a_heading(text: str) -> bool:
    """True when ``text`` opens with a glossary, question or table heading (:data:`_GLOSSARY_HEAD`) or a report's
    heading (:data:`_REPORT_HEAD_RE`) that no error opening follows: a reference or a report, not an error (pure)."""
    if _GLOSSARY_HEAD_RE.match(text) is not None:
        return True
    report = _REPORT_HEAD_RE.match(text[:200])
    # "Meeting summary: Error: This model's maximum context length …", "AI code review: Error 401 …": a task's name.
    if report is None:
        return False
    return report.group("title") is not None or _OPENING_RE.match(text[report.end() :].lstrip()[:200]) is None


_SENTENCE_LEAD_RE = _vocabulary(_SENTENCE_LEAD)
_NAMED_SENTENCE_LEAD_RE = _vocabulary(_NAMED_SENTENCE_LEAD)
_STATUS_BODY_RE = _vocabulary(_STATUS_BODY)
_TAIL_LEAD_RE = _vocabulary(_TAIL_LEAD)
_TAIL_BLOCK_RE = _vocabulary(_TAIL_BLOCK)
_CONNECTOR_RE = _vocabulary(_CONNECTOR)
_PROSE_RE = _vocabulary(_PROSE)
_SENTENCE_END_RE = _vocabulary(_SENTENCE_END)
_SENTENCE_REST_RE = _vocabulary(_SENTENCE_REST)
_SPEC_VALUE_RE = _vocabulary(_SPEC_VALUE)
_VALUE_GOES_ON_RE = _vocabulary(_VALUE_GOES_ON)
_SPEC_BLOCK_RE = _vocabulary(_SPEC_BLOCK)
_COLON_VALUE_RE = _vocabulary(_COLON_VALUE)


@dataclass(frozen=True)
class Region:
    """A part of the reply where a scope-``error`` pattern may match (SPEC §3.3).

    ``[start, end)`` in offsets of the reply. ``lead_end`` is None for an
    error's message (the pattern may occur anywhere in it); otherwise the
    region is a sentence that must *start* with the pattern, by ``lead_end``
    (after a few symbols), and go on the way provider messages go on.
    """

    start: int
    end: int
    lead_end: int | None = None
    #: True for a region :func:`error_regions` found (a scan window of scope ``anywhere`` is not one).
    in_error: bool = True
    #: True for a short Chinese reply (:func:`short_chinese_reply`): the pattern may stand anywhere in it
    #: but must end it or be followed by a request to act (:func:`_ends_a_short_reply`).
    short_reply: bool = False


def _introduced(text: str, start: int) -> bool:
    """True when the text before ``start`` ends with ":" (an introduced quote)."""
    before = text[:start].rstrip()
    return before.endswith((":", "："))


def _ascii_word(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


def log_lines_only(text: str) -> bool:
    """True when every non-blank line of ``text`` after the first is a log line (it starts with a level
    or a time, :data:`_LOG_STAMP`) or continues one (indented, or JSON: ``{ } [ ] " '``). A reply that
    starts with a log line and goes on in prose ("Finding: …", "I moved the job …") is an answer about
    the log, not the error itself (pure; SPEC §3.3)."""
    for line in text.split("\n")[1:]:
        if line.strip() and not line.startswith((" ", "\t", "{", "}", "[", "]", '"', "'")):
            if _LOG_START_RE.match(line) is None:
                return False
    return True


def json_body_end(text: str, start: int, *, limit: int) -> int | None:
    """Where the JSON body that follows an error's opening ends: the offset just past the ``}``
    or ``]`` that closes the first ``{`` or ``[`` among the first 40 characters after ``start``
    (strings in ``"`` or ``'`` are skipped, with backslash escapes); ``limit`` when the body is
    still open there and ``limit`` is the reply's end (a body cut short runs to the end); None
    when there is no such bracket or it is still open at a ``limit`` before the reply's end
    (pure; SPEC §3.3: "the reply is the error" covers the provider's whole body, however long
    its message)."""
    window = text[start : min(limit, start + 40)]
    opened = min((at for at in (window.find("{"), window.find("[")) if at >= 0), default=-1)
    if opened < 0:
        return None
    depth, quote, index = 0, None, start + opened
    while index < limit:
        char = text[index]
        if quote is not None:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return limit if limit == len(text) else None


def _label_describes(text: str, start: int, *, min_chars: int = 0) -> bool:
    """True when the line at ``start`` is a label whose message, after the line's first colon,
    describes rather than reports (:data:`_DESCRIBES`): "Exception: the gateway should return
    503 …", and runs on for at least ``min_chars`` characters without a provider's way of going
    on ("please", "retry", "try again", 请, 稍后). A CamelCase name is no such label: an
    exception's class or an error code comes with the provider's message
    ("ModelNotReadyException: the model is not ready to serve requests.", "APIError: the server
    is overloaded", "DataInspectionFailed: the input was refused.")."""
    line = text[start : start + 200].split("\n", 1)[0]
    colon = min((at for at in (line.find(":"), line.find("：")) if at >= 0), default=-1)
    if colon < 0 or _CLASS_NAME_END_RE.search(line[:colon]) is not None:
        return False
    message = text[start + colon + 1 :]
    if len(message.strip()) < min_chars or _GOES_ON_LIKE_A_PROVIDER_RE.search(message[:200]) is not None:
        return False
    return _DESCRIBES_RE.match(message) is not None


def _status_body_region(text: str, start: int, limit: int) -> Region:
    """The error-message region of a bare status and its JSON body at ``start``: to the body's end
    (:func:`json_body_end`), within ``limit``."""
    body_end = json_body_end(text, start, limit=limit)
    return Region(start, limit if body_end is None else body_end)


#: The longest reply (characters, stripped) that :func:`short_chinese_reply` takes for one app's error string.
SHORT_REPLY_CHARS = 40
_HAN_RE = _vocabulary(r"\p{Han}")
#: A short Chinese reply that is a question, a figure ("连接超时 3.05 秒"), a list ("余额不足、API Key 无效") or a
#: report or advice ("…已自动切换到备用账户并完成任务。", "限制访问频率，建议在网关层统一实现。", "…通常是…") is no error.
_SHORT_ANSWER_RE = _vocabulary(
    r"[?？吗呢]\W*\z|\d\s*(?:次|秒|毫秒|分钟|小时|天|个|%|％)|\d\s*/\s*\d"
    r"|、|完成|成功|建议|通常|一般|的话|(?:^|[^及超按临暂同])时"
)


#: What may follow the provider's words in a short Chinese reply: its end, or a request to act after a word or two
#: ("限流" + "规则,请稍后重试").
_SHORT_REPLY_END_RE = _vocabulary(r"[\s。.!！]*\z|\p{Han}{0,4}[，,。.!！ ]*请[^求]")


def _ends_a_short_reply(text: str, span: tuple[int, int]) -> bool:
    """True when a match ``span`` in a short Chinese reply ends it or is followed by a request to act, and is
    not a bare status ("已设为 500。" is a figure)."""
    return not text[span[0] : span[1]].isdigit() and _SHORT_REPLY_END_RE.match(text, span[1]) is not None


#: What may stand before a colon in a short Chinese error string: a status, a word for a failure or its cause, an
#: error code's name ("500: 当前API请求过多", "测试失败：Connection error.", "(error_code: 1)"). Any other label makes
#: the reply a record or a definition ("退款结果：FAIL，…余额不足。", "POS 显示：51-余额不足。", "限流：指…").
_SHORT_LABEL_RE = _vocabulary(r"(?:[45]\d\d|失败|错误|异常|出错|超时|原因|error_code)\s*\z")


def _labels_only_errors(text: str) -> bool:
    """True when every colon of ``text`` follows a label :data:`_SHORT_LABEL_RE` allows."""
    return all(_SHORT_LABEL_RE.search(text[:at]) is not None for at, char in enumerate(text) if char in ":：")


def short_chinese_reply(text: str) -> bool:
    """True when the whole reply is one short line in Chinese (at most :data:`SHORT_REPLY_CHARS` characters), neither
    a question, a record, a figure, a list, a report nor an explanation (:data:`_EXPLAINS`): an app's error string, where the
    provider's words stand anywhere, since Chinese puts them after a verb ("触发平台限流规则,请稍后重试",
    "请求内容没有通过安全策略", "大模型调用超时"). SPEC §3.3, the reply is one provider sentence."""
    stripped = text.strip()
    return (
        0 < len(stripped) <= SHORT_REPLY_CHARS
        and "\n" not in stripped
        and _HAN_RE.search(stripped) is not None
        and _SHORT_ANSWER_RE.search(stripped) is None
        and _labels_only_errors(stripped)
        and _EXPLAINS_RE.search(stripped) is None
        and _CONDITIONAL_RE.match(stripped) is None
    )


def error_regions(text: str, *, head_chars: int, tail_chars: int) -> list[Region]:
    """Where the reply *is* an error, in the three shapes of SPEC §3.3 (pure).

    * the reply is the error: it starts (after a few symbols, and optionally
      a "Something: " prefix) with an opening of the vocabulary above, not
      followed by a definition and not quoted inside the opening (a word,
      then a quote mark or backtick: 'Q: What does "Error: …'), and, after
      a log line's level or time, only when the reply is log lines only
      (:func:`log_lines_only`), and not when its message explains what the
      error means (:data:`_EXPLAINS`): the opening
      and up to :data:`OPENING_REACH` characters after it, within the head
      window;
    * the reply is one provider sentence: the head window, as a sentence
      region (the pattern must start it, after a few symbols and a bare
      4xx/5xx status: "429 余额不足，请充值。", or a one-word name and a
      colon: "deepseek/deepseek-v4-flash: stream ended before …"), unless the
      head explains or reports on an error (:data:`_EXPLAINS`: "… That is
      the message OpenAI returns when …");
    * an error ends the reply: a line in the tail window that starts with a
      strong opening and runs with only continuation lines to the end, and
      the last paragraph (as a sentence region) when no line of it is quoted
      or fenced; neither when the text before it ends with ":" (an
      introduced quote), and no error block that explains what an error
      means (:data:`_EXPLAINS`).

    The head opens neither of the first two when it names
    :data:`STATUS_REFERENCE_CODES` or more different 4xx/5xx statuses (a
    reference about statuses, not one error) or opens with a glossary heading
    (:func:`opens_with_a_heading`). When the opening is followed by a JSON body, the
    first shape runs to the body's end (:func:`json_body_end`). The tail window is scanned only
    when the reply is longer than the head.
    """
    size = len(text)
    head_end = min(size, max(0, head_chars))
    # How far an error's body may run from the head: to the reply's end when both windows meet, else the head's.
    reach = size if size <= head_chars + max(0, tail_chars) else head_end
    regions: list[Region] = []
    if head_end and not _names_many_statuses(text[:head_end]) and not opens_with_a_heading(text):
        head = text[:head_end]
        opening = _OPENING_RE.search(head)
        if (
            opening is not None
            and _DEFINITION_RE.match(text[opening.end() : opening.end() + 40]) is None
            and not _quotes_inside(opening.group())
            and not _quoted_then_prose(text, opening)
            and (_LOG_START_RE.match(head) is None or log_lines_only(text))
            and _EXPLAINS_RE.search(text[opening.end() : opening.end() + OPENING_REACH]) is None
            and not _label_describes(text, 0, min_chars=DESCRIPTION_MIN_CHARS)
            # The opening may end on the dash itself ("401 Unauthorized —"): look from just before it.
            and _DASH_DESCRIBES_RE.match(text, opening.end() - 2) is None
            and _CONDITIONAL_RE.match(text) is None
        ):
            end = min(head_end, opening.end() + OPENING_REACH)
            body_end = json_body_end(text, opening.end(), limit=reach)
            regions.append(Region(0, end if body_end is None else max(end, body_end)))
        lead = _NAMED_SENTENCE_LEAD_RE.match(head)
        if lead is None or not head[lead.end() : lead.end() + 1].isalpha():
            lead = _SENTENCE_LEAD_RE.match(head)
        if _EXPLAINS_RE.search(head) is None:
            regions.append(Region(0, head_end, lead.end() if lead is not None else 0))
        if _STATUS_BODY_RE.match(head) is not None:
            regions.append(_status_body_region(text, 0, reach))
        if short_chinese_reply(text):
            regions.append(Region(0, size, short_reply=True))
    if size > head_end and tail_chars <= 0:
        return regions
    tail_start = max(0, size - tail_chars) if size > head_end else 0
    # re2 reads a slice (the tail window, and one character before it for ^).
    origin = max(0, tail_start - 1)
    block = _TAIL_BLOCK_RE.search(text[origin:], tail_start - origin)
    if (
        block is not None
        and origin + block.start() > 0
        and not _introduced(text, origin + block.start())
        and _EXPLAINS_RE.search(text, origin + block.start()) is None
        and not _label_describes(text, origin + block.start())
        and _TAIL_COMMENT_RE.search(text, origin + block.start()) is None
    ):
        regions.append(Region(origin + block.start(), size))
    blank = text.rfind("\n\n", tail_start)
    if blank >= 0:
        para = blank + 2
        while para < size and text[para] in " \t\n":
            para += 1
        lines = text[para:].split("\n")
        if (
            para < size
            and not _introduced(text, para)
            and not any(line.startswith(("`", ">")) for line in lines)
            and _TAIL_COMMENT_RE.search(text, para) is None
        ):
            lead = _TAIL_LEAD_RE.match(text[para : para + 10])
            regions.append(Region(para, size, para + (lead.end() if lead is not None else 0)))
            if _STATUS_BODY_RE.match(text[para : para + 20]) is not None:
                regions.append(_status_body_region(text, para, size))
    return regions


#: What may follow an error label's quoted message on its line and keep it the error: an end, a stop, a bracket
#: (a request id), a comma, or a request to act ("Please retry", "请稍后再试"). Words of any other kind make the
#: reply talk about the quoted message ('Error: "401 Unauthorized" — fixed.', '错误："Rate limit exceeded" 是什么意思？').
_AFTER_QUOTED_MESSAGE_RE = re.compile(r"[ \t]*(?:$|\n|[.。!！,，;；:：()（）\[\]{}]|please|try|retry|请|稍后)", re.I)


def _quoted_then_prose(text: str, opening) -> bool:
    """True when an error label (``opening``, a match ending in a colon, not a JSON body) is followed by a quoted
    message (``"…"``, ``“…”``, ``「…」``; at least 8 characters, on one line) whose line goes on in words after the
    closing mark (:data:`_AFTER_QUOTED_MESSAGE_RE`): an answer about that message ('Error: "401 Unauthorized" —
    fixed.')."""
    label = opening.group().rstrip()
    if not label.endswith((":", "：")) or "{" in label:
        return False
    start = opening.end()
    while start < len(text) and text[start] in " \t":
        start += 1
    if start >= len(text) or text[start] not in '"“「':
        return False
    closing = _CLOSING_MARKS.get(text[start], text[start])
    end = text.find(closing, start + 1, start + 400)
    while end > 0 and text[end - 1] == "\\":  # an escaped quote inside the message
        end = text.find(closing, end + 1, start + 400)
    if end < start + 9 or "\n" in text[start:end]:
        return False
    return _AFTER_QUOTED_MESSAGE_RE.match(text, end + 1) is None


def _still_open(mark: str, inside: str) -> bool:
    """True when a quotation opened by ``mark`` is not closed in ``inside`` (the text after the
    mark) and is not a quoted URL. A straight quote or backtick closes a quoted name when it
    ends a word and a space follows ('"researcher" failed'), not inside JSON ('{"error": …')."""
    if mark == '"' and inside[:4].lower() == "http":
        return False
    closing = _CLOSING_MARKS.get(mark)
    if closing is not None:
        return closing not in inside
    return re.search(r"\w" + re.escape(mark) + r"\s", inside) is None


def _quotes_inside(opening: str) -> bool:
    """True when an error opening holds a quotation opened after a word that is still open at its
    end ('Q: What does "Error code:'): the reply quotes the error to talk about it."""
    return any(
        _still_open(found.group(1), opening[found.end(1) :]) and _opens_a_quotation(opening, found.start(1))
        for found in _QUOTE_MARK_RE.finditer(opening)
    )


def _opens_a_quotation(text: str, at: int) -> bool:
    """False when the quote mark at ``at`` holds the error's own text rather than quoting one: after an error's
    label ('错误："Workflow execution failure: …"', :data:`_LABEL_THEN_QUOTE_RE`) or as a call's or an exception's
    argument, right after a name and "(" (Python's 'BadRequestError("Error code: 400 …")')."""
    if _LABEL_THEN_QUOTE_RE.match(text[:at]) is not None:
        return False
    return not (at >= 2 and text[at - 1] == "(" and (text[at - 2].isalnum() or text[at - 2] == "_"))


def quotes_an_error(text: str | None, *, head_chars: int) -> bool:
    """True when the reply starts by quoting an error after a few words (pure; SPEC §3.3).

    'Q: What does "Error code: 429 …" mean?', 'That `RateLimitError: …` message comes
    from …', '排查结论：`Error code: 429 …`', '问：“relay error …” 是什么意思？': a word, a quote
    mark or backtick within the first line's first 60 characters, and right inside it an
    error opening (:data:`_OPENING`) that the quotation does not close. Such a reply is an
    answer about an error, whichever signal judges it; the learned model's verdict yields to
    it (SPEC §3.3a). A quoted URL (Go's 'Post "https://…": …') is not a quotation, nor is a
    quoted name ('Agent "researcher" failed: Error code: 429 …').
    """
    if not text:
        return False
    head = text[: max(0, head_chars)]
    quote = _QUOTE_START_RE.search(head)
    if quote is None:
        return False
    if not _opens_a_quotation(head, quote.start(1)):
        return False
    inside = head[quote.end(1) :]
    opening = _OPENING_RE.search(inside)
    return opening is not None and _still_open(quote.group(1), opening.group())


#: A reply that opens by introducing a quoted line: a first line ending with a colon, then a blockquote ("In the run
#: log the last line was:\n> {"error": …}"): the answer quotes what it explains (SPEC §3.3).
#: An introduction that says the call failed ("Sorry, I couldn't answer that:", "The AI provider returned an error:",
#: "Claude returned:"): the blockquote under it is the error itself.
_FAILED_INTRO_RE = re.compile(
    r"\b(?:sorry|couldn't|could not|can't|cannot|unable|failed|fail|error|went wrong|returned|responded|said|replied)\b"
    r"|抱歉|失败|错误|出错|无法|异常|返回",
    re.I,
)
_INTRODUCED_QUOTE_RE = re.compile(r"(?P<intro>[^\n]{3,160}[:：])[ \t]*\n\s*>")


def _introduces_a_quote(text: str) -> bool:
    """True when ``text`` opens with an introduction and a blockquote (:data:`_INTRODUCED_QUOTE_RE`) whose first
    line is neither an error's own label ("⚠️ Error:\n> 429 Too Many Requests") nor says the call failed
    (:data:`_FAILED_INTRO_RE`: "Sorry, I couldn't answer that:\n> …"): those are errors."""
    found = _INTRODUCED_QUOTE_RE.match(text)
    if found is None:
        return False
    intro = found.group("intro")
    return _LABEL_THEN_QUOTE_RE.match(intro) is None and _FAILED_INTRO_RE.search(intro) is None


def about_errors(text: str | None, *, head_chars: int) -> bool:
    """True when the reply is an answer about errors rather than one (pure; SPEC §3.3): it opens
    with a glossary or report heading (:func:`opens_with_a_heading`) or by introducing a blockquote
    (:data:`_INTRODUCED_QUOTE_RE`), it starts by quoting an error (:func:`quotes_an_error`) or with a
    label and a quoted message it talks about (:func:`_quoted_then_prose`), or its head window names
    :data:`STATUS_REFERENCE_CODES` or more different 4xx/5xx statuses (a reference: "Status codes:
    400 bad request, 401 invalid API key, 429 too many requests …"). The shapes of
    :func:`error_regions` already refuse both to the patterns; the learned model's verdict yields to
    them too (SPEC §3.3a)."""
    if not text:
        return False
    return (
        opens_with_a_heading(text)
        or _introduces_a_quote(text)
        or quotes_an_error(text, head_chars=head_chars)
        or _talks_about_a_quoted_message(text[: max(0, head_chars)])
        or _names_many_statuses(text[: max(0, head_chars)])
    )


def _talks_about_a_quoted_message(head: str) -> bool:
    """True when ``head`` opens with an error label and a quoted message its line goes on talking about
    (:func:`_quoted_then_prose`: 'Error: "401 Unauthorized" — fixed.', '错误："Rate limit exceeded" 是什么意思？')."""
    opening = _OPENING_RE.match(head)
    return opening is not None and _quoted_then_prose(head, opening)


#: The shortest reply the learned model judges, in columns (a CJK character counts two): below
#: about a sentence an answer carries too few n-grams for the model, and a few error-adjacent words
#: ("令牌", "happened") outweigh the rest. Chosen on the folds, leave-source-out: 36 columns cost
#: 4 of 500 errors (recall 0.994 -> 0.986 with patterns) and left no reply of 300 random one- to
#: five-word answers flagged (85 at 0 columns). Patterns still judge short replies (SPEC §3.3a).
MODEL_MIN_COLUMNS = 36
#: A shorter reply, down to :data:`MODEL_SHORT_MIN_COLUMNS`, is judged by the model only when it is this sure: short
#: failed replies no pattern knows ("upstream request timeout", "服务器异常，请稍后重试", "Sorry, no response was
#: returned.") score 0.99 and up, short answers ("Timeout: 3.05s", "状态：PROCESSING", "Syntax OK, no errors.") below.
#: Chosen on the folds, out of fold: 12 of the 24 short failed replies no pattern matched reach it, and none of the
#: 170 short ordinary answers of the fourth ordinary batch's folds.
MODEL_SHORT_MIN_PROBABILITY = 0.99
MODEL_SHORT_MIN_COLUMNS = 16


def reply_columns(text: str) -> int:
    """Columns ``text`` takes: its characters, a wide one (CJK, full-width: East Asian width W or F)
    counting two."""
    return len(text) + sum(1 for char in text if unicodedata.east_asian_width(char) in "WF")


#: Words an error body carries in its keys or values; a JSON document whose fields carry none of them is a
#: node's structured output ({"sentiment": "positive", "score": 0.87}), which the model, having seen JSON only
#: in error bodies, would score as a failure. Text fields (:data:`_TEXT_KEYS`) are judged by their value. Chosen on
#: the folds: no failed reply of the folds or the older sets is left to the patterns by it.
_ERROR_WORDS = (
    r"err|fail|exception|messag|msg|code|detail|reason|status|refus|denied|limit|quota|timeout|overload|unavailab"
    r"|exceed|filter|prohibit|violat|forbidden|unauthori|错误|失败|异常|超时|限流|额度|余额|繁忙|敏感|违规"
)
_ERROR_WORDS_RE = _vocabulary(_ERROR_WORDS)
#: The longest reply :func:`is_plain_json_output` parses (a larger document is left to the model).
PLAIN_JSON_MAX_CHARS = 100_000
#: Fields that hold text: their value, not their name, may name an error ({"message": "Report generated"} is fine).
_TEXT_KEYS = frozenset({"message", "msg", "description", "note", "notes", "summary"})
#: An error field holding the error's text: a fine outcome there reports none ('"errcode": 0, "errmsg": "ok"').
_ERROR_TEXT_KEYS = frozenset({"errmsg", "err_msg", "error_msg", "errormsg", "errormessage", "error_message"})
#: Fields whose value, not their name, says whether a record failed, and the values that say it did not.
_OUTCOME_KEYS = frozenset({"status", "state", "result", "code", "status_code", "statuscode", "level"})
_FINE_OUTCOMES = frozenset(
    {
        "ok",
        "success",
        "succeeded",
        "successful",
        "done",
        "completed",
        "complete",
        "passed",
        "paid",
        "active",
        "info",
        "debug",
        "healthy",
        "handled",
        "resolved",
        "recovered",
        "diagnosed",
        "open",
        "closed",
        "merged",
        "approved",
        "published",
        "true",
        "成功",
        "完成",
        "正常",
    }
)


def _fine_outcome(value) -> bool:
    """True when a JSON value is a string that names a fine outcome (:data:`_FINE_OUTCOMES`: "ok", "成功" …)."""
    return isinstance(value, str) and value.strip().lower() in _FINE_OUTCOMES


def _carries_error(value, depth: int = 0) -> bool:
    """True when a parsed JSON value names an error in a field that is not empty (null, false, 0, "", [], {}
    say nothing) and not a fine outcome ("status": "ok", "code": 200, "errmsg": "ok")."""
    if depth > 6:
        return True
    if isinstance(value, dict):
        for key, item in value.items():
            if item in (None, False, 0, "") or item == [] or item == {}:
                continue
            name = str(key).lower()
            if name in _TEXT_KEYS:
                if _carries_error(item, depth + 1):
                    return True
                continue
            if name in _ERROR_TEXT_KEYS and _fine_outcome(item):
                continue
            if name.endswith("id") and isinstance(item, str | int):  # an identifier: msgid, message_id, request_id
                continue
            if name in _OUTCOME_KEYS:
                fine = isinstance(item, bool) or (isinstance(item, int | float) and 0 <= item < 400)
                if fine or _fine_outcome(item):
                    continue
                return True
            if _ERROR_WORDS_RE.search(name) is not None or _carries_error(item, depth + 1):
                return True
        return False
    if isinstance(value, list):
        return any(_carries_error(item, depth + 1) for item in value)
    return isinstance(value, str) and _ERROR_WORDS_RE.search(value) is not None


def is_plain_json_output(text: str) -> bool:
    """True when ``text`` is one JSON object or array none of whose fields carries an error
    (:func:`_carries_error`, :data:`_ERROR_WORDS`): a node's structured output, not an error body
    (pure; SPEC §3.3a)."""
    parsed = _json_document(text.strip(), max_chars=PLAIN_JSON_MAX_CHARS)
    return parsed is not _NOT_JSON and (_reports_a_fine_outcome(parsed) or not _carries_error(parsed))


def _reports_a_fine_outcome(value) -> bool:
    """True when a parsed JSON object says at its top level that it went fine ("status": "ok") and holds no
    "error" of its own: its other fields ("lastError": "400 …, handled") are history, not this call's failure."""
    if not isinstance(value, dict) or any(
        value.get(key) not in (None, False, "", [], {}) for key in ("error", "errors")
    ):
        return False
    return any(str(key).lower() in _OUTCOME_KEYS and _fine_outcome(item) for key, item in value.items())


def model_may_judge(text: str | None, *, head_chars: int, probability: float | None = None) -> bool:
    """True when the learned model's verdict on ``text`` may stand (pure; SPEC §3.3a): the reply
    is at least :data:`MODEL_MIN_COLUMNS` wide (or :data:`MODEL_SHORT_MIN_COLUMNS` when the model's
    ``probability``, 0 to 1, reaches :data:`MODEL_SHORT_MIN_PROBABILITY`), is not an answer about errors
    (:func:`about_errors`) and is not a node's plain JSON output (:func:`is_plain_json_output`).
    Otherwise the patterns alone judge it."""
    if not text:
        return False
    columns = reply_columns(text.strip()[:MODEL_MIN_COLUMNS])
    sure = probability is not None and probability >= MODEL_SHORT_MIN_PROBABILITY
    if columns < (MODEL_SHORT_MIN_COLUMNS if sure else MODEL_MIN_COLUMNS):
        return False
    return not about_errors(text, head_chars=head_chars) and not is_plain_json_output(text)


def in_code(text: str, span: tuple[int, int]) -> bool:
    """True when ``text[span]`` is code, not a provider's words (pure; SPEC §3.3): a keyword argument or an
    assignment ("timeout=10", "httpx.Client(timeout=30)") or the inside of a snake_case name
    ("test_rate_limit_backoff"); a name the span covers whole ("rate_limit_exceeded") is still words."""
    start, end = span
    if text[end : end + 1] == "=" and text[end + 1 : end + 2] != "=":
        return True
    return start > 0 and text[start - 1] == "_" and text[end : end + 1] == "_"


#: A port named right before a number ("port=443", "port 443", "port: 443"), as urllib3's HTTPSConnectionPool shows it.
_PORT_BEFORE_RE = re.compile(r"\bport\s*[=:]?\s*\Z", re.I)


def in_figure(text: str, span: tuple[int, int]) -> bool:
    """True when ``text[span]`` is three digits that belong to a figure, not a status code (pure; SPEC §3.3):
    part of a larger number or an amount ("1,429,000", "19.429", "$429", "€503"), a percentage ("429%"), a
    number in a list of numbers ("rows 44, 529, 1003"), a value after "=" ("n = 502"), a phone number
    ("400-820-8820"), a compound word ("the 503-page manual") or a port after a host ("ollama.com:443/") or
    named as one ("port=443", "port 443")."""
    start, end = span
    if end - start != 3 or not text[start:end].isdigit():
        return False
    if _PORT_BEFORE_RE.search(text, max(0, start - 8), start):
        return True
    before, after = text[max(0, start - 3) : start], text[end : end + 2]
    if before[-1:] in (",", ".", "$", "€", "£", "¥", "#") or before.endswith("= "):
        return True
    if len(before) == 3 and before[0].isdigit() and before[1:] == ", ":
        return True
    if before[-1:] == "-" and before[-2:-1].isdigit():
        return True
    if before[-1:] == ":" and before[-2:-1].isalnum() and after[:1] in ("/", '"', ""):
        return True
    return (
        after[:1] == "%"
        or (after[:1] in (",", ".", "-") and after[1:2].isdigit())
        or (after[:1] == "-" and after[1:2].isalpha())
    )


#: A verb of being that makes a phrase a statement rather than a term: "prompt is too long" before ": 202128 tokens"
#: is the provider's message; "Rate limit" before ": 60 requests per minute" and "Quota exceeded" before ": 3 of 40
#: teams" are a spec line's or a report's term.
_STATEMENT_RE = _vocabulary(r"\b(?:is|are|was|were)\b")

#: How much text after a phrase :func:`sentence_goes_on` reads.
_AFTER_CHARS = 300


def sentence_goes_on(text: str, start: int, end: int) -> bool:
    """True when a phrase at ``text[start:end]`` that starts a sentence region is
    the provider's message rather than the subject of prose (SPEC §3.3).

    It must not end inside a word, nor be followed by a prose connector
    ("errors are", "时", "的原因"). A long phrase (:data:`LONG_PHRASE_CHARS`)
    or one that ends with its own colon ("No reply:") is then the message; a short one must end the reply, or end its
    sentence the way provider messages go on ("please try again", "请稍后再试",
    details after ":", a closed bracket the message goes on after), possibly after a few words without a verb.
    A value with "per", "for", "each" or "of" after the colon is a spec line ("Rate limit: 60 requests per
    minute per key."), unless the message then goes on ("… Please retry later.").
    """
    if end < len(text) and end > start and _ascii_word(text[end - 1]) and _ascii_word(text[end]):
        return False
    # What follows, bounded; a NUL stands for "more text" so \z means the reply's end.
    after = text[end : end + _AFTER_CHARS] + ("\x00" if end + _AFTER_CHARS < len(text) else "")
    if _CONNECTOR_RE.match(after) is not None:
        return False
    if end - start >= LONG_PHRASE_CHARS or text[end - 1] in ":：":
        return True
    if _SENTENCE_END_RE.match(after) is not None:
        # A statement ("prompt is too long: 202128 tokens > 200000 maximum") is no spec line's term.
        return _STATEMENT_RE.search(text, start, end) is not None or not _spec_value(after, 0)
    rest = _SENTENCE_REST_RE.match(after)
    if rest is None or _PROSE_RE.search(rest.group()) is not None:
        return False
    return _SENTENCE_END_RE.match(after, rest.end()) is not None and not _spec_value(after, rest.end())


#: A few more Chinese characters after a phrase still belong to its term ("连接" + "池大小").
_TERM_REST = re.compile(r"[\u4e00-\u9fff]{1,6}")


def _spec_value(after: str, at: int) -> bool:
    """True when ``after[at:]`` (what follows a phrase, or the rest of its sentence) makes the phrase a
    spec line's term rather than a provider's message (SPEC §3.3's "Term: definition"):
    * a colon, a value and a next line that is another "Key: value" (:data:`_SPEC_BLOCK`: "Timeout: 30s\n
      Retries: 3");
    * right after the phrase (or a few more Chinese characters of its term: "连接" + "池大小"), a colon and
      a figure (:data:`_COLON_VALUE`: "Rate limit: 100 req/min"); after more words, a figure with "per",
      "for", "each" or "of" (:data:`_SPEC_VALUE`: "… exceeded: 3 of 40 teams");
    unless the value then goes on as provider messages do (:data:`_VALUE_GOES_ON`: "…: 60 requests per
    minute. Please retry later.")."""
    if _SPEC_BLOCK_RE.match(after, at) is not None:
        return True
    term = at == 0 or _TERM_REST.fullmatch(after, 0, at) is not None  # "连接" + "池大小：20"
    value = _COLON_VALUE_RE if term else _SPEC_VALUE_RE
    return value.match(after, at) is not None and _VALUE_GOES_ON_RE.match(after, at) is None


# --- the matcher ----------------------------------------------------------------------------


class _Group:
    """The rules of one scope: literals in one re2 Set, ``regex:`` rules in another."""

    def __init__(self, rules: list[_Rule], compiled: dict[int, Any]):
        self.literals: list[tuple[_Rule, str]] = []
        self.regexes: list[tuple[_Rule, Any]] = []
        for rule in rules:
            if rule.pattern.startswith(REGEX_PREFIX):
                if id(rule) in compiled:
                    self.regexes.append((rule, compiled[id(rule)]))
            elif rule.pattern.strip():
                self.literals.append((rule, rule.pattern.casefold()))
        self.literal_set = _build_set([folded for _, folded in self.literals], literal=True)
        self.regex_set = _build_set([c.pattern for _, c in self.regexes], literal=False)

    def __len__(self) -> int:
        return len(self.literals) + len(self.regexes)

    def collect(self, text: str, start: int, end: int, folded: _FoldedWindow, found: dict) -> None:
        if self.literal_set is not None:
            for index in self.literal_set.Match(folded.text) or ():
                rule, needle = self.literals[index]
                found[id(rule)] = (rule, needle)
        if self.regex_set is not None:
            # One character of context either side keeps \b and (?m)^ honest;
            # the exact search re-checks anchors against the whole reply.
            lo, hi = max(0, start - 1), min(len(text), end + 1)
            for index in self.regex_set.Match(text[lo:hi]) or ():
                rule, compiled = self.regexes[index]
                found[id(rule)] = (rule, compiled)


def _build_set(sources: list[str], *, literal: bool):
    if not sources:
        return None
    options = _regex_options(max_mem=_SET_MAX_MEM)
    if literal:
        # Substrings are matched on case-folded text, so they compare exactly.
        options.case_sensitive = True
        options.literal = True
    found = re2.Set.SearchSet(options)
    try:
        for source in sources:
            found.Add(source)
        if found.Compile() is False:
            raise SetTooCostly(size=None)
    except re2.error as exc:
        raise SetTooCostly(size=None) from exc
    return found


def _find(matcher, text: str, start: int, end: int, folded: _FoldedWindow, *, anchored: bool = False):
    """The leftmost match of one rule in ``text[start:end]``, in original offsets, or None; with ``anchored``
    only a match that starts exactly at ``start``."""
    if isinstance(matcher, str):
        if anchored:
            at = folded.folded_offset(start)
            at = at if folded.text.startswith(matcher, at) else -1
        else:
            at = folded.text.find(matcher)
        return folded.original_span(at, at + len(matcher)) if at >= 0 else None
    # pos/endpos keep the match inside the place while ^, $ and \b still see the
    # neighbouring text, so ^ never matches at the tail window's start.
    lo, hi = max(0, start - 1), min(len(text), end + 1)
    found = (matcher.match if anchored else matcher.search)(text[lo:hi], start - lo, end - lo)
    if found is None:
        return None
    return (lo + found.start(), lo + found.end())


#: Words that make what follows a guess ("可能是密钥错误，也可能是请求过快", "Possible quota limitations in place"):
#: an app's list of likely causes, not the provider's report of this one ("The server may be overloaded" is still a
#: provider's message).
_HEDGE_RE = re.compile(r"(?:可能是|或许是|\b(?:maybe|possibly|possible|perhaps))\s*\Z", re.I)


def hedged(text: str, span: tuple[int, int]) -> bool:
    """True when the words right before ``span`` (up to 20 characters) make it a guess (:data:`_HEDGE_RE`)."""
    return _HEDGE_RE.search(text, max(0, span[0] - 20), span[0]) is not None


def _provider_words(text: str, place: Region, span: tuple[int, int] | None) -> bool:
    """True when a match ``span`` in ``place`` can be a provider's words: neither code (in an error region), nor a
    figure, nor a guess (:func:`hedged`)."""
    return (
        span is not None
        and not (place.in_error and in_code(text, span))
        and not in_figure(text, span)
        and not hedged(text, span)
    )


class Matcher:
    """A compiled, immutable pattern set (SPEC §3.3); build it with ``compile_patterns``.

    ``detect(text, head_chars=…, tail_chars=…)`` and ``matches(…)`` are pure and
    thread-safe. Raises :class:`SetTooCostly` when the set as a whole is too costly.
    """

    def __init__(self, rules: Iterable[_Rule]):
        self.rules: list[_Rule] = sorted(rules, key=lambda r: r.order)
        compiled: dict[int, Any] = {}
        total = 0
        for rule in self.rules:
            if not rule.pattern.startswith(REGEX_PREFIX):
                continue
            try:
                program = _compile_regex(rule.pattern[len(REGEX_PREFIX) :])
            except PatternRefused as exc:
                # A stored rule that fails today's checks must not break detection.
                logger.warning("Skipping pattern %s (%s): %s", rule.id, rule.name, exc)
                continue
            compiled[id(rule)] = program
            total += program.programsize
            if total > MAX_SET_PROGRAM_SIZE:
                # Stop at the first rule past the bound: ``size`` is then a lower bound.
                raise SetTooCostly(size=total)
        self.program_size = total
        self._anywhere = _Group([r for r in self.rules if r.scope == SCOPE_ANYWHERE], compiled)
        self._error = _Group([r for r in self.rules if r.scope == SCOPE_ERROR], compiled)

    def __len__(self) -> int:
        return len(self._anywhere) + len(self._error)

    def _windows(self, text: str, head_chars: int, tail_chars: int) -> list[Region]:
        size = len(text)
        head_end = min(size, max(0, head_chars))
        windows = [Region(0, head_end, in_error=False)] if head_end else []
        if tail_chars > 0 and size > head_end:
            windows.append(Region(max(0, size - tail_chars), size, in_error=False))
        return windows

    def _candidates(
        self, text: str, head_chars: int, tail_chars: int, *, placed: bool = True
    ) -> list[tuple[_Rule, Any, list, list]]:
        found_by_group = []
        windows = self._windows(text, head_chars, tail_chars)
        for group, places in (
            (self._anywhere, windows if len(self._anywhere) else []),
            (
                self._error,
                (error_regions(text, head_chars=head_chars, tail_chars=tail_chars) if placed else windows)
                if len(self._error)
                else [],
            ),
        ):
            folded_places = []
            found: dict = {}
            for place in places:
                folded = _FoldedWindow(text[place.start : place.end], place.start)
                folded_places.append(folded)
                group.collect(text, place.start, place.end, folded, found)
            for rule, matcher in found.values():
                found_by_group.append((rule, matcher, places, folded_places))
        found_by_group.sort(key=lambda item: item[0].order)
        return found_by_group

    @staticmethod
    def _span(matcher, text: str, places: list[Region], folded_places: list) -> tuple[int, int] | None:
        for place, folded in zip(places, folded_places, strict=True):
            span = _find(matcher, text, place.start, place.end, folded)
            if not _provider_words(text, place, span):
                continue
            if place.lead_end is None:
                if place.short_reply and not _ends_a_short_reply(text, span):
                    continue
                return span
            if span[0] <= place.lead_end and sentence_goes_on(text, span[0], span[1]):
                return span
            if span[0] < place.lead_end:
                # The pattern's words also open the lead ("Throttled: Request is throttled."): try the sentence itself.
                span = _find(matcher, text, place.lead_end, place.end, folded, anchored=True)
                if _provider_words(text, place, span) and sentence_goes_on(text, span[0], span[1]):
                    return span
        return None

    def matches(self, text: str | None, *, head_chars: int, tail_chars: int) -> list[Detection]:
        """Every enabled pattern that matches, best ``(priority, id)`` first (SPEC §3.4); the first is
        :meth:`detect`'s verdict."""
        return list(self._verdicts(text, head_chars=head_chars, tail_chars=tail_chars))

    def _verdicts(self, text, *, head_chars, tail_chars):
        """Nothing unless a pattern places the reply as an error; then every pattern whose words appear
        anywhere in the windows, best first (the body's cause beats its wrapper or status)."""
        if next(self._iter_matches(text, head_chars=head_chars, tail_chars=tail_chars), None) is None:
            return iter(())
        return self._iter_matches(text, head_chars=head_chars, tail_chars=tail_chars, placed=False)

    def _iter_matches(self, text, *, head_chars, tail_chars, placed=True):
        if not text or not text.strip() or not len(self):  # callers decide what a blank reply is (is_blank)
            return
        for rule, matcher, places, folded_places in self._candidates(text, head_chars, tail_chars, placed=placed):
            span = self._span(matcher, text, places, folded_places)
            if span is not None:
                yield Detection(
                    pattern_id=rule.id,
                    key=rule.key,
                    name=rule.name,
                    pattern=rule.pattern,
                    category=rule.category,
                    retryable=rule.retryable,
                    span=span,
                )

    def detect(self, text: str | None, *, head_chars: int, tail_chars: int) -> Detection | None:
        """The best ``(priority, id)`` pattern matching the reply, or None (SPEC §3.3).

        A scope-``anywhere`` pattern matches anywhere in the head window
        (``text[:head_chars]``) or the tail window (``text[-tail_chars:]``,
        scanned only when the reply is longer than the head); a scope-``error``
        pattern only where the reply is an error (:func:`error_regions`).
        ``^`` matches only at the start of the reply and ``$``/``\\z`` only at
        its end, never at a window edge; ``(?m:^)`` matches after a newline
        inside a window. Blank text matches nothing (the caller decides
        what a blank reply is, see :func:`blank_detection`).

        Once a pattern places the reply as an error, the body's cause beats
        its wrapper or status: the verdict is the best pattern whose words
        appear anywhere in the windows (as :meth:`name` finds it), which may
        be a better one than the placed pattern ("Service unavailable - try
        again later … The model is overloaded." is ``overloaded``).
        """
        return next(self._verdicts(text, head_chars=head_chars, tail_chars=tail_chars), None)

    def name(self, text: str | None, *, head_chars: int, tail_chars: int) -> Detection | None:
        """The best ``(priority, id)`` pattern whose words appear anywhere in the
        head or tail window, whatever its scope, or None: what names the category
        of a reply already judged a failed call by other means (SPEC §3.3a: the
        model decides *that* it failed, the provider's words say *how*)."""
        return next(self._iter_matches(text, head_chars=head_chars, tail_chars=tail_chars, placed=False), None)


def reply_rules_detect(matcher: Matcher, text: str | None, *, head_chars: int, tail_chars: int) -> Detection | None:
    """The rules' verdict on a reply (pure; SPEC §3.3): a blank reply (:func:`is_blank`, an empty answer envelope
    included) is FAILED as :func:`blank_detection`, else the best pattern of ``matcher`` that matches, or None."""
    if is_blank(text):
        return blank_detection()
    return matcher.detect(text, head_chars=head_chars, tail_chars=tail_chars)


def compile_patterns(rules: Iterable[Any]) -> Matcher:
    """Compile rules into a ``Matcher`` (pure; SPEC §3.3).

    ``rules``: objects or dicts with ``id, key, name, pattern, category,
    retryable, priority, scope`` (a missing scope is ``anywhere``; optionally
    ``enabled``: disabled ones are left out). A stored ``regex:`` that no
    longer validates is skipped with a warning. Raises :class:`SetTooCostly`
    when the set as a whole is too costly to compile.
    """
    return Matcher(_rule_from(rule) for rule in rules if _field(rule, "enabled", True) is not False)
