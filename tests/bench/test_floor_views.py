"""The benchmark floors (issue 7): routed only by the bench servers' URLs, and
the authenticated floor does the real base class's work."""

import json

import pytest
from django.test import RequestFactory

from contextquery.models import ContextRead, Visit
from tests.bench.benchapp.views import FloorQueryView, plain_view

pytestmark = pytest.mark.django_db


def test_the_product_routes_no_floor(ask):
    assert ask("_floor", "0" * 48, {"runId": "x"}).status_code == 404
    assert ask("_plain").status_code == 404


def test_the_authenticated_floor_counts_audits_and_answers_an_empty_object(flyback, issue):
    raw = issue(flyback.by["C2"])
    request = RequestFactory().post(
        "/internal/context/_floor",
        json.dumps({"runId": flyback.run.run_id}),
        content_type="application/json",
        HTTP_X_CONTEXT_TOKEN=raw,
    )
    response = FloorQueryView.as_view()(request)
    assert response.status_code == 200 and json.loads(response.content)["data"] == {}
    assert Visit.objects.get(pk=flyback.by["C2"].pk).query_count == 1
    assert ContextRead.objects.filter(visit=flyback.by["C2"], endpoint="floor", status_code=200).count() == 1


def test_the_authenticated_floor_refuses_a_missing_token():
    request = RequestFactory().post("/internal/context/_floor", "{}", content_type="application/json")
    response = FloorQueryView.as_view()(request)
    assert response.status_code == 401


def test_the_plain_floor_answers_an_empty_object():
    response = plain_view(RequestFactory().post("/internal/context/_plain", "{}", content_type="application/json"))
    assert response.status_code == 200 and json.loads(response.content) == {}
