"""The run and visit filters shared by the API and the pages (SPEC §4.3, §8):
a value the database could not compare is refused, never a server error."""

import pytest

from tests.contextquery.factories import CHAIN
from tests.support import envelope

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(record):
    rec = record(CHAIN, run_id="filtered1")
    rec.visit("A")
    return rec


@pytest.mark.parametrize("value", ["-4.03e+92", "1.5", "99999999999999999999999", "0"])
def test_a_pattern_id_that_is_no_database_id_is_refused(run, engine_client, value):
    body = envelope(engine_client.get(f"/api/runs/filtered1/visits?patternId={value}"), 422)
    assert "patternId" in body["errors"]


@pytest.mark.parametrize("value", ["1", "1.0"])
def test_a_whole_pattern_id_filters(run, engine_client, value):
    assert envelope(engine_client.get(f"/api/runs/filtered1/visits?patternId={value}"), 200)["count"] == 0


@pytest.mark.parametrize("query", ["category=weather", "falsePositive=perhaps", "endedAfter=yesterday"])
def test_a_bad_visit_filter_value_is_refused_naming_it(run, engine_client, query):
    body = envelope(engine_client.get(f"/api/runs/filtered1/visits?{query}"), 422)
    assert query.split("=")[0] in body["errors"]


def test_a_bad_has_failed_visits_value_is_refused(run, engine_client):
    assert "hasFailedVisits" in envelope(engine_client.get("/api/runs?hasFailedVisits=2"), 422)["errors"]
