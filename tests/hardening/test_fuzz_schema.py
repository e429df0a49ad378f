"""Schemathesis against ``/api/schema/`` of a real gunicorn server (SPEC §2).

Every operation of the schema is fuzzed with generated valid (positive) and
invalid (negative) requests, with credentials supplied: a superuser's API
token, and for ``/internal/context/…`` the ``X-Context-Token`` of a RUNNING
visit — a fresh run, visit and token per example, so no budget or state left
by one example shapes the next. Operations with path parameters are fuzzed
twice: with generated ids (mostly 404) and with ids pinned to live objects
(so the bodies reach the rules). Each response must not be a server error,
and its status, content type, headers and body must be ones the schema
documents.

Bounded for CI (``HARDENING_FUZZ_EXAMPLES``, default 6 per operation, mode
and pinning); ``make soak`` raises it.
"""

from __future__ import annotations

import json
import os
import random
import time
import uuid

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.hardening.conftest import Api, run_with_visit
from tests.support import envelope

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("HARDENING_FUZZ_EXAMPLES", "6"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
MODES = [schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE]


class Fuzzer:
    """Sends the cases of one operation with credentials and live ids; keeps the figures."""

    def __init__(self, server, creds):
        self.server = server
        self.engine = Api(server, creds["superToken"])
        self.auth = {"Authorization": f"Token {creds['superToken']}"}
        self.requests = 0
        self.statuses: dict[int, int] = {}
        self.failures: list[str] = []
        self.unsatisfiable: list[str] = []

    def live_pattern_id(self) -> int:
        name = f"fuzz {uuid.uuid4().hex[:8]}"
        body = {"name": name, "pattern": "fuzz marker", "category": "other"}
        return envelope(self.engine.post("/api/hermes-error-patterns/", body), 201)["id"]

    def prepare(self, case, *, pinned: bool, n: int) -> dict:
        """Headers to send; with ``pinned``, path ids (and the internal runId) of live objects."""
        path = case.operation.path
        if path.startswith("/internal/"):
            live = run_with_visit(self.engine)
            if pinned and isinstance(case.body, dict):
                case.body["runId"] = live["runId"]
                if n % 2 and "nodeId" in case.body:
                    case.body["nodeId"] = "A"
            return {"X-Context-Token": live["token"]}
        if pinned and "{run_id}" in path:
            live = run_with_visit(self.engine)
            case.path_parameters["run_id"] = live["runId"]
            if "{visit_uuid}" in path:
                case.path_parameters["visit_uuid"] = live["b"] if n % 2 == 0 else live["a"]
        elif pinned and "{id}" in path:
            case.path_parameters["id"] = self.live_pattern_id()
        return dict(self.auth)

    def fuzz(self, operation, mode, *, pinned: bool) -> None:
        counter = iter(range(10**9))

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=False,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def one(case):
            headers = self.prepare(case, pinned=pinned, n=next(counter))
            response = case.call(base_url=self.server.url, headers=headers, timeout=30)
            self.requests += 1
            self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
            try:
                case.validate_response(response, checks=CHECKS, headers=headers)
            except FailureGroup as exc:
                self.failures.append(f"{operation.label} [{mode.value}{', pinned' if pinned else ''}]\n{exc}")

        try:
            one()
        except Unsatisfiable:
            # Negative mode on an operation with nothing to negate (no body, no parameters).
            self.unsatisfiable.append(f"{operation.label} [{mode.value}]")


def test_every_operation_answers_without_server_errors_as_its_schema_documents(shared_server):
    server, _db, creds = shared_server
    schema = schemathesis.openapi.from_url(
        server.url + "/api/schema/", headers={"Authorization": f"Token {creds['superToken']}"}
    )
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 27  # every route of SPEC §3.4, §4.3 and §4.5 is in the schema
    fuzzer = Fuzzer(server, creds)
    started = time.monotonic()
    for operation in operations:
        pinnings = (False, True) if "{" in operation.path or operation.path.startswith("/internal/") else (False,)
        for mode in MODES:
            for pinned in pinnings:
                fuzzer.fuzz(operation, mode, pinned=pinned)
    elapsed = time.monotonic() - started
    print(
        f"\nschemathesis: {len(operations)} operations, {fuzzer.requests} requests in {elapsed:.1f} s, "
        f"statuses {dict(sorted(fuzzer.statuses.items()))}, {len(fuzzer.failures)} failures; "
        f"nothing to negate in {fuzzer.unsatisfiable}"
    )
    assert not fuzzer.failures, "\n\n".join(fuzzer.failures)
    assert 500 not in fuzzer.statuses and fuzzer.requests >= len(operations) * EXAMPLES


# --------------------------------------------------------------------------- hostile bodies

#: What a JavaScript client sends after cutting a string mid-emoji (issue 12).
LONE_SURROGATES = ("\ud800", "\udfff", "\ud83d")


def hostile(value, rng: random.Random, depth: int = 0):
    """A copy of a generated JSON body with lone surrogates in some strings and
    keys, a dotted key in every object, and long dotted ``field`` paths."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "field":
                out[key] = ".".join(rng.choice(["a", "b.c", "0", "x"]) for _ in range(rng.randint(2, 80)))
                continue
            if rng.random() < 0.15:
                key = key + rng.choice(LONE_SURROGATES)
            out[key] = hostile(item, rng, depth + 1)
        out["dotted.key." + "x" * rng.randint(0, 3)] = {"a.b": {"c.d": rng.choice(LONE_SURROGATES + ("ok",))}}
        return out
    if isinstance(value, list):
        return [hostile(item, rng, depth + 1) for item in value]
    if isinstance(value, str) and rng.random() < 0.5:
        cut = rng.randint(0, len(value))
        return value[:cut] + rng.choice(LONE_SURROGATES) + value[cut:]
    return value


def test_lone_surrogates_and_dotted_keys_in_any_body_are_refused_without_server_errors(shared_server):
    server, _db, creds = shared_server
    schema = schemathesis.openapi.from_url(
        server.url + "/api/schema/", headers={"Authorization": f"Token {creds['superToken']}"}
    )
    operations = [result.ok() for result in schema.get_all_operations()]
    with_body = [op for op in operations if op.body]
    assert len(with_body) >= 15
    fuzzer = Fuzzer(server, creds)
    rng = random.Random(1214)
    surrogates_sent = 0
    for operation in with_body:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=schemathesis.GenerationMode.POSITIVE))
        def one(case):
            nonlocal surrogates_sent
            headers = fuzzer.prepare(case, pinned=True, n=rng.randint(0, 1))
            if not isinstance(case.body, (dict, list)):
                return
            # Sent by hand: schemathesis itself cannot encode a lone surrogate.
            raw = json.dumps(hostile(case.body, rng)).encode()
            surrogates_sent += any(mark in raw for mark in (b"\\ud800", b"\\udfff", b"\\ud83d"))
            url = server.url + case.formatted_path
            with requests.Session() as session:
                session.trust_env = False
                response = session.request(
                    case.method,
                    url,
                    data=raw,
                    params=case.query,
                    headers={**headers, "Content-Type": "application/json", "Connection": "close"},
                    timeout=30,
                )
            fuzzer.requests += 1
            fuzzer.statuses[response.status_code] = fuzzer.statuses.get(response.status_code, 0) + 1
            try:
                case.validate_response(response, checks=CHECKS, headers=headers)
            except FailureGroup as exc:
                fuzzer.failures.append(f"{case.operation.label} [hostile]\n{exc}")

        one()
    print(
        f"\nhostile bodies: {len(with_body)} operations, {fuzzer.requests} requests "
        f"({surrogates_sent} with lone surrogates), statuses {dict(sorted(fuzzer.statuses.items()))}"
    )
    assert not fuzzer.failures, "\n\n".join(fuzzer.failures)
    assert 500 not in fuzzer.statuses and surrogates_sent >= len(with_body)


# --------------------------------------------------------------------------- regressions the fuzzer found


@pytest.fixture
def openapi(client):
    """The served OpenAPI document as a dict."""
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    import json

    return json.loads(response.content)


@pytest.mark.django_db
def test_a_page_past_the_end_of_the_run_list_is_a_404_the_schema_documents(openapi, staff_client):
    response = staff_client.get("/api/runs", {"page": 3772})
    assert response.status_code == 404 and response.json()["code"] == 404
    assert "404" in openapi["paths"]["/api/runs/"]["get"]["responses"]


@pytest.mark.django_db
def test_every_operation_that_takes_a_json_body_documents_400_413_and_422(openapi):
    missing = [
        (method.upper(), path, code)
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
        for code in ("400", "413", "422")
        if code not in operation["responses"]
    ]
    assert missing == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query", ["startedBefore=0187-03-26T06:13:03%2B22:40", "startedAfter=3316-07-31T03:14:26-19:30"]
)
def test_a_time_filter_with_an_offset_postgresql_refuses_is_moved_to_utc(staff_client, query):
    response = staff_client.get("/api/runs?" + query)
    assert response.status_code == 200 and response.json()["data"]["count"] == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query", ["startedAfter=0001-01-01T00:00:00%2B05:00", "startedBefore=9999-12-31T23:59:59-05:00"]
)
def test_a_time_filter_that_leaves_the_calendar_in_utc_is_a_422_naming_it(staff_client, query):
    response = staff_client.get("/api/runs?" + query)
    field = query.split("=")[0]
    assert response.status_code == 422 and field in response.json()["data"]["errors"]


def test_a_request_line_over_the_server_s_limit_is_a_414_every_operation_documents(shared_server, openapi):
    server, _db, creds = shared_server
    response = Api(server, creds["userToken"]).get("/api/runs/?search=" + "x" * 5000)
    assert response.status_code == 414 and response.headers["Content-Type"].startswith("text/html")
    undocumented = [
        (method.upper(), path)
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        if "text/html" not in operation["responses"].get("414", {}).get("content", {})
    ]
    assert undocumented == []
