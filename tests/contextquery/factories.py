"""factory_boy factories and canvases for runs, visits and logs.

The factories write rows directly (fast, for read-side tests) but keep the
server's invariants: ``sort_order`` follows the run's ``visit_counter`` and
``iter_seq`` counts the node's visits, so rows look as if recorded. Give
parents as visits: ``VisitFactory(run=run, node_id="B", parents=[a])``.
Tests of the recording rules use ``contextquery.recording`` instead (see the
``record`` fixture in ``conftest.py``).
"""

import copy

import factory
from django.contrib.auth.models import Permission
from django.db.models import F
from django.utils import timezone

from contextquery import recording
from contextquery.models import LogType, Visit, VisitLog, VisitStatus, WorkflowRun
from tests.factories import UserFactory


def canvas(edges: str, *, nodes: str = "", node_type: str = "agent", skip: str = "") -> dict:
    """A canvas from compact text: ``canvas("AB BC CG")`` → nodes A, B, C, G and
    edges A→B, B→C, C→G; ``nodes`` adds lone nodes, ``skip`` lists nodes whose
    failStrategy is skip."""
    pairs = [tuple(e) for e in edges.split()]
    order = list(dict.fromkeys([n for pair in pairs for n in pair] + list(nodes)))
    return {
        "nodes": [
            {"id": n, "type": node_type, "name": f"Node {n}", "failStrategy": "skip" if n in skip else "abort"}
            for n in order
        ],
        "edges": [{"source": s, "target": t} for s, t in pairs],
    }


#: The seed examples' canvases (SPEC §4.2).
CHAIN = canvas("AB BC CG")
TWO_BRANCHES = canvas("AB BC CG DE EF FG")
DIAMOND = canvas("AB AC BD CD")


class EngineUserFactory(UserFactory):
    """A user with ``contextquery.record_run`` (an engine client: records runs, reads its own)."""

    username = factory.Sequence(lambda n: f"engine{n}")

    @factory.post_generation
    def engine_permissions(obj, create, extracted, **kwargs):
        if create:
            obj.user_permissions.add(
                *Permission.objects.filter(content_type__app_label="contextquery", codename__in=["record_run"])
            )


class WorkflowRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WorkflowRun

    run_id = factory.Sequence(lambda n: f"run{n:05d}")
    workflow_id = "wf-demo"
    workflow_name = factory.Sequence(lambda n: f"Workflow {n}")
    mode = "DAG"
    graph = factory.LazyFunction(lambda: copy.deepcopy(TWO_BRANCHES))
    created_by = factory.SubFactory(EngineUserFactory)
    started_at = factory.LazyFunction(timezone.now)


class VisitFactory(factory.django.DjangoModelFactory):
    """A visit row with the next sortOrder of its run and the next iterSeq of its node."""

    class Meta:
        model = Visit
        exclude = ["parents"]

    run = factory.SubFactory(WorkflowRunFactory)
    node_id = "A"
    parents = ()
    parent_uuids = factory.LazyAttribute(lambda o: [str(p.visit_uuid) for p in o.parents])
    status = VisitStatus.SUCCESS
    output = factory.LazyAttribute(
        lambda o: (
            None if o.status == VisitStatus.RUNNING else {"status": 200, "message": "ok", "data": {"node": o.node_id}}
        )
    )
    started_at = factory.LazyFunction(timezone.now)
    ended_at = factory.LazyAttribute(lambda o: None if o.status == VisitStatus.RUNNING else timezone.now())

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        run = kwargs["run"]
        if kwargs.get("sort_order") is None:
            WorkflowRun.objects.filter(pk=run.pk).update(visit_counter=F("visit_counter") + 1)
            run.refresh_from_db(fields=["visit_counter"])
            kwargs["sort_order"] = run.visit_counter
        if kwargs.get("iter_seq") is None:
            kwargs["iter_seq"] = Visit.objects.filter(run=run, node_id=kwargs["node_id"]).count() + 1
        if "ancestry" not in kwargs:
            kwargs["hop_kinds"], kwargs["ancestry"] = recording.visit_lineage(
                run=run, node_id=kwargs["node_id"], parents=list(kwargs["parent_uuids"])
            )
        return super()._create(model_class, *args, **kwargs)


class VisitLogFactory(factory.django.DjangoModelFactory):
    """A log row with the visit's next seq."""

    class Meta:
        model = VisitLog

    visit = factory.SubFactory(VisitFactory)
    type = LogType.THINKING
    message = factory.Sequence(lambda n: f"Thought {n}")
    detail = None
    timestamp = factory.LazyFunction(timezone.now)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        visit = kwargs["visit"]
        if kwargs.get("seq") is None:
            Visit.objects.filter(pk=visit.pk).update(log_counter=F("log_counter") + 1)
            visit.refresh_from_db(fields=["log_counter"])
            kwargs["seq"] = visit.log_counter
        return super()._create(model_class, *args, **kwargs)
