"""The agent side of context query: three tools an LLM calls while its node runs (SPEC §5).

Importable without Django (only ``requests`` and the standard library), so a
hermes-agent process, the MCP server and tests can all use it.

* :class:`ContextQueryConfig` ``(base_url, token, run_id, visit_uuid)`` is the
  ``contextQuery`` object the recording API hands out (§4.3), held in a
  contextvar; :func:`bind` sets it for the code (and the tool threads hermes
  copies the context into) that runs the agent.
* :func:`get_predecessor_paths`, :func:`get_node_output`, :func:`get_node_meta`
  call ``POST /internal/context/{path,output,meta}`` with ``X-Context-Token``.
  Each returns a string: on success one summary sentence, a blank line and
  the answer in a ```json block; on any failure one plain sentence, no JSON.
* :data:`TOOL_SCHEMAS` are the OpenAI function-calling schemas, generated
  from the signatures; :func:`system_prompt_section` tells the LLM about them.
* :func:`register_hermes_tools` registers them once in hermes-agent's registry
  under the toolset :data:`TOOLSET`.

Safety (SPEC §5, seed internal-context-query-spec §9): loopback ``base_url``
only; the session ignores proxy variables; timeout ≤ 5 s; at most one retry,
only on connection errors and 5xx; redirects are not followed; a response
with ``Set-Cookie`` or ``Location`` is discarded; bodies over 128 KiB are
refused; only known fields are read; the token is never returned or logged
(at most its first 4 characters and ``***``); at most 50 calls per binding.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import inspect
import ipaddress
import json
import logging
import threading
import time
import types
import typing
from urllib.parse import urlsplit

import requests
import urllib3

from contextquery.client.wire import CONTEXT_ENDPOINTS, META_KINDS, TOKEN_HEADER, TOOL_NAMES, TOOLSET, token_mask

logger = logging.getLogger("hermes_ops.context_tools")

#: Upper bound of one HTTP request, in seconds (SPEC §5: ≤ 5 s).
MAX_TIMEOUT_SECONDS = 5.0
#: Largest response body read, in bytes (SPEC §5: 128 KiB).
MAX_RESPONSE_BYTES = 128 * 1024
#: Tool calls allowed per :func:`bind` (SPEC §5).
MAX_CALLS_PER_BINDING = 50
#: Pause before the single retry, in seconds.
RETRY_BACKOFF_SECONDS = 0.3

# Only these keys are read from a response's ``data`` (seed §9.4: a hostile
# predecessor must not be able to smuggle extra fields through).
_PATH_FIELDS = ("visitUuids", "nodeIds", "paths", "backtrackEdgeKeys", "truncated")
_PATH_ENTRY_FIELDS = ("sequence", "visitUuids", "hasBacktrack", "truncated")
_OUTPUT_FIELDS = (
    "nodeId",
    "iterSeq",
    "visitUuid",
    "status",
    "message",
    "data",
    "requestedField",
    "truncated",
    "originalBytes",
)
_META_FIELDS = (
    "nodeId",
    "iterSeq",
    "visitUuid",
    "thinking",
    "toolCalls",
    "todoList",
    "logs",
    "truncated",
    "originalBytes",
)


@dataclasses.dataclass(frozen=True)
class ContextQueryConfig:
    """Where and as whom the tools read a run's history (SPEC §5).

    ``base_url`` is the Hermes Ops root (``http://127.0.0.1:8000``); ``token``
    the 48-hex context token; ``run_id`` and ``visit_uuid`` the visit the
    agent runs for. ``timeout`` (seconds) is capped at 5. The token is left
    out of ``repr`` so a traceback or debug print cannot leak it.
    """

    base_url: str
    token: str = dataclasses.field(repr=False)
    run_id: str
    visit_uuid: str
    timeout: float = MAX_TIMEOUT_SECONDS

    @classmethod
    def from_context_query(cls, obj: dict, **extra) -> ContextQueryConfig:
        """Build from the recording API's ``contextQuery`` object
        ``{base_url, token, run_id, visit_uuid, expires_at}``; other keys are ignored.
        Raises ``ValueError`` when a required key is missing or not a string."""
        values = {}
        for key in ("base_url", "token", "run_id", "visit_uuid"):
            value = (obj or {}).get(key)
            if not isinstance(value, str) or not value:
                raise ValueError(f"contextQuery.{key} is missing or not a non-empty string.")
            values[key] = value
        return cls(**values, **extra)


class CallBudget:
    """The tool calls left to one bound context: at most 50 (SPEC §5). Shared by
    the threads hermes copies the context into, hence the lock. The MCP server
    keeps one per visit, since it binds again for every call."""

    def __init__(self, limit: int = MAX_CALLS_PER_BINDING):
        self.limit = limit
        self.calls = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.calls >= self.limit:
                return False
            self.calls += 1
            return True


class _Binding:
    def __init__(self, config: ContextQueryConfig, budget: CallBudget):
        self.config = config
        self.budget = budget


_BINDING: contextvars.ContextVar[_Binding | None] = contextvars.ContextVar("hermes_context_query", default=None)


@contextlib.contextmanager
def bind(config: ContextQueryConfig, *, budget: CallBudget | None = None):
    """Make ``config`` the context the three tools read, for the ``with`` block.

    Sets the contextvar in the current thread (hermes-agent copies it into its
    tool worker threads) and resets it on exit, so nothing leaks to the next
    request. Each ``bind`` starts a fresh budget of 50 tool calls unless a
    ``budget`` is handed in to share.
    """
    if not isinstance(config, ContextQueryConfig):
        raise TypeError("bind() takes a ContextQueryConfig.")
    token = _BINDING.set(_Binding(config, budget or CallBudget()))
    try:
        yield config
    finally:
        _BINDING.reset(token)


def current_config() -> ContextQueryConfig | None:
    """The config bound in this context, or None."""
    binding = _BINDING.get()
    return binding.config if binding else None


def is_loopback_url(url: str) -> bool:
    """True when ``url`` is http(s) to 127.0.0.0/8, ::1 or localhost, without credentials."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # raises ValueError on a bad port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host or parts.username or parts.password:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# --------------------------------------------------------------------------- HTTP


class _QueryFailed(Exception):
    """A query that produced no usable answer; ``str()`` is the sentence for the LLM."""


def _new_session() -> requests.Session:
    session = requests.Session()
    # Proxy variables must never route a token off the machine (SPEC §5).
    session.trust_env = False
    return session


def _server_message(body: dict | None, token: str) -> str:
    """The envelope's ``message``, shortened, with the token removed if echoed."""
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        return ""
    message = " ".join(message.split())[:300]
    return message.replace("```", "'")


def token_scrubbed(text: str, token: str) -> str:
    """``text`` with every occurrence of ``token`` replaced by its mask (first 4
    characters and ``***``), whatever its case and however it is split: the
    token's hex digits are matched with anything that is not a hex digit
    between them (spaces, line breaks, quotes, JSON punctuation), so an echo,
    an upper-cased copy or a token cut across two JSON strings is caught too."""
    if not token or not text:
        return text
    needle = token.lower()
    digits, where = [], []
    for index, char in enumerate(text):
        if char in "0123456789abcdefABCDEF":
            digits.append(char.lower())
            where.append(index)
    hexes = "".join(digits)
    spans, start = [], hexes.find(needle)
    while start >= 0:
        spans.append((where[start], where[start + len(needle) - 1] + 1))
        start = hexes.find(needle, start + len(needle))
    for begin, end in reversed(spans):
        text = text[:begin] + token_mask(token) + text[end:]
    return text


def _remaining(deadline: float, timeout: float, what: str) -> float:
    """Seconds left before ``deadline``; :class:`_QueryFailed` when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _QueryFailed(f"The context service did not answer within {timeout:g} seconds while reading {what}.")
    return left


def _limit_next_read(response: requests.Response, seconds: float) -> None:
    """Let the next socket read wait at most ``seconds``: requests' read timeout
    applies to each read, so without this a server trickling one byte at a time
    could hold a call far past its deadline. Best effort on urllib3's connection."""
    sock = getattr(getattr(getattr(response, "raw", None), "_connection", None), "sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 0.001))


def _chunks(response: requests.Response, *, deadline: float, timeout: float, what: str):
    """The body as it arrives, each socket read bounded by what is left of the
    deadline: ``read1`` returns after one read, so a server sending a byte at a
    time is stopped at the deadline rather than after its whole body."""
    raw = response.raw
    if not hasattr(raw, "read1"):  # urllib3 1.x: reads of a whole chunk, checked between chunks
        for chunk in response.iter_content(chunk_size=16384):
            _remaining(deadline, timeout, what)
            yield chunk
        return
    while True:
        _limit_next_read(response, _remaining(deadline, timeout, what))
        try:
            chunk = raw.read1(16384, decode_content=True)
        except urllib3.exceptions.HTTPError:
            _remaining(deadline, timeout, what)
            raise _QueryFailed(f"The connection to the context service broke while reading {what}.") from None
        if not chunk:
            return
        yield chunk


def _read_body(response: requests.Response, *, deadline: float, timeout: float, what: str) -> bytes:
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
        raise _QueryFailed(
            f"The context service sent an answer larger than {MAX_RESPONSE_BYTES // 1024} KiB, which was refused; "
            "ask for a narrower nodeId or field."
        )
    chunks, size = [], 0
    for chunk in _chunks(response, deadline=deadline, timeout=timeout, what=what):
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise _QueryFailed(
                f"The context service sent an answer larger than {MAX_RESPONSE_BYTES // 1024} KiB, which was refused; "
                "ask for a narrower nodeId or field."
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _failure_sentence(status: int, message: str, what: str) -> str:
    detail = f" ({message.rstrip('.')})" if message else ""
    if status == 401:
        return (
            "The context token was refused (it expired, was revoked or is unknown), "
            "so the run's history can no longer be read for this visit."
        )
    if status == 403:
        return f"The context service refused to read {what}{detail}."
    if status == 404:
        return f"Nothing was found for {what}{detail}; the node may never have been visited before this one."
    if status == 422:
        return f"The context service did not accept the question about {what}{detail}."
    if status == 429:
        return "The context query budget of this visit is spent; no more history can be read."
    if status == 503:
        return "Context query is disabled on the server, so the run's history cannot be read."
    if status >= 500:
        return f"The context service failed with HTTP {status} while reading {what}; try again later."
    return f"The context service answered HTTP {status} while reading {what}{detail}."


def _post(config: ContextQueryConfig, endpoint: str, payload: dict, what: str) -> dict:
    """POST ``payload`` to an internal endpoint and return the envelope's ``data`` dict.

    At most two attempts: the second only after a connection error or a 5xx,
    both within one deadline of ``timeout`` seconds (≤ 5) for the whole call,
    however slowly the server sends. Raises :class:`_QueryFailed` with the
    sentence for the LLM on any failure.
    """
    url = config.base_url.rstrip("/") + CONTEXT_ENDPOINTS[endpoint]
    headers = {"Content-Type": "application/json", "Accept": "application/json", TOKEN_HEADER: config.token}
    timeout = min(float(config.timeout), MAX_TIMEOUT_SECONDS)
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    deadline = time.monotonic() + timeout
    for attempt in (1, 2):
        started = time.monotonic()
        try:
            left = _remaining(deadline, timeout, what)
            with (
                _new_session() as session,
                session.post(
                    url, data=body, headers=headers, timeout=left, allow_redirects=False, stream=True
                ) as response,
            ):
                status = response.status_code
                if "Set-Cookie" in response.headers or "Location" in response.headers:
                    logger.warning(
                        "context %s: response with Set-Cookie or Location discarded (HTTP %s, token %s)",
                        endpoint,
                        status,
                        token_mask(config.token),
                    )
                    raise _QueryFailed(
                        f"The context service gave an unexpected answer (a redirect or a cookie) while reading {what}; "
                        "it was discarded."
                    )
                if status >= 500 and attempt == 1:
                    logger.info("context %s: HTTP %s, retrying once", endpoint, status)
                    time.sleep(RETRY_BACKOFF_SECONDS)
                    continue
                raw = _read_body(response, deadline=deadline, timeout=timeout, what=what)
        except requests.ConnectionError as exc:
            # ConnectTimeout is a ConnectionError; a read timeout is not, and a
            # slow server is not asked twice.
            if attempt == 1:
                logger.info("context %s: connection error (%s), retrying once", endpoint, type(exc).__name__)
                time.sleep(RETRY_BACKOFF_SECONDS)
                continue
            raise _QueryFailed("The context service could not be reached, so the run's history cannot be read now.")
        except (requests.Timeout, TimeoutError):
            raise _QueryFailed(f"The context service did not answer within {timeout:g} seconds while reading {what}.")
        except requests.RequestException as exc:
            logger.info("context %s: request failed (%s)", endpoint, type(exc).__name__)
            raise _QueryFailed(f"The request to the context service failed while reading {what}.")
        logger.debug(
            "context %s: HTTP %s in %.0f ms (token %s)",
            endpoint,
            status,
            (time.monotonic() - started) * 1000,
            token_mask(config.token),
        )
        try:
            envelope = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            envelope = None
        if status != 200:
            raise _QueryFailed(_failure_sentence(status, _server_message(envelope, config.token), what))
        if not isinstance(envelope, dict) or not isinstance(envelope.get("data"), dict):
            raise _QueryFailed(
                f"The context service answered something that is not the expected JSON while reading {what}."
            )
        code = envelope.get("code", 200)
        if isinstance(code, int) and code != 200:
            raise _QueryFailed(_failure_sentence(code, _server_message(envelope, config.token), what))
        return envelope["data"]
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------- results


def _pick(data: dict, fields: tuple[str, ...]) -> dict:
    return {key: data[key] for key in fields if key in data}


def _success(summary: str, data: dict) -> str:
    return f"{summary}\n\n```json\n{json.dumps(data, ensure_ascii=False, indent=2)}\n```"


def _sentence(summary: str, data: dict) -> str:
    """End the one-sentence summary, saying when the server truncated the answer."""
    if data.get("truncated"):
        size = data.get("originalBytes")
        size_text = f" from {size} bytes" if isinstance(size, int) else ""
        return f"{summary}, truncated{size_text}; ask again with a narrower node_id or field for the rest."
    return summary + "."


def _run_tool(what: str, call) -> str:
    """Shared frame of the three tools: the binding, the call budget, the loopback rule."""
    binding = _BINDING.get()
    if binding is None:
        return "Context query is not available: this agent run was not given a workflow context."
    config = binding.config
    if not is_loopback_url(config.base_url):
        logger.warning("context query refused: base_url is not a loopback address")
        return "Context query is refused: the context service address is not on this machine (loopback only)."
    if not binding.budget.take():
        return (
            f"The limit of {MAX_CALLS_PER_BINDING} context queries for this agent run is reached; "
            "answer with what you already know."
        )
    try:
        return token_scrubbed(call(config), config.token)
    except _QueryFailed as failure:
        return token_scrubbed(str(failure), config.token)


def _check_node_id(value, name: str = "node_id") -> str | None:
    if not isinstance(value, str) or not value.strip():
        return f"The argument {name} must be a non-empty node id string."
    return None


def _check_iter_seq(value) -> str | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        return "The argument iter_seq must be a whole number of 1 or more (1 is the node's first visit)."
    return None


def _visit_label(data: dict) -> str:
    iter_seq = data.get("iterSeq")
    return f"visit {iter_seq}" if isinstance(iter_seq, int) else "its latest visit"


# --------------------------------------------------------------------------- the three tools


def get_predecessor_paths() -> str:
    """List every chain of visits that led to the current node (the predecessor path graph).

    Returns the node ids in order, each path as a sequence of node ids with
    the visit uuids, whether the planner flew back (backtrack), and whether
    the answer was truncated.
    """

    def call(config):
        raw = _post(config, "path", {"runId": config.run_id, "visitUuid": config.visit_uuid}, "the predecessor paths")
        data = _pick(raw, _PATH_FIELDS)
        if isinstance(data.get("paths"), list):
            data["paths"] = [_pick(p, _PATH_ENTRY_FIELDS) for p in data["paths"] if isinstance(p, dict)]
        node_ids = data.get("nodeIds") if isinstance(data.get("nodeIds"), list) else []
        visits = data.get("visitUuids") if isinstance(data.get("visitUuids"), list) else []
        paths = data.get("paths") or []
        before = max(len(visits) - 1, 0)
        summary = (
            f"The current visit has {before} earlier visit{'s' if before != 1 else ''} on "
            f"{len(paths)} path{'s' if len(paths) != 1 else ''} through the nodes "
            f"{', '.join(map(str, node_ids)) or 'none'}"
        )
        if data.get("truncated") or any(p.get("truncated") for p in paths):
            summary += ", but some paths were left out or shortened; ask about a specific node_id for details"
        return _success(summary + ".", data)

    return _run_tool("the predecessor paths", call)


def get_node_output(node_id: str, field: str | None = None, iter_seq: int | None = None) -> str:
    """Read the output envelope of an earlier node of this run.

    ``node_id`` is the node to read; ``field`` picks one key of its data (a
    dotted path reaches nested keys and list indexes); ``iter_seq`` picks
    its n-th visit (default: the latest one before the current visit).
    """
    problem = _check_node_id(node_id) or _check_iter_seq(iter_seq)
    if field is not None and (not isinstance(field, str) or not field.strip()):
        problem = problem or "The argument field must be a non-empty key name when given."
    if problem:
        return problem
    what = f"the output of node {node_id}" + (f" (field {field})" if field else "")

    def call(config):
        payload = {"runId": config.run_id, "nodeId": node_id}
        if field is not None:
            payload["field"] = field
        if iter_seq is not None:
            payload["iterSeq"] = iter_seq
        data = _pick(_post(config, "output", payload, what), _OUTPUT_FIELDS)
        status = data.get("status")
        state = "still running" if status is None else f"status {status}"
        part = f"field {data.get('requestedField') or field} of the output" if field else "The output"
        summary = f"{part[0].upper()}{part[1:]} of node {data.get('nodeId', node_id)} ({_visit_label(data)}, {state})"
        return _success(_sentence(summary, data), data)

    return _run_tool(what, call)


def get_node_meta(
    node_id: str | None = None, visit_uuid: str | None = None, kind: str = "ALL", iter_seq: int | None = None
) -> str:
    """Read what an earlier node did on its way to its output: its thinking, tool calls, todo list.

    Name the visit by ``visit_uuid`` (wins) or by ``node_id`` (with ``iter_seq``
    for its n-th visit, default the latest). ``kind`` is THINKING, TOOL_CALLS,
    TODO or ALL (default, also includes the raw logs).
    """
    if node_id is None and visit_uuid is None:
        return "Give node_id or visit_uuid to say which earlier visit to read."
    problem = (
        (_check_node_id(node_id) if node_id is not None else None)
        or (_check_node_id(visit_uuid, "visit_uuid") if visit_uuid is not None else None)
        or _check_iter_seq(iter_seq)
    )
    kind_upper = kind.upper() if isinstance(kind, str) else ""
    if kind_upper not in META_KINDS:
        problem = problem or f"The argument kind must be one of {', '.join(META_KINDS)}."
    if problem:
        return problem
    what = f"the {kind_upper.lower().replace('_', ' ')} data of " + (
        f"visit {visit_uuid}" if visit_uuid else f"node {node_id}"
    )

    def call(config):
        payload = {"runId": config.run_id, "kind": kind_upper}
        if visit_uuid is not None:
            payload["visitUuid"] = visit_uuid
        if node_id is not None:
            payload["nodeId"] = node_id
        if iter_seq is not None:
            payload["iterSeq"] = iter_seq
        data = _pick(_post(config, "meta", payload, what), _META_FIELDS)
        label = {
            "THINKING": "Thinking",
            "TOOL_CALLS": "Tool calls",
            "TODO": "Todo list",
            "ALL": "Thinking, tool calls, todo list and logs",
        }[kind_upper]
        summary = f"{label} of node {data.get('nodeId', node_id or '?')} ({_visit_label(data)})"
        return _success(_sentence(summary, data), data)

    return _run_tool(what, call)


TOOLS = {fn.__name__: fn for fn in (get_predecessor_paths, get_node_output, get_node_meta)}


# --------------------------------------------------------------------------- schemas and prompt

_DESCRIPTIONS = {
    "get_predecessor_paths": (
        "List the chains of earlier node visits of this workflow run that led to the current node "
        "(node ids in order, visit uuids, backtracks). Call it first to see which nodes you can read."
    ),
    "get_node_output": (
        "Read the output of an earlier node of this workflow run (one that led to the current node). "
        "Use field to read one key of its data when the whole output is large or truncated."
    ),
    "get_node_meta": (
        "Read the intermediate data of an earlier node visit: its thinking, tool calls, todo list, or all "
        "with raw logs. Name the visit by node_id (optionally iter_seq) or by visit_uuid."
    ),
}
_PARAMETER_DESCRIPTIONS = {
    "node_id": "Id of the earlier node, as listed by get_predecessor_paths (nodeIds).",
    "field": "Optional key of the node's output data to read; a dotted path reaches nested keys, e.g. 'result.items.0'.",
    "iter_seq": "Optional visit number of that node (1 = its first visit); default: its latest visit before this one.",
    "visit_uuid": "Optional uuid of one visit (from get_predecessor_paths); wins over node_id.",
    "kind": "Which data to read: THINKING, TOOL_CALLS, TODO or ALL (default ALL).",
}
_JSON_TYPES = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _json_type(annotation) -> str:
    """The JSON-schema type of a parameter annotated ``T`` or ``T | None``."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    return _JSON_TYPES[annotation]


def _schema_for(fn) -> dict:
    hints = typing.get_type_hints(fn)
    properties, required = {}, []
    for name, param in inspect.signature(fn).parameters.items():
        prop = {"type": _json_type(hints[name]), "description": _PARAMETER_DESCRIPTIONS[name]}
        if name == "kind":
            prop["enum"] = list(META_KINDS)
            prop["default"] = param.default
        if name == "iter_seq":
            prop["minimum"] = 1
        properties[name] = prop
        if param.default is inspect.Parameter.empty:
            required.append(name)
    return {
        "name": fn.__name__,
        "description": _DESCRIPTIONS[fn.__name__],
        "parameters": {"type": "object", "properties": properties, "required": required, "additionalProperties": False},
    }


#: ``{name: {name, description, parameters}}`` — the body of an OpenAI function tool.
TOOL_SCHEMAS = {name: _schema_for(fn) for name, fn in TOOLS.items()}


def openai_tools() -> list[dict]:
    """The three tools as the ``tools`` list of an OpenAI chat-completions request."""
    return [{"type": "function", "function": schema} for schema in TOOL_SCHEMAS.values()]


def mcp_tool_name(server: str, tool: str) -> str:
    """The name hermes-agent gives ``tool`` of MCP server ``server``: ``mcp__<server>__<tool>``."""
    import re

    def clean(value):
        return re.sub(r"[^A-Za-z0-9_]", "_", value)

    return f"mcp__{clean(server)}__{clean(tool)}"


_PROMPT = {
    "en": (
        "## Workflow context\n"
        "You are one node of a workflow run. Three tools read what earlier nodes of this run did:\n"
        "- `{paths}()` — the chains of earlier visits that led here (call it first);\n"
        "- `{output}(node_id, field?, iter_seq?)` — the output of an earlier node;\n"
        "- `{meta}(node_id? or visit_uuid?, kind?, iter_seq?)` — its thinking, tool calls or todo list.\n"
        "Call them only when the task needs earlier results, and a few times at most (there is a small budget). "
        "A result marked truncated is incomplete: ask again with a narrower node_id or a field instead of repeating "
        "the same call. A tool that answers with a plain sentence and no JSON has failed; do not retry it in a loop."
    ),
    "zh": (
        "## 工作流上下文\n"
        "你是一次工作流运行中的一个节点。以下三个工具可以读取本次运行中前驱节点的信息：\n"
        "- `{paths}()` —— 到达当前节点的前驱访问路径（请先调用它）；\n"
        "- `{output}(node_id, field?, iter_seq?)` —— 某个前驱节点的输出；\n"
        "- `{meta}(node_id? 或 visit_uuid?, kind?, iter_seq?)` —— 它的思考过程、工具调用或待办列表。\n"
        "只在任务需要前驱结果时调用，最多调用几次（查询次数有限额）。"
        "结果标记为 truncated 表示被截断：请用更具体的 node_id 或 field 重新查询，不要重复同一个调用。"
        "如果工具只返回一句话而没有 JSON，说明查询失败，不要反复重试。"
    ),
}


def tool_names(mcp_server: str | None = None) -> dict[str, str]:
    """``{tool: name the agent sees}`` — plain, or ``mcp__<server>__<tool>`` over MCP."""
    return {name: mcp_tool_name(mcp_server, name) if mcp_server else name for name in TOOL_NAMES}


def system_prompt_section(language: str = "en", *, mcp_server: str | None = None) -> str:
    """The system-prompt section about the three tools, in ``"en"`` or ``"zh"`` (Simplified Chinese),
    naming them as the agent will see them (plain, or prefixed for MCP server ``mcp_server``)."""
    if language not in _PROMPT:
        raise ValueError(f"language must be one of {', '.join(_PROMPT)}.")
    names = tool_names(mcp_server)
    return _PROMPT[language].format(
        paths=names["get_predecessor_paths"], output=names["get_node_output"], meta=names["get_node_meta"]
    )


# --------------------------------------------------------------------------- hermes-agent


def call_tool(name: str, args: dict | None) -> str:
    """Call tool ``name`` with the JSON arguments an LLM sent; unknown or
    ill-typed arguments give an error sentence, never an exception."""
    fn = TOOLS.get(name)
    if fn is None:
        return f"There is no context tool named {name}."
    args = dict(args or {})
    allowed = inspect.signature(fn).parameters
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        return f"The tool {name} takes no argument named {', '.join(unknown)}; it takes {', '.join(allowed) or 'none'}."
    args = {key: value for key, value in args.items() if value is not None}
    if "iter_seq" in args and isinstance(args["iter_seq"], str) and args["iter_seq"].strip().isdigit():
        args["iter_seq"] = int(args["iter_seq"])
    if "iter_seq" in args and isinstance(args["iter_seq"], float) and args["iter_seq"].is_integer():
        args["iter_seq"] = int(args["iter_seq"])
    missing = [p for p, spec in allowed.items() if spec.default is inspect.Parameter.empty and p not in args]
    if missing:
        return f"The tool {name} needs the argument {', '.join(missing)}."
    return fn(**args)


def _hermes_handler(name: str):
    def handler(args: dict, **kw) -> str:
        return call_tool(name, args if isinstance(args, dict) else {})

    handler.__name__ = f"{name}_handler"
    return handler


_registered = False
_register_lock = threading.Lock()


def register_hermes_tools() -> list[str]:
    """Register the three tools in hermes-agent's registry, once per process (SPEC §5).

    Toolset :data:`TOOLSET`; no ``check_fn`` (hermes caches those
    process-wide, so availability is decided per request by listing the
    toolset in ``enabled_toolsets``). Returns the registered names. Raises
    ``ImportError`` when hermes-agent is not installed.
    """
    global _registered
    from tools.registry import registry

    with _register_lock:
        if not _registered or any(registry.get_entry(n) is None for n in TOOL_NAMES):
            for name, schema in TOOL_SCHEMAS.items():
                registry.register(
                    name=name,
                    toolset=TOOLSET,
                    schema=schema,
                    handler=_hermes_handler(name),
                    description=schema["description"],
                    emoji="🧭",
                )
            _registered = True
    return list(TOOL_NAMES)


__all__ = [
    "META_KINDS",
    "TOOLS",
    "TOOLSET",
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "CallBudget",
    "ContextQueryConfig",
    "bind",
    "call_tool",
    "current_config",
    "get_node_meta",
    "get_node_output",
    "get_predecessor_paths",
    "is_loopback_url",
    "mcp_tool_name",
    "openai_tools",
    "register_hermes_tools",
    "system_prompt_section",
    "tool_names",
]
