"""A business service that fails (SPEC §7.1, §7.2): down, slow, 500, redirecting,
answering 5 MB, or dripping its answer — each is a FAILED call with its reason,
answered through ``/internal/tools/call`` with envelope 200, and nothing hangs."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from contextquery import tool_gateway
from contextquery.models import ToolCall
from tests.contextquery.agent_fixtures import free_port
from tests.support import envelope

pytestmark = pytest.mark.django_db

LOOKUP = {"orderId": "A-1001"}


@pytest.fixture
def point_lookup_at(settings, bindings):
    """``point_lookup_at(url, timeout=5)``: order_lookup now calls ``url`` (its host allowed)."""

    def point(url, *, timeout=5):
        port = url.split(":")[2].split("/")[0]
        settings.HERMES_TOOL_ALLOWED_HOSTS = [*settings.HERMES_TOOL_ALLOWED_HOSTS, f"127.0.0.1:{port}"]
        tool_gateway.binding_update(
            target=bindings["order_lookup"], values={"endpoint": url, "timeout_seconds": timeout}, via="command"
        )

    return point


def call_lookup(ask_tool, tv) -> tuple[dict, float]:
    started = time.monotonic()
    response = ask_tool("call", tv.token, {"runId": tv.run_id, "name": "order_lookup", "arguments": LOOKUP})
    return envelope(response, 200), time.monotonic() - started


class RawServer:
    """A loopback TCP server whose every connection is handled by ``serve(conn)`` in a thread."""

    def __init__(self, serve):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.serve = serve
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/x"

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        try:
            conn.recv(65536)
            self.serve(conn)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.listener.close()


@pytest.fixture
def raw_server():
    servers = []

    def start(serve):
        server = RawServer(serve)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def test_a_service_that_is_down_is_a_failed_call(ask_tool, tool_visit, point_lookup_at):
    point_lookup_at(f"http://127.0.0.1:{free_port()}/orders/lookup")
    data, took = call_lookup(ask_tool, tool_visit())
    assert data["status"] == "FAILED" and "could not be reached" in data["error"]
    assert took < 10


def test_a_slow_service_is_a_failed_call_after_the_bindings_timeout(
    ask_tool, tool_visit, point_lookup_at, scripted_server
):
    slow = scripted_server({"status": 200, "body": {"late": True}, "delay": 4})
    point_lookup_at(slow.url + "/orders/lookup", timeout=1)
    data, took = call_lookup(ask_tool, tool_visit())
    assert data["status"] == "FAILED" and data["error"] == "The business service did not answer within 1 seconds."
    assert took < 3


def test_a_500_is_a_failed_call_with_the_status_and_the_services_answer(
    ask_tool, tool_visit, point_lookup_at, scripted_server
):
    broken = scripted_server({"status": 500, "body": {"error": "database on fire"}})
    point_lookup_at(broken.url + "/orders/lookup")
    data, _ = call_lookup(ask_tool, tool_visit())
    assert (data["status"], data["httpStatus"], data["error"]) == (
        "FAILED",
        500,
        "The business service answered HTTP 500.",
    )
    assert data["result"] == {"error": "database on fire"}
    assert broken.hits == 1  # never retried: a retry could act twice


def test_a_redirect_is_a_failed_call_and_is_not_followed(ask_tool, tool_visit, point_lookup_at, scripted_server, shop):
    moving = scripted_server({"status": 302, "headers": {"Location": shop.url + "/orders/lookup"}})
    point_lookup_at(moving.url + "/orders/lookup")
    data, _ = call_lookup(ask_tool, tool_visit())
    assert (
        data["status"] == "FAILED" and data["httpStatus"] == 302 and "redirect, which is not followed" in data["error"]
    )
    assert shop.seen == []


def test_an_answer_of_5_mb_is_a_failed_call(ask_tool, tool_visit, point_lookup_at, scripted_server):
    big = scripted_server({"status": 200, "body": b'"' + b"x" * (5 * 1024 * 1024) + b'"'})
    point_lookup_at(big.url + "/orders/lookup")
    data, _ = call_lookup(ask_tool, tool_visit())
    assert data["status"] == "FAILED" and "more than the 1 MiB allowed" in data["error"]
    assert ToolCall.objects.get().result is None


def test_an_answer_of_5_mb_without_a_length_is_cut_off_at_1_mib(ask_tool, tool_visit, point_lookup_at, raw_server):
    def stream(conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
        for _ in range(80):
            conn.sendall(b"y" * 65536)

    point_lookup_at(raw_server(stream).url)
    data, _ = call_lookup(ask_tool, tool_visit())
    assert data["status"] == "FAILED" and data["error"] == "The business service answered more than the 1 MiB allowed."


def test_an_answer_that_drips_in_is_cut_off_at_the_timeout(ask_tool, tool_visit, point_lookup_at, raw_server):
    stop = threading.Event()

    def drip(conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
        while not stop.is_set():
            conn.sendall(b" ")
            time.sleep(0.2)

    point_lookup_at(raw_server(drip).url, timeout=2)
    try:
        data, took = call_lookup(ask_tool, tool_visit())
    finally:
        stop.set()
    assert data["status"] == "FAILED" and "within 2 seconds" in data["error"]
    assert took < 4


def test_an_answer_that_is_not_json_is_kept_as_text(ask_tool, tool_visit, point_lookup_at, scripted_server):
    plain = scripted_server(
        {"status": 200, "body": "order A-1001: delivered", "headers": {"Content-Type": "text/plain"}}
    )
    point_lookup_at(plain.url + "/orders/lookup")
    data, _ = call_lookup(ask_tool, tool_visit())
    assert (data["status"], data["result"]) == ("SUCCEEDED", "order A-1001: delivered")


def test_a_nul_or_lone_surrogate_in_an_answer_is_stored_replaced(
    ask_tool, tool_visit, point_lookup_at, scripted_server
):
    odd = scripted_server({"status": 200, "body": b'{"a": "x\\u0000y", "b": "\\ud800"}'})
    point_lookup_at(odd.url + "/orders/lookup")
    data, _ = call_lookup(ask_tool, tool_visit())
    assert data["status"] == "SUCCEEDED"
    assert ToolCall.objects.get().result == {"a": "x\ufffdy", "b": "?"}
