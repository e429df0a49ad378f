"""Fixtures for the agent-side tests: a live visit with a token, a scripted
misbehaving HTTP server, and a guard that puts back the process state
hermes-agent changes (``sys.stdout``/``sys.stderr``, root-logger handlers).

Test modules import the fixtures they use by name.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from contextquery.client.context_tools import ContextQueryConfig
from tests.contextquery.context_fixtures import CHAIN

REPO = Path(__file__).resolve().parents[2]
OUTPUT_A = {"status": 200, "message": "调用成功", "data": {"result": "The capital of France is Paris.", "count": 10}}


@pytest.fixture
def live_flyback(flyback, issue, live_server):
    """The AGENTIC fly-back run (A→B→C→G→C) on the live server, and a config for
    C's running second visit: ``(recorder, config)``."""
    config = ContextQueryConfig(
        live_server.url, issue(flyback.by["C2"]), flyback.run.run_id, str(flyback.by["C2"].visit_uuid)
    )
    return flyback, config


@pytest.fixture
def live_chain(make_run, issue, live_server):
    """``live_chain(run_id)``: a run A→B on the live server with A done (OUTPUT_A) and
    B running; returns ``(recorder, config for B)``."""

    def make(run_id=None):
        rec = make_run(CHAIN, "DAG", run_id=run_id)
        a = rec.visit("A", output=OUTPUT_A, logs=[("THINKING", "Look it up.", None)])
        b = rec.visit("B", a, status="RUNNING")
        rec.by = {"A": a, "B": b}
        return rec, ContextQueryConfig(live_server.url, issue(b), rec.run.run_id, str(b.visit_uuid))

    return make


@pytest.fixture
def hermes_process_state():
    """hermes-agent wraps ``sys.stdout``/``sys.stderr`` and adds root-logger
    handlers when it builds an agent; put them back so Django's process state
    stays as it was."""
    stdout, stderr = sys.stdout, sys.stderr
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    sys.stdout, sys.stderr = stdout, stderr
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


class ScriptedHTTPServer(ThreadingHTTPServer):
    """A loopback server answering each POST from a script of responses
    ``{status, body (bytes|dict|str), headers, delay, trickle}``; the last one repeats.
    ``hits`` counts the requests, ``seen`` keeps ``(path, headers, body)``."""

    daemon_threads = True

    def __init__(self, script):
        super().__init__(("127.0.0.1", 0), _ScriptedHandler)
        self.script = list(script)
        self.hits = 0
        self.seen = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request, client_address):
        pass  # a client that hangs up early (size cap, timeout) is part of the test

    def take(self, path, headers, body):
        with self._lock:
            step = self.script[min(self.hits, len(self.script) - 1)]
            self.hits += 1
            self.seen.append((path, dict(headers), body))
        return step

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


class _ScriptedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        step = self.server.take(self.path, self.headers, body)
        if step.get("delay"):
            time.sleep(step["delay"])
        payload = step.get("body", b"")
        if isinstance(payload, dict):
            payload = json.dumps(payload).encode()
        elif isinstance(payload, str):
            payload = payload.encode()
        try:
            self.send_response(step.get("status", 200))
            headers = {"Content-Type": "application/json", **step.get("headers", {})}
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if step.get("trickle"):  # one byte at a time, each after a pause (seconds)
                for byte in payload:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(step["trickle"])
            else:
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST


def wire_envelope(data, code=200, message="success") -> dict:
    return {"code": code, "message": message, "data": data}


@pytest.fixture
def scripted_server():
    """``scripted_server(*steps)`` starts a :class:`ScriptedHTTPServer`; stopped after the test."""
    servers = []

    def start(*steps):
        server = ScriptedHTTPServer(steps).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def engine_api(live_server, settings):
    """``engine_api(name="engine-1")``: an :class:`EngineClient` of a new engine
    client user, against the live server, whose ``contextQuery.base_url`` points
    at that server."""
    from contextquery.client.engine import EngineClient
    from contextquery.management.commands.create_engine_client import engine_client_create

    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "BASE_URL": live_server.url}
    clients = []

    def make(name="engine-1"):
        _, token = engine_client_create(name=name)
        client = EngineClient(live_server.url, token)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


TWO_NODES = {
    "nodes": [{"id": "A", "type": "llm", "name": "Look up"}, {"id": "B", "type": "agent", "name": "Answer"}],
    "edges": [{"source": "A", "target": "B"}],
}


def record_a_then_b(client, *, run_id=None, output=OUTPUT_A):
    """Through the recording API: a run A→B with A completed with ``output`` and B
    registered; returns ``(run, a, b)`` (b carries ``contextQuery``)."""
    run = client.create_run(graph=TWO_NODES, run_id=run_id, workflow_name="Capital lookup")
    a = client.register_visit(run["runId"], node_id="A", from_visit_uuids=[])
    client.complete_visit(run["runId"], a["visitUuid"], status="SUCCESS", output=output)
    b = client.register_visit(
        run["runId"], node_id="B", from_visit_uuid=a["visitUuid"], input={"prompt": "What did A find?"}
    )
    return run, a, b


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def http_server(base_url: str):
    """``python -m contextquery.client.mcp_server --http`` on a free port; yields its /mcp URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "contextquery.client.mcp_server", "--http", "--port", str(port)],
        cwd=REPO,
        env={**os.environ, "HERMES_CONTEXT_BASE_URL": base_url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, process.stderr.read().decode()
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
