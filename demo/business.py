"""A small fake business service for ``make demo`` and the tool-gateway tests (SPEC §7).

Two JSON endpoints on a loopback port the OS picks, both guarded by
``Authorization: Bearer <secret>``:

* ``POST /orders/lookup`` ``{orderId}`` → the order (a read);
* ``POST /refunds`` ``{orderId, amount, reason?}`` → the refund it issued (a write).

Every request is kept in ``service.seen`` as ``{path, body, authorized, host,
idempotency_key}``, so a caller can check exactly which calls reached it and
with which credentials.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ORDERS = {
    "A-1001": {"orderId": "A-1001", "status": "delivered", "total": 42.5, "currency": "EUR", "items": 2},
    "A-1002": {"orderId": "A-1002", "status": "shipped", "total": 18.0, "currency": "EUR", "items": 1},
}

#: JSON Schemas of the two endpoints' arguments, as a tool binding declares them.
LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"orderId": {"type": "string", "pattern": "^A-[0-9]{4}$", "description": "The order number."}},
    "required": ["orderId"],
    "additionalProperties": False,
}
REFUND_SCHEMA = {
    "type": "object",
    "properties": {
        "orderId": {"type": "string", "pattern": "^A-[0-9]{4}$", "description": "The order to refund."},
        "amount": {"type": "number", "exclusiveMinimum": 0, "description": "How much to refund."},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["orderId", "amount"],
    "additionalProperties": False,
}


class BusinessService(ThreadingHTTPServer):
    """``with BusinessService(secret) as shop: shop.url …`` — serves until the block ends."""

    daemon_threads = True

    def __init__(self, secret: str):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.secret = secret
        self.seen: list[dict] = []
        self.refunds = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, entry: dict) -> None:
        with self._lock:
            self.seen.append(entry)

    def next_refund_id(self) -> str:
        with self._lock:
            self.refunds += 1
            return f"RF-{7000 + self.refunds}"

    def handle_error(self, request, client_address):
        pass  # a client that hangs up early is not the service's problem

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: BusinessService

    def log_message(self, *args):
        pass

    def _answer(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = None
        authorized = self.headers.get("Authorization") == f"Bearer {self.server.secret}"
        self.server.record(
            {
                "path": self.path,
                "body": body,
                "authorized": authorized,
                "host": self.headers.get("Host"),
                "idempotency_key": self.headers.get("Idempotency-Key"),
            }
        )
        if not authorized:
            self._answer(401, {"error": "missing or wrong bearer token"})
            return
        if not isinstance(body, dict):
            self._answer(400, {"error": "the body must be a JSON object"})
            return
        if self.path == "/orders/lookup":
            order = ORDERS.get(body.get("orderId"))
            if order is None:
                self._answer(404, {"error": f"no order {body.get('orderId')}"})
            else:
                self._answer(200, order)
        elif self.path == "/refunds":
            order = ORDERS.get(body.get("orderId"))
            if order is None:
                self._answer(404, {"error": f"no order {body.get('orderId')}"})
                return
            refund = {
                "refundId": self.server.next_refund_id(),
                "orderId": order["orderId"],
                "amount": body.get("amount"),
                "currency": order["currency"],
                "status": "refunded",
            }
            self._answer(200, refund)
        else:
            self._answer(404, {"error": f"no endpoint {self.path}"})
