"""A Python client for the engine-facing recording API (SPEC §4.3). No Django import.

::

    client = EngineClient("http://127.0.0.1:8000", token)
    run = client.create_run(graph={"nodes": [{"id": "A"}, {"id": "B"}], "edges": [{"source": "A", "target": "B"}]})
    visit = client.register_visit(run["runId"], node_id="A")
    with client.heartbeat(run["runId"], visit["visitUuid"]):
        ...  # run the node; the visit's tokens stay alive
    client.complete_visit(run["runId"], visit["visitUuid"], status="SUCCESS", output={...})

Every method returns the envelope's ``data``. An error answer raises the
:class:`EngineClientError` subclass for its status (``BadRequest`` 400,
``Unauthorized`` 401, ``Forbidden`` 403, ``NotFound`` 404, ``Conflict`` 409,
``PayloadTooLarge`` 413, ``ValidationFailed`` 422, ``RateLimited`` 429,
``Unavailable`` 503); a transport failure raises ``EngineConnectionError``.
"""

from __future__ import annotations

import logging
import threading
from urllib.parse import quote

import requests

logger = logging.getLogger("hermes_ops.engine_client")


class EngineClientError(Exception):
    """An error answer of the recording API: ``status`` (HTTP), ``message`` (the
    envelope's sentence) and ``data`` (the envelope's data, e.g. ``{"errors": …}``)."""

    status: int = 0

    def __init__(self, message: str, *, status: int | None = None, data=None, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.data = data
        self.retry_after = retry_after

    def __str__(self):
        return f"HTTP {self.status}: {self.message}" if self.status else self.message


class EngineConnectionError(EngineClientError):
    """The server could not be reached or did not answer in time."""


class BadRequest(EngineClientError):
    status = 400


class Unauthorized(EngineClientError):
    status = 401


class Forbidden(EngineClientError):
    status = 403


class NotFound(EngineClientError):
    status = 404


class Conflict(EngineClientError):
    status = 409


class PayloadTooLarge(EngineClientError):
    status = 413


class ValidationFailed(EngineClientError):
    """422; ``errors`` is ``{field: [messages]}``."""

    status = 422

    @property
    def errors(self) -> dict:
        return (self.data or {}).get("errors", {}) if isinstance(self.data, dict) else {}


class RateLimited(EngineClientError):
    """429; ``retry_after`` (seconds) when the server said how long to wait."""

    status = 429


class Unavailable(EngineClientError):
    status = 503


ERRORS_BY_STATUS = {
    cls.status: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        PayloadTooLarge,
        ValidationFailed,
        RateLimited,
        Unavailable,
    )
}


def _drop_none(body: dict) -> dict:
    return {key: value for key, value in body.items() if value is not None}


def _seg(value) -> str:
    return quote(str(value), safe="")


class EngineClient:
    """The recording API over HTTP (SPEC §4.3), authenticated with an API token
    (``manage.py create_engine_client NAME`` prints one). ``timeout`` in seconds."""

    def __init__(self, base_url: str, token: str, *, timeout: float = 10.0, session: requests.Session | None = None):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.session = session or requests.Session()
        self.session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json"})

    def __repr__(self):
        return f"EngineClient({self.base_url!r})"

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ transport

    def request(self, method: str, path: str, *, json=None, params=None):
        """Send one request to ``/api<path>`` and return the envelope's ``data``."""
        url = f"{self.base_url}/api{path}"
        try:
            response = self.session.request(method, url, json=json, params=params, timeout=self.timeout)
        except requests.RequestException as exc:
            raise EngineConnectionError(f"{method} {path} failed: {type(exc).__name__}: {exc}") from exc
        try:
            envelope = response.json()
        except ValueError:
            envelope = None
        if not isinstance(envelope, dict):
            envelope = {
                "message": f"HTTP {response.status_code} with a body that is not the JSON envelope",
                "data": None,
            }
        if response.status_code >= 400:
            cls = ERRORS_BY_STATUS.get(response.status_code, EngineClientError)
            retry_after = response.headers.get("Retry-After")
            try:
                retry_after = float(retry_after) if retry_after is not None else None
            except ValueError:
                retry_after = None
            raise cls(
                str(envelope.get("message") or response.reason),
                status=response.status_code,
                data=envelope.get("data"),
                retry_after=retry_after,
            )
        return envelope.get("data")

    # ------------------------------------------------------------------ runs

    def create_run(
        self,
        *,
        graph: dict,
        run_id: str | None = None,
        workflow_id: str | None = None,
        workflow_name: str | None = None,
        mode: str = "DAG",
    ) -> dict:
        """``POST /api/runs`` — the run (``runId`` generated when not given)."""
        return self.request(
            "POST",
            "/runs",
            json=_drop_none(
                {
                    "runId": run_id,
                    "workflowId": workflow_id,
                    "workflowName": workflow_name,
                    "mode": mode,
                    "graph": graph,
                }
            ),
        )

    def list_runs(self, **filters) -> dict:
        """``GET /api/runs`` — ``{count, next, previous, results}``; filters as query parameters."""
        return self.request("GET", "/runs", params=_drop_none(filters))

    def get_run(self, run_id: str) -> dict:
        return self.request("GET", f"/runs/{_seg(run_id)}")

    def finish_run(self, run_id: str, *, status: str) -> dict:
        """``POST /api/runs/{runId}/finish`` with ``SUCCESS``, ``FAILED`` or ``CANCELLED``."""
        return self.request("POST", f"/runs/{_seg(run_id)}/finish", json={"status": status})

    # ------------------------------------------------------------------ visits

    def register_visit(
        self,
        run_id: str,
        *,
        node_id: str,
        visit_uuid: str | None = None,
        node_type: str | None = None,
        node_name: str | None = None,
        from_visit_uuids: list[str] | None = None,
        from_visit_uuid: str | None = None,
        input=None,
        tools: list[str] | None = None,
    ) -> dict:
        """``POST /api/runs/{runId}/visits`` — the visit plus ``contextQuery``
        ``{base_url, token, run_id, visit_uuid, expires_at}`` (None when disabled).
        ``tools`` names the business tools (enabled bindings) the node may call."""
        return self.request(
            "POST",
            f"/runs/{_seg(run_id)}/visits",
            json=_drop_none(
                {
                    "visitUuid": visit_uuid,
                    "nodeId": node_id,
                    "nodeType": node_type,
                    "nodeName": node_name,
                    "fromVisitUuids": from_visit_uuids,
                    "fromVisitUuid": from_visit_uuid,
                    "input": input,
                    "tools": tools,
                }
            ),
        )

    def list_visits(self, run_id: str, **params) -> dict:
        return self.request("GET", f"/runs/{_seg(run_id)}/visits", params=_drop_none(params) or None)

    def get_visit(self, run_id: str, visit_uuid: str) -> dict:
        """One visit with its logs, paths and the reads its LLM made."""
        return self.request("GET", f"/runs/{_seg(run_id)}/visits/{_seg(visit_uuid)}")

    def append_logs(self, run_id: str, visit_uuid: str, logs: list[dict]) -> dict:
        """Append ``[{seq?, type, timestamp?, message?, detail?}]``; duplicates by ``seq`` are skipped."""
        return self.request("POST", f"/runs/{_seg(run_id)}/visits/{_seg(visit_uuid)}/logs", json={"logs": logs})

    def send_heartbeat(self, run_id: str, visit_uuid: str) -> dict:
        """The visit is alive: slides its tokens' expiry."""
        return self.request("POST", f"/runs/{_seg(run_id)}/visits/{_seg(visit_uuid)}/heartbeat", json={})

    def issue_token(self, run_id: str, visit_uuid: str) -> dict:
        """Another ``contextQuery`` object for the visit (429 beyond 4 live tokens)."""
        return self.request("POST", f"/runs/{_seg(run_id)}/visits/{_seg(visit_uuid)}/tokens", json={})

    def revoke_token(self, run_id: str, visit_uuid: str, token: str) -> dict:
        return self.request(
            "POST", f"/runs/{_seg(run_id)}/visits/{_seg(visit_uuid)}/tokens/revoke", json={"token": token}
        )

    def complete_visit(
        self,
        run_id: str,
        visit_uuid: str,
        *,
        status: str,
        output: dict | None = None,
        final_text: str | None = None,
        error: str | None = None,
        agent_result: dict | None = None,
    ) -> dict:
        """``POST …/complete`` — the verdict ``{effectiveStatus, failureReason,
        matchedPattern, category, retryable, runAction}`` (SPEC §4.4)."""
        return self.request(
            "POST",
            f"/runs/{_seg(run_id)}/visits/{_seg(visit_uuid)}/complete",
            json=_drop_none(
                {
                    "status": status,
                    "output": output,
                    "finalText": final_text,
                    "error": error,
                    "agentResult": agent_result,
                }
            ),
        )

    def heartbeat(self, run_id: str, visit_uuid: str, *, interval: float = 30.0) -> Heartbeat:
        """A :class:`Heartbeat` for the visit, to use as a context manager."""
        return Heartbeat(self, run_id, visit_uuid, interval=interval)


class Heartbeat:
    """Sends a heartbeat for one visit every ``interval`` seconds on a daemon
    thread while the ``with`` block runs, so a long agent turn cannot let the
    visit's tokens expire (their TTL is 120 s by default). Failures are logged
    and counted in ``failures``, never raised into the agent."""

    def __init__(self, client: EngineClient, run_id: str, visit_uuid: str, *, interval: float = 30.0):
        if interval <= 0:
            raise ValueError("interval must be positive.")
        self.client, self.run_id, self.visit_uuid, self.interval = client, run_id, visit_uuid, interval
        self.sent = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat-{visit_uuid}", daemon=True)

    def _loop(self):
        while not self._stop.wait(self.interval):
            try:
                self.client.send_heartbeat(self.run_id, self.visit_uuid)
                self.sent += 1
            except EngineClientError as exc:
                self.failures += 1
                logger.warning("heartbeat for visit %s failed: %s", self.visit_uuid, exc)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.client.timeout + 1)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
