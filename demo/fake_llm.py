"""A local fake OpenAI-compatible chat-completions server for driving the real hermes-agent.

The server answers ``POST /v1/chat/completions`` from a script: a list of
steps, one per request, the last one repeated once the list is used up.
A step is one of

* ``tool_calls("get_predecessor_paths", ("get_node_output", {"node_id": "A"}))``
  — the assistant asks for tool calls;
* ``answer("text", reasoning="…")`` — a final assistant message;
* ``http_error(429, "Rate limit reached …", retry_after="0.1")`` — an HTTP error;
* a callable ``step(request_body) -> step`` — decided from the request, e.g. an
  answer that quotes the last tool result.

Both streamed (``stream: true``, server-sent events) and plain responses are
served, since hermes-agent prefers streaming. Every request body is kept in
``server.requests``. Loopback only; the OS picks the port.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tool_calls(*calls, content: str = "", reasoning: str | None = None) -> dict:
    """A step asking for tool calls; each call is a name or ``(name, arguments)``."""
    normalized = []
    for call in calls:
        name, args = (call, {}) if isinstance(call, str) else call
        normalized.append({"id": f"call_{uuid.uuid4().hex[:12]}", "name": name, "arguments": json.dumps(args)})
    return {"kind": "tool_calls", "calls": normalized, "content": content, "reasoning": reasoning}


def answer(text: str, *, reasoning: str | None = None) -> dict:
    """A step giving the final assistant message."""
    return {"kind": "answer", "content": text, "reasoning": reasoning}


def http_error(status: int, message: str, *, error_type: str = "rate_limit_exceeded", retry_after: str | None = None):
    """A step answering with an HTTP error in OpenAI's error shape."""
    return {"kind": "error", "status": status, "message": message, "type": error_type, "retry_after": retry_after}


def last_tool_result(body: dict, name_contains: str = "") -> str:
    """The content of the last ``role: tool`` message whose tool name contains
    ``name_contains`` (the matching assistant tool call decides the name)."""
    names = {}
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            names[call.get("id")] = call.get("function", {}).get("name", "")
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool" and name_contains in names.get(message.get("tool_call_id"), ""):
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content or ""
    return ""


def json_block(text: str):
    """The JSON inside the first ```json block of a tool result, or None.

    hermes-agent hands MCP results to the model wrapped (an untrusted-data
    notice around ``{"result": "<text>"}``); that wrapping is undone first.
    """
    wrapped = text.find('{"result":')
    if wrapped >= 0:
        try:
            inner, _ = json.JSONDecoder().raw_decode(text[wrapped:])
            if isinstance(inner.get("result"), str):
                text = inner["result"]
        except ValueError:
            pass
    start = text.find("```json\n")
    if start < 0:
        return None
    end = text.find("\n```", start + 8)
    return json.loads(text[start + 8 : end])


class FakeLLMServer(ThreadingHTTPServer):
    """``with FakeLLMServer(script) as llm: AIAgent(base_url=llm.base_url, …)``."""

    daemon_threads = True
    model = "fake-model"

    def __init__(self, script: list, *, delay: float = 0.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.delay = delay
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_step(self, body: dict) -> dict:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            step = self.script[min(index, len(self.script) - 1)]
        return step(body) if callable(step) else step

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeLLMServer

    def log_message(self, *args):  # keep test output quiet
        pass

    def _send_json(self, status: int, payload: dict, headers: dict | None = None):
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": self.server.model, "object": "model", "owned_by": "fake", "context_length": 131072}
                    ],
                },
            )
        else:
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})
            return
        step = self.server.next_step(body)
        if self.server.delay:
            time.sleep(self.server.delay)
        if step["kind"] == "error":
            headers = {"Retry-After": step["retry_after"]} if step.get("retry_after") else {}
            self._send_json(
                step["status"],
                {"error": {"message": step["message"], "type": step["type"], "code": step["type"]}},
                headers,
            )
            return
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        if body.get("stream"):
            self._stream(completion_id, step)
        else:
            self._send_json(200, self._completion(completion_id, step))

    @staticmethod
    def _message(step: dict) -> tuple[dict, str]:
        message = {"role": "assistant", "content": step.get("content") or ""}
        if step.get("reasoning"):
            message["reasoning_content"] = step["reasoning"]
        if step["kind"] == "tool_calls":
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in step["calls"]
            ]
            return message, "tool_calls"
        return message, "stop"

    def _completion(self, completion_id: str, step: dict) -> dict:
        message, finish = self._message(step)
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.server.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _stream(self, completion_id: str, step: dict):
        message, finish = self._message(step)
        base = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.server.model,
        }
        chunks = [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]
        if message.get("reasoning_content"):
            chunks.append(
                {"index": 0, "delta": {"reasoning_content": message["reasoning_content"]}, "finish_reason": None}
            )
        if message["content"]:
            chunks.append({"index": 0, "delta": {"content": message["content"]}, "finish_reason": None})
        for index, call in enumerate(message.get("tool_calls", [])):
            chunks.append({"index": 0, "delta": {"tool_calls": [{"index": index, **call}]}, "finish_reason": None})
        chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for choice in chunks:
            self.wfile.write(f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode())
        usage = {**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True
