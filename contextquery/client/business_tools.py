"""The agent side of the tool gateway (SPEC §7.4): a visit's business tools over HTTP. No Django.

The MCP server (:mod:`contextquery.client.mcp_server`) serves these next to the
three context tools; each function takes the visit's
:class:`~contextquery.client.context_tools.ContextQueryConfig`:

* :func:`list_tools` — ``POST /internal/tools/list``: the visit's tools
  ``[{name, description, inputSchema, kind, approval}]``;
* :func:`call_business_tool` — ``POST /internal/tools/call`` with a fresh
  idempotency key (so the one retry after a connection error or a 5xx cannot
  call the service twice); answers one sentence, plus the business answer in a
  ```json block when it succeeded; a call waiting for a person answers
  "queued for approval as call N; ask get_tool_call_status later";
* :func:`get_tool_call_status` — ``POST /internal/tools/status``: where a call stands.

The same safety rules as the context tools (:mod:`context_tools`): loopback
``base_url`` only, proxy variables ignored, no redirects, a response with
``Set-Cookie`` or ``Location`` discarded, bodies over 128 KiB refused, only
known fields read, the token never returned or logged. Timeouts: 5 s for list
and status; a call may wait for the business service (at most 20 s on the
server), so it gets :data:`CALL_TIMEOUT_SECONDS`. The business service's
secret never reaches this side: the server holds it and calls the service.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid

import requests

from contextquery.client.context_tools import (
    MAX_RESPONSE_BYTES,
    MAX_TIMEOUT_SECONDS,
    RETRY_BACKOFF_SECONDS,
    ContextQueryConfig,
    _new_session,
    _server_message,
    is_loopback_url,
)
from contextquery.client.wire import STATUS_TOOL_NAME, TOKEN_HEADER, TOOL_ENDPOINTS, token_mask

logger = logging.getLogger("hermes_ops.business_tools")

#: A call waits for the business service on the server (≤ 20 s) before it answers.
CALL_TIMEOUT_SECONDS = 25.0
#: A tool name as bindings spell it (SPEC §7.1); anything else in a listing is skipped.
_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_CALL_FIELDS = ("callId", "tool", "status", "result", "httpStatus", "error", "note", "truncated", "originalBytes")
_TOOL_FIELDS = ("name", "description", "inputSchema", "kind", "approval")

#: The MCP schema of :data:`STATUS_TOOL_NAME`.
STATUS_TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "call_id": {
            "type": "integer",
            "minimum": 1,
            "description": "The call number a business tool answered with ('queued for approval as call N').",
        }
    },
    "required": ["call_id"],
    "additionalProperties": False,
}
STATUS_TOOL_DESCRIPTION = (
    "Ask where a business tool call stands: a call that waited for a person's approval tells here whether it "
    "was approved (with the tool's answer), rejected (with the person's note) or expired. Ask at most once "
    "a second; a person may take minutes."
)


class ToolGatewayError(Exception):
    """A request to the tool gateway that produced no usable answer; ``str()`` is the sentence for the LLM."""


def _text(value, limit: int = 500) -> str:
    """A server-given text made safe for a sentence: one line, bounded, no code fences."""
    if not isinstance(value, str):
        return ""
    return " ".join(value.split())[:limit].replace("```", "'")


def _refusal(endpoint: str, status: int, message: str, what: str) -> str:
    detail = f": {message.rstrip('.')}." if message else "."
    if status == 401:
        return (
            "The context token was refused (it expired, was revoked or is unknown), so business tools cannot "
            "be used for this visit any more."
        )
    if status == 404:
        return f"Nothing was found for {what}{detail}"
    if status == 409:
        return f"The tool gateway refused {what}{detail}"
    if status == 422:
        return f"The tool gateway did not accept {what}{detail}"
    if status == 429:
        if endpoint == "status":
            return f"Asked about {what} too soon; wait a moment before asking {STATUS_TOOL_NAME} again."
        return "The business tool call budget of this visit is spent; no more business tools can be called."
    if status == 503:
        return "The tool gateway is disabled on the server, so business tools cannot be used."
    if status == 403:
        return f"The tool gateway refused {what}{detail}"
    if status >= 500:
        return f"The tool gateway failed with HTTP {status} on {what}; try again later."
    return f"The tool gateway answered HTTP {status} on {what}{detail}"


def _read(response: requests.Response, what: str) -> bytes:
    declared = response.headers.get("Content-Length")
    too_big = (
        f"The tool gateway's answer about {what} was larger than {MAX_RESPONSE_BYTES // 1024} KiB and was refused."
    )
    if declared and declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
        raise ToolGatewayError(too_big)
    chunks, size = [], 0
    for chunk in response.iter_content(chunk_size=16384):
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise ToolGatewayError(too_big)
        chunks.append(chunk)
    return b"".join(chunks)


def _post(config: ContextQueryConfig, endpoint: str, payload: dict, *, what: str, timeout: float) -> dict:
    """POST ``payload`` to ``/internal/tools/<endpoint>`` and return the envelope's ``data`` dict.

    At most two attempts: the second only after a connection error or a 5xx
    (a call carries its idempotency key, so a retry returns the same call).
    Raises :class:`ToolGatewayError` with the sentence for the LLM on any failure.
    """
    if not is_loopback_url(config.base_url):
        logger.warning("tool gateway refused: base_url is not a loopback address")
        raise ToolGatewayError(
            "Business tools are refused: the gateway address is not on this machine (loopback only)."
        )
    url = config.base_url.rstrip("/") + TOOL_ENDPOINTS[endpoint]
    headers = {"Content-Type": "application/json", "Accept": "application/json", TOKEN_HEADER: config.token}
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    for attempt in (1, 2):
        try:
            with (
                _new_session() as session,
                session.post(
                    url, data=body, headers=headers, timeout=timeout, allow_redirects=False, stream=True
                ) as response,
            ):
                status = response.status_code
                if "Set-Cookie" in response.headers or "Location" in response.headers:
                    logger.warning(
                        "tools %s: response with Set-Cookie or Location discarded (HTTP %s, token %s)",
                        endpoint,
                        status,
                        token_mask(config.token),
                    )
                    raise ToolGatewayError(
                        f"The tool gateway gave an unexpected answer (a redirect or a cookie) about {what}; "
                        "it was discarded."
                    )
                if status >= 500 and attempt == 1:
                    logger.info("tools %s: HTTP %s, retrying once", endpoint, status)
                    time.sleep(RETRY_BACKOFF_SECONDS)
                    continue
                raw = _read(response, what)
        except requests.ConnectionError as exc:
            if attempt == 1:
                logger.info("tools %s: connection error (%s), retrying once", endpoint, type(exc).__name__)
                time.sleep(RETRY_BACKOFF_SECONDS)
                continue
            raise ToolGatewayError("The tool gateway could not be reached, so business tools cannot be used now.")
        except requests.Timeout:
            raise ToolGatewayError(f"The tool gateway did not answer within {timeout:g} seconds about {what}.")
        except requests.RequestException as exc:
            logger.info("tools %s: request failed (%s)", endpoint, type(exc).__name__)
            raise ToolGatewayError(f"The request to the tool gateway failed for {what}.")
        try:
            envelope = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            envelope = None
        if status != 200:
            raise ToolGatewayError(_refusal(endpoint, status, _server_message(envelope, config.token), what))
        if not isinstance(envelope, dict) or not isinstance(envelope.get("data"), dict):
            raise ToolGatewayError(f"The tool gateway answered something that is not the expected JSON about {what}.")
        return envelope["data"]
    raise AssertionError("unreachable")  # pragma: no cover


def list_tools(config: ContextQueryConfig) -> list[dict]:
    """The visit's business tools ``[{name, description, inputSchema, kind, approval}]`` (SPEC §7.2).

    Entries with a name that is not a binding's or a schema that is not an
    object are skipped. Raises :class:`ToolGatewayError` when the list cannot be read.
    """
    data = _post(config, "list", {"runId": config.run_id}, what="the tools of this node", timeout=MAX_TIMEOUT_SECONDS)
    tools = data.get("tools") if isinstance(data.get("tools"), list) else []
    listed = []
    for entry in tools:
        if not isinstance(entry, dict):
            continue
        tool = {key: entry.get(key) for key in _TOOL_FIELDS}
        if not isinstance(tool["name"], str) or not _TOOL_NAME.fullmatch(tool["name"]):
            continue
        if not isinstance(tool["inputSchema"], dict):
            continue
        tool["description"] = tool["description"] if isinstance(tool["description"], str) else ""
        listed.append(tool)
    return listed


def tool_description(tool: dict) -> str:
    """The description the LLM sees: the binding's, plus what approval means for it."""
    text = tool.get("description") or f"The business tool {tool['name']}."
    if tool.get("approval") == "required":
        text += (
            " A person must approve each call first: it answers 'queued for approval as call N'; then ask "
            f"{STATUS_TOOL_NAME}(call_id=N) later for the outcome."
        )
    return text


def _json_block(summary: str, value) -> str:
    return f"{summary}\n\n```json\n{json.dumps(value, ensure_ascii=False, indent=2)}\n```"


def describe_call(data: dict, *, name: str | None = None) -> str:
    """One sentence on where a call stands; a succeeded call adds its answer in a ```json block."""
    call = {key: data.get(key) for key in _CALL_FIELDS}
    tool = call["tool"] if isinstance(call["tool"], str) else (name or "the tool")
    call_id = call["callId"] if isinstance(call["callId"], int) else "?"
    status = call["status"]
    if status == "SUCCEEDED":
        summary = f"The tool {tool} answered (call {call_id}, HTTP {call['httpStatus']})"
        if call["truncated"]:
            size = call["originalBytes"]
            summary += f", truncated from {size} bytes" if isinstance(size, int) else ", truncated"
        return _json_block(summary + ".", call["result"])
    if status == "PENDING_APPROVAL":
        return f"The call of {tool} is queued for approval as call {call_id}; ask {STATUS_TOOL_NAME} later."
    if status == "EXECUTING":
        return f"Call {call_id} of {tool} is being executed now; ask {STATUS_TOOL_NAME} again in a moment."
    if status == "FAILED":
        return f"The tool {tool} failed (call {call_id}): {_text(call['error']) or 'no reason given.'}"
    if status == "REJECTED":
        note = _text(call["note"])
        return f"A person rejected call {call_id} of {tool}, so it was never executed" + (
            f"; their note: {note}" if note else "."
        )
    if status == "EXPIRED":
        return f"Call {call_id} of {tool} expired before anyone approved it; it was never executed."
    return f"The tool gateway gave call {call_id} of {tool} a status this client does not know."


def call_business_tool(config: ContextQueryConfig, name: str, arguments: dict | None) -> str:
    """Call the visit's tool ``name`` with ``arguments`` through the gateway; the answer for the LLM."""
    if not isinstance(arguments, dict):
        return f"The arguments of {name} must be a JSON object."
    payload = {"runId": config.run_id, "name": name, "arguments": arguments, "idempotencyKey": uuid.uuid4().hex}
    try:
        data = _post(config, "call", payload, what=f"the call of {name}", timeout=CALL_TIMEOUT_SECONDS)
    except ToolGatewayError as failure:
        return str(failure)
    return describe_call(data, name=name)


def get_tool_call_status(config: ContextQueryConfig, call_id) -> str:
    """Where call ``call_id`` of this visit stands; the answer for the LLM."""
    if isinstance(call_id, str) and call_id.strip().isdigit():
        call_id = int(call_id.strip())
    if isinstance(call_id, float) and call_id.is_integer():
        call_id = int(call_id)
    if isinstance(call_id, bool) or not isinstance(call_id, int) or call_id < 1:
        return "The argument call_id must be the call number a business tool answered with (1 or more)."
    try:
        data = _post(
            config,
            "status",
            {"runId": config.run_id, "callId": call_id},
            what=f"call {call_id}",
            timeout=MAX_TIMEOUT_SECONDS,
        )
    except ToolGatewayError as failure:
        return str(failure)
    return describe_call(data)


__all__ = [
    "CALL_TIMEOUT_SECONDS",
    "STATUS_TOOL_DESCRIPTION",
    "STATUS_TOOL_SCHEMA",
    "ToolGatewayError",
    "call_business_tool",
    "describe_call",
    "get_tool_call_status",
    "list_tools",
    "tool_description",
]
