"""manage.py gen_load_data: bulk benchmark runs and the probe run (issue 7)."""

import io
import json

import pytest
from django.core.management import call_command

from contextquery import queries, tokens
from contextquery.models import ContextToken, Visit, VisitLog, WorkflowRun
from tests.bench.benchapp.management.commands.gen_load_data import Command as GenLoadData

pytestmark = pytest.mark.django_db


def test_filler_runs_and_the_probe_are_written_with_consistent_rows():
    out = io.StringIO()
    call_command(GenLoadData(), runs=3, visits=12, probe=True, stdout=out)
    probe = json.loads(out.getvalue().strip().splitlines()[-1])
    assert WorkflowRun.objects.count() == 4 and Visit.objects.count() == 48
    assert ContextToken.objects.filter(revoked_at__isnull=False).count() == 15
    running = Visit.objects.get(visit_uuid=probe["visit_uuid"])
    assert running.status == "RUNNING" and running.sort_order == 12
    for visit in Visit.objects.filter(log_counter__gt=0):
        assert visit.logs.count() == visit.log_counter
    # A new visit after the bulk load gets a fresh primary key (sequences were reset).
    assert Visit.objects.create(
        run=running.run, node_id="N1", iter_seq=99, sort_order=99, started_at=running.started_at
    )


def test_the_probe_answers_the_context_queries_it_describes():
    out = io.StringIO()
    call_command(GenLoadData(), runs=0, visits=120, probe=True, stdout=out)
    probe = json.loads(out.getvalue().strip().splitlines()[-1])
    reader = queries.reader_authenticate(
        raw=tokens.token_issue(visit=Visit.objects.get(visit_uuid=probe["visit_uuid"])).token
    )
    answer = queries.output_query(reader=reader, node_id=probe["output_node"], field=probe["field"])
    assert answer["data"] == f"{probe['output_node']}-item-3"
    assert VisitLog.objects.filter(visit__visit_uuid=probe["meta_visit_uuid"]).count() > 50
    meta = queries.meta_query(reader=reader, visit_uuid=probe["meta_visit_uuid"], kind="ALL")
    assert meta["truncated"] is True and meta["originalBytes"] > 50 * 1024
