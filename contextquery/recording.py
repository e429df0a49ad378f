"""Recording rules: runs, visits, logs (SPEC §4.1–§4.3).

Every writer — the REST API, ``manage.py loaddemo``, tests — goes through these
functions, so the rules hold whatever the caller. They raise the domain errors
of ``project.errors`` (422 ``Invalid``, 403 ``Forbidden``, 404 ``NotFound``,
409 ``Conflict``), never HTTP objects, and a refused call changes nothing
stored: each write runs in one transaction and validates before writing.
Completions and their verdict are :mod:`contextquery.judgement`'s; the canvas
is :mod:`contextquery.canvas`'s.

Concurrency: sortOrder, iterSeq and log seqs come from counters on the run or
visit row, advanced under a row lock (``select_for_update`` on PostgreSQL; on
SQLite every transaction is IMMEDIATE, which serialises writers). The unique
constraints on ``(run, sortOrder)``, ``(run, nodeId, iterSeq)`` and
``(visit, seq)`` are the backstop.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import (
    Count,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.utils import timezone
from django.utils.translation import gettext as _

from contextquery import liveness, paths, queries, tokens, tool_gateway
from contextquery.canvas import canvas_node
from contextquery.models import (
    ENDED_VISIT_STATUSES,
    LogType,
    RunMode,
    RunStatus,
    Visit,
    VisitLog,
    VisitStatus,
    WorkflowRun,
    generate_run_id,
)
from patterns.models import JudgedReply
from project.api import camel_case, json_problems
from project.errors import Conflict, Forbidden, Invalid, LimitReached, NotFound
from project.transactions import commit_without_waiting_for_disk

#: runIds appear in URLs, so they are limited to URL-safe characters.
RUN_ID_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._:-]{0,63}\Z")
FINISH_STATUSES = (RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.CANCELLED)
#: Sentinel for "the engine did not send this field" (``None`` may be a value).
MISSING = object()


def _one_of(allowed, value) -> str:
    return _("must be one of %(allowed)s, not %(value)r.") % {"allowed": ", ".join(allowed), "value": value}


def _visit_missing(visit_uuid, run) -> str:
    return _("Visit '%(visit)s' does not exist in run '%(run)s'.") % {"visit": visit_uuid, "run": run.run_id}


def _limits() -> dict:
    return settings.HERMES_CONTEXT_QUERY


# --------------------------------------------------------------------------- access


def run_can_read_all(*, user) -> bool:
    """Reading every run needs ``contextquery.read_all_runs`` or staff (SPEC §4.3)."""
    return bool(user and user.is_authenticated and (user.is_staff or user.has_perm("contextquery.read_all_runs")))


def run_can_read(*, user) -> bool:
    """Reading runs at all: an engine client (its own runs) or a reader of all runs (SPEC §4.3).
    Django's model ``view_*`` permissions govern the admin only."""
    return run_can_read_all(user=user) or run_can_record(user=user)


def run_can_record(*, user) -> bool:
    """Recording needs ``contextquery.record_run`` (SPEC §4.3)."""
    return bool(user and user.is_authenticated and user.has_perm("contextquery.record_run"))


def run_get(*, run_id: str) -> WorkflowRun:
    """The run ``run_id``; raises NotFound (also for an id with a NUL
    character: no run has one, and PostgreSQL refuses to compare it)."""
    run = WorkflowRun.objects.filter(run_id=run_id).first() if "\x00" not in run_id else None
    if run is None:
        raise NotFound(_("Run '%(run)s' does not exist.") % {"run": run_id})
    return run


def run_get_for_reader(*, run_id: str, user) -> WorkflowRun:
    """The run ``run_id`` if ``user`` may read it (SPEC §4.3): every run for a
    reader of all runs, its own runs for an engine client. Raises NotFound
    for an unknown run and for another client's run alike, so a client
    cannot even learn which run ids exist."""
    run = run_get(run_id=run_id)
    if not run_can_read_all(user=user) and run.created_by_id != user.pk:
        raise NotFound(_("Run '%(run)s' does not exist.") % {"run": run_id})
    return run


def run_get_for_writer(*, run_id: str, user) -> WorkflowRun:
    """The run ``run_id`` if ``user`` may write to it (SPEC §4.3).

    Raises NotFound (404) for an unknown run, Forbidden (403) without
    ``record_run`` or when another engine client created the run (a superuser
    may write to any run).
    """
    if not run_can_record(user=user):
        raise Forbidden(_("Recording runs needs the contextquery.record_run permission."))
    run = run_get(run_id=run_id)
    if not user.is_superuser and run.created_by_id != user.pk:
        raise Forbidden(
            _("Run '%(run)s' was created by another engine client; only it may write to the run.") % {"run": run_id}
        )
    return run


def visit_get(*, run: WorkflowRun, visit_uuid) -> Visit:
    """The visit ``visit_uuid`` of ``run``; raises NotFound (also for a malformed uuid)."""
    try:
        key = uuid.UUID(str(visit_uuid))
    except ValueError:
        raise NotFound(_visit_missing(visit_uuid, run)) from None
    visit = Visit.objects.filter(run=run, visit_uuid=key).select_related("run", "matched_pattern").first()
    if visit is None:
        raise NotFound(_visit_missing(visit_uuid, run))
    return visit


# --------------------------------------------------------------------------- runs


def run_create(
    *,
    user,
    graph,
    run_id: str | None = None,
    workflow_id: str = "",
    workflow_name: str = "",
    mode: str = RunMode.DAG,
) -> tuple[WorkflowRun, bool]:
    """Create a run with its canvas graph (SPEC §4.3). Returns ``(run, created)``.

    ``graph`` is a canvas as :func:`contextquery.canvas.canvas_validate`
    returns it (the API's ``GraphSerializer`` checks it on the way in).
    ``run_id`` None → an 8-character id is generated. A repeat with an id the
    engine chose and an equal body returns the stored run with ``created``
    False; a different body, or another engine client, raises Conflict (409).
    Raises Invalid for a bad mode or runId, Forbidden without ``record_run``.
    """
    if not run_can_record(user=user):
        raise Forbidden(_("Recording runs needs the contextquery.record_run permission."))
    if mode not in RunMode.values:
        raise Invalid.field("mode", _one_of(RunMode.values, mode))
    if run_id is not None and not RUN_ID_RE.match(run_id):
        raise Invalid.field(
            "runId",
            _("must be 1 to 64 characters: letters, digits, '.', '_', ':' or '-', starting with a letter or digit."),
        )
    fields = {"workflow_id": workflow_id or "", "workflow_name": workflow_name or "", "mode": mode, "graph": graph}
    if run_id is not None:
        existing = WorkflowRun.objects.filter(run_id=run_id).first()
        if existing is not None:
            return _run_repeat(existing, user, fields), False
    try:
        with transaction.atomic():
            run = WorkflowRun(created_by=user, started_at=timezone.now(), **fields)
            if run_id is not None:
                run.run_id = run_id
            else:
                run.run_id = _fresh_run_id()
            run.save()
    except IntegrityError:
        # A concurrent create with the same id won the race: answer as a repeat.
        existing = WorkflowRun.objects.filter(run_id=run_id).first() if run_id else None
        if existing is None:
            raise
        return _run_repeat(existing, user, fields), False
    return run, True


def _fresh_run_id() -> str:
    for _attempt in range(10):
        candidate = generate_run_id()
        if not WorkflowRun.objects.filter(run_id=candidate).exists():
            return candidate
    raise Conflict(_("Could not generate a free runId; send one."))  # pragma: no cover - 2^32 space


def _run_repeat(run: WorkflowRun, user, fields: dict) -> WorkflowRun:
    if run.created_by_id != user.pk:
        raise Conflict(
            _("Run '%(run)s' already exists and was created by another engine client.") % {"run": run.run_id}
        )
    stored = {key: getattr(run, key) for key in fields}
    if stored != fields:
        changed = ", ".join(camel_case(k) for k in fields if stored[k] != fields[k])
        raise Conflict(
            _("Run '%(run)s' already exists with a different body (%(fields)s differ).")
            % {"run": run.run_id, "fields": changed}
        )
    return run


def run_finish(*, run: WorkflowRun, status: str) -> tuple[WorkflowRun, int]:
    """Finish a run (SPEC §4.3). Returns ``(run, number of visits cancelled)``.

    Visits still RUNNING become CANCELLED and the run's live tokens are
    revoked. Finishing again with the same status answers the stored run;
    another status raises Conflict. SUCCESS after a completion that answered
    ``runAction: abort`` raises Conflict naming that visit, unless a later
    visit of its node succeeded (a retry). Raises Invalid for a bad status.
    """
    if status not in FINISH_STATUSES:
        raise Invalid.field("status", _one_of(FINISH_STATUSES, status))
    with transaction.atomic():
        run = WorkflowRun.objects.select_for_update().get(pk=run.pk)
        if run.status != RunStatus.RUNNING:
            if run.status == status:
                return run, 0
            raise Conflict(
                _("Run '%(run)s' already finished with status %(status)s; it cannot become %(new)s.")
                % {"run": run.run_id, "status": run.status, "new": status}
            )
        if status == RunStatus.SUCCESS:
            aborted = _visit_aborted_unretried(run)
            if aborted is not None:
                raise Conflict(
                    _(
                        "Run '%(run)s' cannot finish as SUCCESS: visit %(visit)s (node '%(node)s', iterSeq "
                        "%(iter)d) failed with runAction abort and no later visit of that node succeeded. "
                        "Finish it as FAILED or CANCELLED, or retry the node."
                    )
                    % {
                        "run": run.run_id,
                        "visit": aborted.visit_uuid,
                        "node": aborted.node_id,
                        "iter": aborted.iter_seq,
                    }
                )
        now = timezone.now()
        cancelled = Visit.objects.filter(run=run, status=VisitStatus.RUNNING).update(
            status=VisitStatus.CANCELLED, ended_at=now
        )
        run.status = status
        run.finished_at = now
        run.save(update_fields=["status", "finished_at"])
    tokens.tokens_revoke_for_run(run=run)
    return run, cancelled


def _visit_aborted_unretried(run: WorkflowRun) -> Visit | None:
    """The run's first visit whose completion answered ``runAction: abort`` and
    that no later visit of the same node made good by succeeding (SPEC §4.3)."""
    retried = Visit.objects.filter(
        run=run, node_id=OuterRef("node_id"), sort_order__gt=OuterRef("sort_order"), status=VisitStatus.SUCCESS
    )
    return (
        Visit.objects.filter(run=run, run_action="abort")
        .filter(~Exists(retried))
        .only("visit_uuid", "node_id", "iter_seq")
        .order_by("sort_order")
        .first()
    )


@dataclass(frozen=True)
class StaleRunFinished:
    """One stale run :func:`runs_finish_stale` found: the run (with ``last_seen_at``),
    whether it was finished, and how many visits were cancelled."""

    run: WorkflowRun
    finished: bool
    cancelled_visits: int = 0


def runs_finish_stale(*, dry_run: bool = False, now=None) -> list[StaleRunFinished]:
    """Finish every stale run (SPEC §8) as CANCELLED through :func:`run_finish`:
    its RUNNING visits become CANCELLED and its tokens are revoked.

    Stale: RUNNING, no sign of life for ``HERMES_STALE_RUN_MINUTES``, no tool
    call waiting for a person (:func:`contextquery.liveness.run_stale_q`).
    ``dry_run`` finishes nothing. Each run is checked again just before it is
    finished, so one that showed a sign of life meanwhile is left running;
    one finished meanwhile by its engine is left as it is. Returns one entry
    per stale run found, oldest sign of life first.
    """
    found = list(liveness.runs_stale(now=now))
    if dry_run:
        return [StaleRunFinished(run=run, finished=False) for run in found]
    done = []
    for run in found:
        if not WorkflowRun.objects.filter(liveness.run_stale_q(now=now), pk=run.pk).exists():
            done.append(StaleRunFinished(run=run, finished=False))
            continue
        try:
            _, cancelled = run_finish(run=run, status=RunStatus.CANCELLED)
        except Conflict:  # the engine finished it in between with another status
            done.append(StaleRunFinished(run=run, finished=False))
            continue
        done.append(StaleRunFinished(run=run, finished=True, cancelled_visits=cancelled))
    return done


def run_list(*, user=None) -> QuerySet:
    """Runs, newest first, each annotated with ``visit_count``, ``failure_count``
    (its FAILED visits) and ``duration`` (finish − start; None while it runs):
    all of them, or with ``user`` the ones it may read (its own unless it reads
    all runs, SPEC §4.3)."""
    runs = WorkflowRun.objects.select_related("created_by").annotate(
        visit_count=Count("visits"),
        failure_count=Count("visits", filter=Q(visits__status=VisitStatus.FAILED)),
        duration=ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField()),
    )
    if user is not None and not run_can_read_all(user=user):
        runs = runs.filter(created_by=user)
    return runs.order_by("-started_at", "-id")


# --------------------------------------------------------------------------- visits


@dataclass(frozen=True)
class Registration:
    """The result of :func:`visit_register`: the visit, whether it is new, and
    the ``contextQuery`` object for the bridge (None when disabled)."""

    visit: Visit
    created: bool
    context_query: dict | None


def visit_register(
    *,
    run: WorkflowRun,
    node_id: str,
    visit_uuid: str | None = None,
    node_type: str | None = None,
    node_name: str | None = None,
    from_visit_uuids=MISSING,
    input=None,
    base_url: str | None = None,
    tools=None,
) -> Registration:
    """Register a visit of ``node_id`` in ``run`` (SPEC §4.1–§4.3).

    ``from_visit_uuids``: a list of parent visit uuids (``[]`` = a root), or
    MISSING/None to derive them (§4.2). The server assigns sortOrder and
    iterSeq under a lock on the run row. A repeat of an engine-chosen
    ``visit_uuid`` with an equal body answers the stored visit (and a fresh
    token); a different body raises Conflict. ``base_url`` is what
    ``contextQuery.base_url`` says (default :func:`project.serving.base_url`). ``tools``: the names of the
    business tools the node may call (SPEC §7.1), compared as a set on a
    repeat; None or ``[]`` gives it none.

    Raises Invalid (422) for a node missing from the graph, unknown/foreign
    parents or a tool that is not an enabled binding; Conflict (409) for a
    finished run or beyond ``MAX_VISITS_PER_RUN``.
    """
    if from_visit_uuids is not MISSING and from_visit_uuids is not None:
        from_visit_uuids = [str(u) for u in from_visit_uuids]
    else:
        from_visit_uuids = None
    registration = {
        "visitUuid": str(visit_uuid) if visit_uuid else None,
        "nodeId": node_id,
        "nodeType": node_type,
        "nodeName": node_name,
        "fromVisitUuids": from_visit_uuids,
        "input": input,
    }
    if tools:
        # Kept only when given, so registrations stored before tools existed still compare equal.
        registration["tools"] = sorted(set(tools))
    if visit_uuid:
        try:
            visit_uuid = str(uuid.UUID(str(visit_uuid)))
        except ValueError:
            raise Invalid.field("visitUuid", _("must be a UUID, not %(value)r.") % {"value": visit_uuid}) from None
        registration["visitUuid"] = visit_uuid
        existing = Visit.objects.filter(visit_uuid=visit_uuid).select_related("run").first()
        if existing is not None:
            return _visit_repeat(existing, run, registration, base_url)

    node = canvas_node(run.graph, node_id)
    if node is None:
        known = ", ".join(n.get("id", "?") for n in run.graph.get("nodes", [])[:20])
        raise Invalid.field(
            "nodeId",
            _("'%(id)s' is not a node of the run's graph (nodes: %(known)s).") % {"id": node_id, "known": known},
        )
    if tools:
        tool_gateway.visit_tools_check(names=tools)

    try:
        with transaction.atomic():
            visit = _visit_insert(run, node, registration)
    except IntegrityError:
        # Only a concurrent register of the same visitUuid can collide here
        # (sortOrder and iterSeq are taken under the lock).
        existing = Visit.objects.filter(visit_uuid=visit_uuid).select_related("run").first() if visit_uuid else None
        if existing is None:
            raise
        return _visit_repeat(existing, run, registration, base_url)
    return Registration(
        visit=visit, created=True, context_query=tokens.context_query_object(visit=visit, base_url=base_url)
    )


def _visit_repeat(existing: Visit, run: WorkflowRun, registration: dict, base_url: str | None) -> Registration:
    if existing.run_id != run.pk:
        raise Conflict(_("Visit '%(visit)s' already exists in another run.") % {"visit": registration["visitUuid"]})
    if existing.registration != registration:
        raise Conflict(
            _("Visit '%(visit)s' was already registered with a different body.") % {"visit": registration["visitUuid"]}
        )
    # A retry must succeed even with every token place taken: the oldest gives way.
    return Registration(
        visit=existing,
        created=False,
        context_query=tokens.context_query_object(visit=existing, base_url=base_url, make_room=True),
    )


def _visit_insert(run: WorkflowRun, node: dict, registration: dict) -> Visit:
    locked = WorkflowRun.objects.select_for_update().get(pk=run.pk)
    if locked.status != RunStatus.RUNNING:
        raise Conflict(
            _("Run '%(run)s' already finished (%(status)s); it takes no new visits.")
            % {"run": locked.run_id, "status": locked.status}
        )
    limit = _limits()["MAX_VISITS_PER_RUN"]
    if locked.visit_counter >= limit:
        raise Conflict(
            _("Run '%(run)s' already has %(count)d visits, the limit MAX_VISITS_PER_RUN (%(limit)d).")
            % {"run": locked.run_id, "count": locked.visit_counter, "limit": limit}
        )
    node_id = node["id"]
    parents = registration["fromVisitUuids"]
    canvas = paths.Canvas(locked.graph)
    if parents is None:
        # Load only the candidates derive_parents can pick, not the whole run.
        if locked.mode == RunMode.AGENTIC:
            candidates = Visit.objects.filter(run=locked).order_by("-sort_order")[:1]
        else:
            candidates = Visit.objects.filter(
                run=locked, node_id__in=canvas.predecessors.get(node_id, []), status__in=ENDED_VISIT_STATUSES
            )
        existing = [paths.visit_node_of(v) for v in candidates.only(*_NODE_FIELDS)]
        parents = paths.derive_parents(mode=locked.mode, node_id=node_id, canvas=canvas, visits=existing)
    else:
        parents = list(dict.fromkeys(parents))
    hop_kinds, ancestry = visit_lineage(run=locked, node_id=node_id, parents=parents, canvas=canvas)
    iter_seq = (Visit.objects.filter(run=locked, node_id=node_id).aggregate(m=Max("iter_seq"))["m"] or 0) + 1
    now = timezone.now()
    locked.visit_counter += 1
    locked.save(update_fields=["visit_counter"])
    fields = {
        "run": locked,
        "node_id": node_id,
        "node_type": registration["nodeType"] if registration["nodeType"] is not None else (node.get("type") or ""),
        "node_name": registration["nodeName"] if registration["nodeName"] is not None else (node.get("name") or ""),
        "iter_seq": iter_seq,
        "sort_order": locked.visit_counter,
        "parent_uuids": parents,
        "hop_kinds": hop_kinds,
        "ancestry": ancestry,
        "meta_content": queries.meta_kept(()),  # no logs yet: the meta query reads this row alone
        "input": registration["input"],
        "tools": registration.get("tools", []),
        "registration": registration,
        "started_at": now,
        "last_seen_at": now,  # registration is a sign of life (SPEC §8)
    }
    if registration["visitUuid"]:
        fields["visit_uuid"] = registration["visitUuid"]
    return Visit.objects.create(**fields)


_NODE_FIELDS = ("visit_uuid", "node_id", "sort_order", "parent_uuids", "status")


def visit_lineage(
    *, run: WorkflowRun, node_id: str, parents: list[str], canvas: paths.Canvas | None = None
) -> tuple[list[str], bytes]:
    """``(hop_kinds, ancestry)`` of a new visit of ``node_id`` with parent uuids
    ``parents`` (one query): each hop's kind on the run's canvas, and the
    ancestor bits of :func:`paths.ancestry_of` — what ``Visit`` stores so a
    context query needs neither the run's visits nor its canvas (issue 14).
    Raises Invalid naming ``fromVisitUuids[i]`` for a parent not of ``run``.
    Whatever writes visit rows (registration, fixtures, the bench's loader) calls it."""
    canvas = canvas if canvas is not None else paths.Canvas(run.graph)
    above = _parent_rows(run, parents)
    hop_kinds = [paths.hop_kind(parent_node=above[p][0], child_node=node_id, canvas=canvas) for p in parents]
    return hop_kinds, paths.ancestry_of((above[p][1], above[p][2]) for p in parents)


def _parent_rows(run: WorkflowRun, parents: list[str]) -> dict[str, tuple[str, int, bytes]]:
    """``uuid → (node_id, sort_order, ancestry)`` of each parent (one query).
    Raises Invalid naming ``fromVisitUuids[i]`` for a parent that is not a
    visit of ``run``."""
    found = {
        str(u): (run_pk, node_id, sort_order, bytes(ancestry))
        for u, run_pk, node_id, sort_order, ancestry in Visit.objects.filter(visit_uuid__in=parents).values_list(
            "visit_uuid", "run_id", "node_id", "sort_order", "ancestry"
        )
    }
    for i, parent in enumerate(parents):
        if parent not in found:
            raise Invalid.field(
                f"fromVisitUuids[{i}]",
                _("'%(visit)s' is not a visit of run '%(run)s'.") % {"visit": parent, "run": run.run_id},
            )
        if found[parent][0] != run.pk:
            raise Invalid.field(
                f"fromVisitUuids[{i}]",
                _("'%(visit)s' belongs to another run, not '%(run)s'.") % {"visit": parent, "run": run.run_id},
            )
    return {uuid: row[1:] for uuid, row in found.items()}


def visit_heartbeat(*, visit: Visit) -> Visit:
    """A sign of life of ``visit`` (SPEC §4.3): slides its tokens' expiry."""
    tokens.tokens_touch(visit=visit)
    return visit


def with_false_positive(visits: QuerySet) -> QuerySet:
    """``visits`` annotated with ``false_positive``: ops marked the pattern's
    verdict on the visit's reply as wrong (one subquery, no query per row)."""
    marked = JudgedReply.objects.filter(subject=OuterRef("visit_uuid"), mark=JudgedReply.Mark.FALSE_POSITIVE)
    return visits.annotate(false_positive=Exists(marked))


def visit_list(*, run: WorkflowRun) -> QuerySet:
    """The visits of ``run`` by sortOrder, with their matched pattern and ``false_positive``."""
    return with_false_positive(
        Visit.objects.filter(run=run).select_related("run", "matched_pattern").order_by("sort_order")
    )


def visit_list_failed_by(*, pattern_id: int, false_positive: bool | None = None) -> QuerySet:
    """Visits FAILED by the pattern ``pattern_id``, newest first, with their run,
    ``false_positive`` and, when marked, ``false_positive_note`` and
    ``false_positive_by`` (a username); ``false_positive`` True/False keeps only
    the marked/unmarked ones."""
    marks = JudgedReply.objects.filter(subject=OuterRef("visit_uuid"), mark=JudgedReply.Mark.FALSE_POSITIVE)
    visits = with_false_positive(
        Visit.objects.filter(matched_pattern_id=pattern_id, status=VisitStatus.FAILED)
    ).annotate(
        false_positive_note=Subquery(marks.values("mark_note")[:1]),
        false_positive_by=Subquery(marks.values("marked_by__username")[:1]),
    )
    if false_positive is not None:
        visits = visits.filter(false_positive=false_positive)
    return (
        visits.select_related("run")
        .defer("output", "input", "final_text", "registration", "completion")
        .order_by("-ended_at", "-id")
    )


def visit_paths(*, visit: Visit, max_paths: int | None = None, max_depth: int | None = None) -> paths.PathGraph:
    """The predecessor path graph of ``visit`` (SPEC §4.2) from its run's stored visits."""
    run = visit.run
    nodes = {
        str(v.visit_uuid): paths.visit_node_of(v) for v in Visit.objects.filter(run_id=visit.run_id).only(*_NODE_FIELDS)
    }
    limits = _limits()
    return paths.path_graph(
        visit_uuid=str(visit.visit_uuid),
        visits=nodes,
        canvas=run.graph,
        max_paths=max_paths or limits["MAX_PATHS"],
        max_depth=max_depth or limits["MAX_PATH_DEPTH"],
    )


#: Logs a visit's detail carries; the rest are paged by ``GET …/logs`` (issue 12).
DETAIL_LOGS = 100


def visit_detail(*, visit: Visit) -> dict:
    """A visit with its first :data:`DETAIL_LOGS` logs, predecessor paths and the
    reads its LLM made: ``{"visit", "logs", "paths", "reads"}``; ``visit.log_count``
    says how many logs there are in all."""
    return {
        "visit": visit,
        "logs": list(visit.logs.order_by("seq")[:DETAIL_LOGS]),
        "paths": visit_paths(visit=visit),
        "reads": list(visit.reads.order_by("created_at", "id")),
    }


def log_list(*, visit: Visit) -> QuerySet:
    """The logs of ``visit`` by seq (paginate it)."""
    return VisitLog.objects.filter(visit=visit).order_by("seq")


# --------------------------------------------------------------------------- logs


def _todo_shape_ok(value) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, dict) and isinstance(item.get("text"), str) and isinstance(item.get("status", ""), str)
        for item in value
    )


def _decoded(text, *, where: str):
    """``text`` parsed as JSON when it is a JSON object or list, else None. The
    decoded value obeys the body's rules (no NUL, no lone surrogate, nesting
    at most ``MAX_JSON_DEPTH``): Invalid at ``where`` otherwise."""
    if not isinstance(text, str) or text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    problem = json_problems(value, max_depth=settings.MAX_JSON_DEPTH)
    if problem:
        raise Invalid.field(where, problem[1])
    return value


_LOG_TYPES = frozenset(LogType.values)


def _log_checked(index: int, entry: dict) -> dict:
    """One log entry checked and normalised (see :func:`logs_append`); raises Invalid naming ``logs[i].…``."""
    if entry.get("type") not in _LOG_TYPES:
        raise Invalid.field(f"logs[{index}].type", _one_of(LogType.values, entry.get("type")))
    seq = entry.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
        raise Invalid.field(f"logs[{index}].seq", _("must be a positive integer."))
    detail = entry.get("detail")
    if entry["type"] == LogType.TODO_UPDATE:
        todo = _decoded(detail, where=f"logs[{index}].detail") if isinstance(detail, str) else detail
        if not _todo_shape_ok(todo):
            raise Invalid.field(
                f"logs[{index}].detail",
                _("a TODO_UPDATE's detail must be the whole todo list [{text, status}, …], as JSON or as JSON text."),
            )
        return {**entry, "detail": todo}
    if entry["type"] == LogType.TOOL_CALL and isinstance(detail, str):
        arguments = _decoded(detail, where=f"logs[{index}].detail")
        if arguments is not None:
            return {**entry, "detail": arguments}
    return entry


def logs_append(*, visit: Visit, logs: list[dict]) -> dict:
    """Append a batch of logs to ``visit`` in order (SPEC §4.1, §4.3).

    Each entry: ``{seq?, type, timestamp?, message?, detail?}`` (``timestamp`` a
    datetime or None = now). A log whose ``(visit, seq)`` exists, or repeats a
    seq earlier in the batch, is skipped; entries without ``seq`` get the next
    one after the highest stored. A TODO_UPDATE's ``detail`` is the whole list
    ``[{text, status}]``, or that list as JSON text (decoded here); a
    TOOL_CALL's arguments sent as JSON text are decoded too (SPEC §4.1).
    Accepted after completion and after the run finished. Returns ``{"added",
    "skipped", "lastSeq"}``. Raises Invalid for an unknown type, a bad seq or a
    todo list of another shape; LimitReached (429) when the visit would hold
    more than ``MAX_LOGS_PER_VISIT`` logs (nothing of the batch is stored).
    """
    logs = [_log_checked(i, entry) for i, entry in enumerate(logs)]
    now = timezone.now()
    with transaction.atomic():
        commit_without_waiting_for_disk()  # log batches: telemetry (docs in project.transactions)
        locked = (
            Visit.objects.select_for_update().only("id", "log_counter", "log_count", "meta_content").get(pk=visit.pk)
        )
        wanted = {e["seq"] for e in logs if e.get("seq") is not None}
        taken = set(VisitLog.objects.filter(visit_id=visit.pk, seq__in=wanted).values_list("seq", flat=True))
        counter = locked.log_counter
        rows = []
        skipped = 0
        for entry in logs:
            seq = entry.get("seq")
            if seq is None:
                seq = counter + 1
            elif seq in taken:
                skipped += 1
                continue
            taken.add(seq)
            counter = max(counter, seq)
            rows.append(
                VisitLog(
                    visit_id=visit.pk,
                    seq=seq,
                    type=entry["type"],
                    timestamp=entry.get("timestamp") or now,
                    message=entry.get("message") or "",
                    detail=entry.get("detail"),
                )
            )
        limit = _limits()["MAX_LOGS_PER_VISIT"]
        if locked.log_count + len(rows) > limit:
            raise LimitReached(
                _(
                    "Visit '%(visit)s' holds %(count)d logs; MAX_LOGS_PER_VISIT (%(limit)d) leaves room for %(room)d, "
                    "and this batch has %(new)d new ones."
                )
                % {
                    "visit": visit.visit_uuid,
                    "count": locked.log_count,
                    "limit": limit,
                    "room": max(limit - locked.log_count, 0),
                    "new": len(rows),
                }
            )
        VisitLog.objects.bulk_create(rows)
        if rows:
            Visit.objects.filter(pk=visit.pk).update(
                log_counter=counter, log_count=locked.log_count + len(rows), meta_content=_meta_kept(locked, rows)
            )
        tokens.tokens_touch(visit=visit)  # the batch, the sign of life and the slide: one commit
    visit.log_counter = counter
    return {"added": len(rows), "skipped": skipped, "lastSeq": counter}


def _meta_kept(locked: Visit, rows: list[VisitLog]) -> dict:
    """The visit's kept meta content (``Visit.meta_content``) with ``rows`` added:
    appended when they all come after the stored logs (the usual case), else
    rebuilt from every log in seq order (a batch that fills a gap)."""
    rows = sorted(rows, key=lambda row: row.seq)
    kept = locked.meta_content
    if locked.log_count and (kept is None or locked.log_counter >= rows[0].seq):
        rows = VisitLog.objects.filter(visit_id=locked.pk).order_by("seq")
        kept = None
    return queries.meta_kept(({"type": r.type, "message": r.message, "detail": r.detail} for r in rows), kept)
