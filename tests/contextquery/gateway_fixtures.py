"""Fixtures of the tool-gateway tests (SPEC §7): the fake business service with
its secret, two bindings (a read and a write that needs approval), a running
visit given both, and a poster for ``/internal/tools/…``.

``SECRET`` is distinctive so a test can grep every response, page, log line,
MCP message and database column for it.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from contextquery import tool_gateway
from contextquery.models import ToolBinding, Visit
from demo.business import LOOKUP_SCHEMA, REFUND_SCHEMA, BusinessService
from tests.contextquery.agent_fixtures import OUTPUT_A, TWO_NODES
from tests.factories import UserFactory

#: The business service's bearer secret; it must never leave the server's memory.
SECRET = "shop-secret-5a1c9e77d2b04f31"
SECRET_REF = "SHOP"
TOOLS = ["order_lookup", "refund_issue"]


@pytest.fixture
def shop(settings, monkeypatch):
    """The fake business service, allowed by ``HERMES_TOOL_ALLOWED_HOSTS``, its secret in
    ``HERMES_TOOL_SECRET_SHOP``."""
    with BusinessService(SECRET) as service:
        settings.HERMES_TOOL_ALLOWED_HOSTS = [f"127.0.0.1:{service.port}"]
        monkeypatch.setenv("HERMES_TOOL_SECRET_" + SECRET_REF, SECRET)
        yield service


def make_bindings(shop_url: str) -> dict[str, ToolBinding]:
    """``order_lookup`` (a read, no approval) and ``refund_issue`` (a write: approval by default)."""
    lookup = tool_gateway.binding_create(
        values={
            "name": "order_lookup",
            "description": "Look an order up by its number: status, total, items.",
            "input_schema": LOOKUP_SCHEMA,
            "kind": "read",
            "endpoint": f"{shop_url}/orders/lookup",
            "secret_ref": SECRET_REF,
            "timeout_seconds": 5,
        },
        via="command",
    )
    refund = tool_gateway.binding_create(
        values={
            "name": "refund_issue",
            "description": "Refund (part of) an order.",
            "input_schema": REFUND_SCHEMA,
            "kind": "write",
            "endpoint": f"{shop_url}/refunds",
            "secret_ref": SECRET_REF,
            "timeout_seconds": 5,
        },
        via="command",
    )
    return {"order_lookup": lookup, "refund_issue": refund}


@pytest.fixture
def bindings(db, shop):
    return make_bindings(shop.url)


def record_support_run(client) -> tuple[dict, dict, dict]:
    """Through the recording API (an ``EngineClient``): a run A→B with A completed and B
    registered with both tools; returns ``(run, a, b)`` (b carries ``contextQuery``)."""
    run = client.create_run(graph=TWO_NODES, workflow_name="Order support")
    a = client.register_visit(run["runId"], node_id="A", from_visit_uuids=[])
    client.complete_visit(run["runId"], a["visitUuid"], status="SUCCESS", output=OUTPUT_A)
    b = client.register_visit(
        run["runId"], node_id="B", from_visit_uuid=a["visitUuid"], input={"prompt": "Refund A-1001."}, tools=TOOLS
    )
    return run, a, b


class ToolVisit:
    """A running visit B (after A) given ``tools``, with a token: ``visit``, ``token``, ``run_id``."""

    def __init__(self, rec, visit, token):
        self.rec, self.visit, self.token, self.run_id = rec, visit, token, rec.run.run_id


@pytest.fixture
def tool_visit(make_run, issue, bindings):
    """``tool_visit(tools=TOOLS)``: a run A→B with B RUNNING and given ``tools``."""

    def make(tools=TOOLS):
        rec = make_run(mode="DAG")
        a = rec.visit("A")
        b = rec.visit("B", a, status="RUNNING")
        Visit.objects.filter(pk=b.pk).update(tools=sorted(tools))
        b.refresh_from_db()
        return ToolVisit(rec, b, issue(b))

    return make


class ToolAsker:
    """Posts to ``/internal/tools/<endpoint>`` as the agent side does."""

    def __init__(self):
        self.client = APIClient()

    def __call__(self, endpoint, token=None, body=None, *, raw=None, remote_addr="127.0.0.1"):
        headers = {"REMOTE_ADDR": remote_addr}
        if token is not None:
            headers["HTTP_X_CONTEXT_TOKEN"] = token
        content = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
        return self.client.generic(
            "POST", f"/internal/tools/{endpoint}", content, content_type="application/json", **headers
        )


@pytest.fixture
def ask_tool():
    return ToolAsker()


@pytest.fixture
def approver(db):
    """A staff user with ``contextquery.approve_toolcall``."""
    user = UserFactory(is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="approve_toolcall"))
    return user
