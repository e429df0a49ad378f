"""Fixtures of the contextquery tests: engine clients and a recorder that
writes runs through the recording rules (``contextquery.ingest``)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from contextquery import judgement, recording
from tests.conftest import token_client

# Fixtures shared by the context-query and agent-side tests, registered once here.
from tests.contextquery.agent_fixtures import (
    engine_api,
    hermes_process_state,
    live_chain,
    live_flyback,
    scripted_server,
)
from tests.contextquery.context_fixtures import ask, branches, clock, engine, flyback, issue, make_run
from tests.contextquery.factories import CHAIN, EngineUserFactory
from tests.contextquery.gateway_fixtures import approver, ask_tool, bindings, shop, tool_visit
from tests.factories import UserFactory

# Real gunicorn servers on throw-away databases, for the tool gateway's race test.
from tests.hardening.conftest import _database_templates, database, gunicorn


@pytest.fixture
def engine_user(db):
    """An engine client user (record_run: records runs, reads its own)."""
    return EngineUserFactory()


@pytest.fixture
def engine_client(engine_user):
    """An API client authenticated as ``engine_user`` with a knox token."""
    return token_client(engine_user)


@pytest.fixture
def other_engine_client(db):
    """A second engine client, owner of nothing the first one created."""
    return token_client(EngineUserFactory())


@pytest.fixture
def reader_client(db):
    """A non-staff user who may read every run (read_all_runs) but not record."""
    user = UserFactory()
    user.user_permissions.add(Permission.objects.get(codename="read_all_runs"))
    return token_client(user)


class Recording:
    """A run recorded through ``contextquery.ingest``; ``by`` names its visits.

    ``visit("B", a)`` registers B with parent a (``visit("A")`` is a root;
    ``derive=True`` lets the server derive parents) and completes it with
    ``status`` unless ``complete=False``. Visits are stored in ``by`` under
    ``name`` or ``<node><iterSeq>`` (``A1``, ``C2``…).
    """

    def __init__(self, run):
        self.run = run
        self.by: dict = {}

    def visit(
        self,
        node_id,
        *parents,
        name=None,
        derive=False,
        complete=True,
        status="SUCCESS",
        output=None,
        final_text=None,
        **complete_kwargs,
    ):
        kwargs = {} if derive else {"from_visit_uuids": [str(p.visit_uuid) for p in parents]}
        visit = recording.visit_register(run=self.run, node_id=node_id, **kwargs).visit
        if complete:
            if output is None:
                output = {"status": 200, "message": "ok", "data": {"node": node_id, "iter": visit.iter_seq}}
            judgement.visit_complete(
                visit=visit, status=status, output=output, final_text=final_text, **complete_kwargs
            )
            visit.refresh_from_db()
        self.by[name or f"{node_id}{visit.iter_seq}"] = visit
        return visit


@pytest.fixture
def record(engine_user):
    """``record(graph=CHAIN, mode="DAG", **run_fields) -> Recording``."""

    def make(graph=CHAIN, mode="DAG", **fields):
        run, _ = recording.run_create(user=engine_user, graph=graph, mode=mode, **fields)
        return Recording(run)

    return make


@pytest.fixture
def ops(staff_user):
    """A test client logged in as staff through the session (the pages' user)."""
    client = Client()
    client.force_login(staff_user)
    return client
