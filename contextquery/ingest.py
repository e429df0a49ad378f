"""Recording rules: runs, visits, logs, completions (SPEC §4.1–§4.4).

Every writer — the REST API, ``manage.py loaddemo``, tests — goes through these
functions, so the rules hold whatever the caller. They raise the domain errors
of ``project.errors`` (422 ``Invalid``, 403 ``Forbidden``, 404 ``NotFound``,
409 ``Conflict``), never HTTP objects, and a refused call changes nothing
stored: each write runs in one transaction and validates before writing.

Concurrency: sortOrder, iterSeq and log seqs come from counters on the run or
visit row, advanced under a row lock (``select_for_update`` on PostgreSQL; on
SQLite every transaction is IMMEDIATE, which serialises writers). The unique
constraints on ``(run, sortOrder)``, ``(run, nodeId, iterSeq)`` and
``(visit, seq)`` are the backstop.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone
from django.utils.translation import gettext as _

from contextquery import paths, tokens
from contextquery.models import (
    ENDED_VISIT_STATUSES,
    LogType,
    RunMode,
    RunStatus,
    Visit,
    VisitLog,
    VisitStatus,
    WorkflowRun,
)
from project.errors import Conflict, Forbidden, Invalid, NotFound

#: runIds appear in URLs, so they are limited to URL-safe characters.
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")
FAIL_STRATEGIES = ("abort", "skip")
COMPLETION_STATUSES = (VisitStatus.SUCCESS, VisitStatus.FAILED, VisitStatus.SKIPPED)
FINISH_STATUSES = (RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.CANCELLED)
REASON_QUOTE_CHARS = 200
#: Sentinel for "the engine did not send this field" (``None`` may be a value).
MISSING = object()


def _one_of(allowed, value) -> str:
    return _("must be one of %(allowed)s, not %(value)r.") % {"allowed": ", ".join(allowed), "value": value}


def _visit_missing(visit_uuid, run) -> str:
    return _("Visit '%(visit)s' does not exist in run '%(run)s'.") % {"visit": visit_uuid, "run": run.run_id}


def _limits() -> dict:
    return settings.HERMES_CONTEXT_QUERY


# --------------------------------------------------------------------------- access


def run_can_read(*, user) -> bool:
    """Reading runs needs ``contextquery.view_workflowrun`` or staff (SPEC §4.3)."""
    return bool(user and user.is_authenticated and (user.is_staff or user.has_perm("contextquery.view_workflowrun")))


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


# --------------------------------------------------------------------------- graph


def graph_validate(graph) -> dict:
    """Check a canvas graph and return it normalised (SPEC §4.1).

    ``{nodes: [{id, type?, name?, failStrategy?}], edges: [{source, target}]}``:
    node ids unique non-empty strings, ``type``/``name`` strings, ``failStrategy``
    ``abort`` (default, filled in) or ``skip``; edges reference known nodes.
    Extra keys on nodes and edges are kept. Raises Invalid naming the field.
    """
    if not isinstance(graph, dict):
        raise Invalid.field("graph", _("must be an object {nodes: [...], edges: [...]}."))
    nodes = graph.get("nodes")
    edges = graph.get("edges", [])
    if not isinstance(nodes, list) or not nodes:
        raise Invalid.field("graph.nodes", _("must be a non-empty list of nodes {id, type, name, failStrategy}."))
    if not isinstance(edges, list):
        raise Invalid.field("graph.edges", _("must be a list of edges {source, target}."))
    seen: set[str] = set()
    out_nodes = []
    for i, node in enumerate(nodes):
        where = f"graph.nodes[{i}]"
        if not isinstance(node, dict):
            raise Invalid.field(where, _("must be an object {id, type, name, failStrategy}."))
        node_id = node.get("id")
        if not isinstance(node_id, str) or not node_id.strip():
            raise Invalid.field(f"{where}.id", _("must be a non-empty string."))
        if len(node_id) > 200:
            raise Invalid.field(f"{where}.id", _("must be at most 200 characters."))
        if node_id in seen:
            raise Invalid.field(
                f"{where}.id", _("'%(id)s' is used by another node; node ids must be unique.") % {"id": node_id}
            )
        seen.add(node_id)
        for key in ("type", "name"):
            if key in node and node[key] is not None and not isinstance(node[key], str):
                raise Invalid.field(f"{where}.{key}", _("must be a string."))
        strategy = node.get("failStrategy")
        if strategy is None:
            strategy = "abort"
        if strategy not in FAIL_STRATEGIES:
            raise Invalid.field(f"{where}.failStrategy", _one_of(FAIL_STRATEGIES, strategy))
        out_nodes.append({**node, "failStrategy": strategy})
    out_edges = []
    for i, edge in enumerate(edges):
        where = f"graph.edges[{i}]"
        if not isinstance(edge, dict):
            raise Invalid.field(where, _("must be an object {source, target}."))
        for key in ("source", "target"):
            value = edge.get(key)
            if not isinstance(value, str):
                raise Invalid.field(f"{where}.{key}", _("must be the id of a node of the graph."))
            if value not in seen:
                raise Invalid.field(
                    f"{where}.{key}", _("'%(id)s' is not the id of a node of the graph.") % {"id": value}
                )
        out_edges.append(dict(edge))
    return {**graph, "nodes": out_nodes, "edges": out_edges}


def graph_node(*, run: WorkflowRun, node_id: str) -> dict | None:
    """The canvas node ``node_id`` of ``run``'s graph, or None."""
    for node in (run.graph or {}).get("nodes", []):
        if isinstance(node, dict) and node.get("id") == node_id:
            return node
    return None


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

    ``run_id`` None → an 8-character id is generated. A repeat with an id the
    engine chose and an equal body returns the stored run with ``created``
    False; a different body, or another engine client, raises Conflict (409).
    Raises Invalid for a bad graph, mode or runId, Forbidden without
    ``record_run``.
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
    graph = graph_validate(graph)
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
    from contextquery.models import generate_run_id

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
        changed = ", ".join(_api_name(k) for k in fields if stored[k] != fields[k])
        raise Conflict(
            _("Run '%(run)s' already exists with a different body (%(fields)s differ).")
            % {"run": run.run_id, "fields": changed}
        )
    return run


def _api_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.capitalize() for part in rest)


def run_finish(*, run: WorkflowRun, status: str) -> tuple[WorkflowRun, int]:
    """Finish a run (SPEC §4.3). Returns ``(run, number of visits cancelled)``.

    Visits still RUNNING become CANCELLED and the run's live tokens are
    revoked. Finishing again with the same status answers the stored run;
    another status raises Conflict. Raises Invalid for a bad status.
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
        now = timezone.now()
        cancelled = Visit.objects.filter(run=run, status=VisitStatus.RUNNING).update(
            status=VisitStatus.CANCELLED, ended_at=now
        )
        run.status = status
        run.finished_at = now
        run.save(update_fields=["status", "finished_at"])
    tokens.tokens_revoke_for_run(run=run)
    return run, cancelled


def run_list(*, user=None):
    """Runs, newest first, each annotated with ``visit_count``."""
    return WorkflowRun.objects.select_related("created_by").annotate(visit_count=Count("visits")).order_by(
        "-started_at", "-id"
    )


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
    input=None,  # noqa: A002 - the wire name
) -> Registration:
    """Register a visit of ``node_id`` in ``run`` (SPEC §4.1–§4.3).

    ``from_visit_uuids``: a list of parent visit uuids (``[]`` = a root), or
    MISSING/None to derive them (§4.2). The server assigns sortOrder and
    iterSeq under a lock on the run row. A repeat of an engine-chosen
    ``visit_uuid`` with an equal body answers the stored visit (and a fresh
    token); a different body raises Conflict.

    Raises Invalid (422) for a node missing from the graph or unknown/foreign
    parents; Conflict (409) for a finished run or beyond ``MAX_VISITS_PER_RUN``.
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
    if visit_uuid:
        try:
            visit_uuid = str(uuid.UUID(str(visit_uuid)))
        except ValueError:
            raise Invalid.field("visitUuid", _("must be a UUID, not %(value)r.") % {"value": visit_uuid}) from None
        registration["visitUuid"] = visit_uuid
        existing = Visit.objects.filter(visit_uuid=visit_uuid).select_related("run").first()
        if existing is not None:
            return _visit_repeat(existing, run, registration)

    node = graph_node(run=run, node_id=node_id)
    if node is None:
        known = ", ".join(n.get("id", "?") for n in run.graph.get("nodes", [])[:20])
        raise Invalid.field(
            "nodeId", _("'%(id)s' is not a node of the run's graph (nodes: %(known)s).") % {"id": node_id, "known": known}
        )

    try:
        with transaction.atomic():
            visit = _visit_insert(run, node, registration)
    except IntegrityError:
        # Only a concurrent register of the same visitUuid can collide here
        # (sortOrder and iterSeq are taken under the lock).
        existing = Visit.objects.filter(visit_uuid=visit_uuid).select_related("run").first() if visit_uuid else None
        if existing is None:
            raise
        return _visit_repeat(existing, run, registration)
    return Registration(visit=visit, created=True, context_query=tokens.context_query_object(visit=visit))


def _visit_repeat(existing: Visit, run: WorkflowRun, registration: dict) -> Registration:
    if existing.run_id != run.pk:
        raise Conflict(_("Visit '%(visit)s' already exists in another run.") % {"visit": registration["visitUuid"]})
    if existing.registration != registration:
        raise Conflict(
            _("Visit '%(visit)s' was already registered with a different body.") % {"visit": registration["visitUuid"]}
        )
    return Registration(visit=existing, created=False, context_query=tokens.context_query_object(visit=existing))


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
    if parents is None:
        canvas = paths.Canvas(locked.graph)
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
        _parents_check(locked, parents)
    iter_seq = (Visit.objects.filter(run=locked, node_id=node_id).aggregate(m=Max("iter_seq"))["m"] or 0) + 1
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
        "input": registration["input"],
        "registration": registration,
        "started_at": timezone.now(),
    }
    if registration["visitUuid"]:
        fields["visit_uuid"] = registration["visitUuid"]
    return Visit.objects.create(**fields)


_NODE_FIELDS = ("visit_uuid", "node_id", "sort_order", "parent_uuids", "status")


def _parents_check(run: WorkflowRun, parents: list[str]) -> None:
    found = {
        str(u): run_pk
        for u, run_pk in Visit.objects.filter(visit_uuid__in=parents).values_list("visit_uuid", "run_id")
    }
    for i, parent in enumerate(parents):
        if parent not in found:
            raise Invalid.field(
                f"fromVisitUuids[{i}]", _("'%(visit)s' is not a visit of run '%(run)s'.") % {"visit": parent, "run": run.run_id}
            )
        if found[parent] != run.pk:
            raise Invalid.field(
                f"fromVisitUuids[{i}]",
                _("'%(visit)s' belongs to another run, not '%(run)s'.") % {"visit": parent, "run": run.run_id},
            )


def visit_heartbeat(*, visit: Visit) -> Visit:
    """A sign of life of ``visit`` (SPEC §4.3): slides its tokens' expiry."""
    tokens.tokens_touch(visit=visit)
    return visit


def visit_list(*, run: WorkflowRun):
    """The visits of ``run`` by sortOrder, with their matched pattern."""
    return Visit.objects.filter(run=run).select_related("run", "matched_pattern").order_by("sort_order")


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


def visit_detail(*, visit: Visit) -> dict:
    """A visit with its logs, predecessor paths and the reads its LLM made:
    ``{"visit", "logs", "paths", "reads"}`` (querysets and a PathGraph)."""
    return {
        "visit": visit,
        "logs": list(visit.logs.order_by("seq")),
        "paths": visit_paths(visit=visit),
        "reads": list(visit.reads.order_by("created_at", "id")),
    }


# --------------------------------------------------------------------------- logs


def logs_append(*, visit: Visit, logs: list[dict]) -> dict:
    """Append a batch of logs to ``visit`` in order (SPEC §4.1, §4.3).

    Each entry: ``{seq?, type, timestamp?, message?, detail?}`` (``timestamp`` a
    datetime or None = now). A log whose ``(visit, seq)`` exists, or repeats a
    seq earlier in the batch, is skipped; entries without ``seq`` get the next
    one after the highest stored. Accepted after completion and after the run
    finished. Returns ``{"added", "skipped", "lastSeq"}``. Raises Invalid for an
    unknown type or a bad seq.
    """
    for i, entry in enumerate(logs):
        if entry.get("type") not in LogType.values:
            raise Invalid.field(
                f"logs[{i}].type", _one_of(LogType.values, entry.get("type"))
            )
        seq = entry.get("seq")
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
            raise Invalid.field(f"logs[{i}].seq", _("must be a positive integer."))
    now = timezone.now()
    with transaction.atomic():
        locked = Visit.objects.select_for_update().only("id", "log_counter").get(pk=visit.pk)
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
        VisitLog.objects.bulk_create(rows)
        if counter != locked.log_counter:
            Visit.objects.filter(pk=visit.pk).update(log_counter=counter)
    visit.log_counter = counter
    tokens.tokens_touch(visit=visit)
    return {"added": len(rows), "skipped": skipped, "lastSeq": counter}


# --------------------------------------------------------------------------- completion


@dataclass(frozen=True)
class AgentResult:
    """The agent's own structured signals (SPEC §4.4)."""

    failed: bool | None = None
    failure_reason: str | None = None
    error: str | None = None
    completed: bool | None = None
    turn_exit_reason: str | None = None

    @classmethod
    def from_wire(cls, data: dict | None) -> "AgentResult | None":
        if data is None:
            return None
        return cls(
            failed=data.get("failed"),
            failure_reason=data.get("failureReason"),
            error=data.get("error"),
            completed=data.get("completed"),
            turn_exit_reason=data.get("turnExitReason"),
        )


@dataclass
class _Judgement:
    status: str
    output: dict | None
    reason: str = ""
    category: str = ""
    retryable: bool | None = None
    detection: object | None = None  # a patterns.detection.Detection that caused the failure


def visit_complete(
    *,
    visit: Visit,
    status: str,
    output=None,
    final_text: str | None = None,
    error: str | None = None,
    agent_result: dict | None = None,
) -> dict:
    """Record a visit's completion and decide its effective status (SPEC §4.4).

    Structured agent signals first, error patterns last (the steps of §4.4 in
    order). ``output`` is the envelope ``{status, message, data}`` or None;
    ``final_text`` None means "not sent" (only a sent finalText is judged);
    ``agent_result`` the wire ``{failed, failureReason, error, completed,
    turnExitReason}``. Returns the verdict (see :func:`visit_verdict`).

    An identical repeat returns the stored verdict without judging again; a
    different one raises Conflict. Accepted after the run finished (a visit
    cancelled by the finish takes its late completion). Raises Invalid for a
    bad status or a non-object output. Revokes the visit's tokens.
    """
    if status not in COMPLETION_STATUSES:
        raise Invalid.field("status", _one_of(COMPLETION_STATUSES, status))
    if output is not None and not isinstance(output, dict):
        raise Invalid.field("output", _("must be an object, the envelope {status, message, data}."))
    if output is not None and "status" in output and (
        isinstance(output["status"], bool) or not isinstance(output["status"], int)
    ):
        raise Invalid.field("output.status", _("must be an integer (200 success, 400 failure)."))
    if agent_result is not None and not isinstance(agent_result, dict):
        raise Invalid.field(
            "agentResult", _("must be an object {failed, failureReason, error, completed, turnExitReason}.")
        )
    completion = {
        "status": status,
        "output": output,
        "finalText": final_text,
        "error": error,
        "agentResult": agent_result,
    }
    with transaction.atomic():
        locked = Visit.objects.select_for_update(of=("self",)).select_related("run").get(pk=visit.pk)
        if locked.completion is not None:
            if locked.completion == completion:
                return visit_verdict(visit=locked)
            raise Conflict(
                _("Visit '%(visit)s' was already completed (%(status)s) with a different body.")
                % {"visit": locked.visit_uuid, "status": locked.status}
            )
        judged = _judge(locked, status, output, final_text, error, AgentResult.from_wire(agent_result))
        node = graph_node(run=locked.run, node_id=locked.node_id) or {}
        strategy = node.get("failStrategy") or "abort"
        locked.status = judged.status
        locked.output = judged.output
        locked.final_text = final_text
        locked.failure_reason = judged.reason
        locked.failure_category = judged.category
        locked.retryable = judged.retryable
        locked.run_action = "abort" if judged.status == VisitStatus.FAILED and strategy == "abort" else "continue"
        det = judged.detection
        if det is not None:
            locked.matched_pattern_id = det.pattern_id
            locked.matched_pattern_key = det.key or ""
            locked.matched_pattern_name = det.name or ""
            locked.matched_pattern_text = det.pattern or ""
        locked.completion = completion
        locked.ended_at = timezone.now()
        locked.save()
        if det is not None:
            _count_hit(det)
    tokens.tokens_revoke_for_visit(visit=locked)
    locked.refresh_from_db()
    return visit_verdict(visit=locked)


def visit_verdict(*, visit: Visit) -> dict:
    """The stored verdict of a completed visit (SPEC §4.4):
    ``{visitUuid, effectiveStatus, failureReason, matchedPattern, category,
    retryable, runAction}``; ``matchedPattern`` is ``{id, key, name}`` or None."""
    matched = None
    if visit.matched_pattern_id or visit.matched_pattern_name:
        matched = {
            "id": visit.matched_pattern_id,
            "key": visit.matched_pattern_key or None,
            "name": visit.matched_pattern_name,
        }
    return {
        "visitUuid": str(visit.visit_uuid),
        "effectiveStatus": visit.status,
        "failureReason": visit.failure_reason or None,
        "matchedPattern": matched,
        "category": visit.failure_category or None,
        "retryable": visit.retryable,
        "runAction": visit.run_action or None,
    }


def _detect(text: str | None):
    if not text or not text.strip():
        return None
    from patterns.detection import detect

    return detect(text)


def _count_hit(detection) -> None:
    from patterns.detection import count_hit

    count_hit(pattern_id=detection.pattern_id)


def _category_retryable(category: str) -> bool:
    from patterns.models import RETRYABLE_CATEGORIES

    return category in RETRYABLE_CATEGORIES


def _category_names() -> set[str]:
    from patterns.models import Category

    return set(Category.values)


def _failure_envelope(reason: str, output: dict | None, final_text: str | None) -> dict:
    original_data = output.get("data") if isinstance(output, dict) else None
    return {"status": 400, "message": reason, "data": {"originalText": final_text, "originalData": original_data}}


def _categorised(judgement: _Judgement, *texts: str | None) -> _Judgement:
    """Fill category and retryable from the first text a pattern matches (no hit counted)."""
    for text in texts:
        det = _detect(text)
        if det is not None:
            judgement.category = det.category
            judgement.retryable = bool(det.retryable)
            return judgement
    return judgement


def _judge(visit, status, output, final_text, error, agent: AgentResult | None) -> _Judgement:
    node_id = visit.node_id
    # 1. The agent says it failed.
    if agent is not None and agent.failed:
        parts = [p for p in (agent.failure_reason, agent.error or error) if p]
        reason = ": ".join(parts) if parts else f"Agent of node {node_id} reported a failure."
        judged = _Judgement(VisitStatus.FAILED, _failure_envelope(reason, output, final_text), reason)
        # The agent's own category wins; a pattern matching the reply is kept
        # on the visit (ops see which rule agrees) and gives retryable (§4.4.1).
        det = _detect(final_text) if final_text and final_text.strip() else None
        judged.detection = det
        if agent.failure_reason in _category_names():
            judged.category = agent.failure_reason
        elif det is not None:
            judged.category = det.category
        else:
            _categorised(judged, agent.error or error)
            judged.category = judged.category or "other"
        if det is not None:
            judged.retryable = bool(det.retryable)
        elif judged.retryable is None:
            judged.retryable = _category_retryable(judged.category)
        return judged
    # 2. The agent stopped without finishing.
    if agent is not None and agent.completed is False:
        why = agent.turn_exit_reason or agent.failure_reason or "no reason given"
        reason = f"Agent of node {node_id} stopped without finishing ({why})."
        return _Judgement(
            VisitStatus.FAILED, _failure_envelope(reason, output, final_text), reason, "incomplete", False
        )
    # 3. The engine reports FAILED or SKIPPED.
    if status == VisitStatus.FAILED:
        message = error or (output or {}).get("message") or f"Node {node_id} reported a failure."
        envelope = {**output, "status": 400} if output is not None else {"status": 400, "message": message, "data": None}
        return _categorised(_Judgement(VisitStatus.FAILED, envelope, message), error, final_text)
    if status == VisitStatus.SKIPPED:
        return _Judgement(VisitStatus.SKIPPED, output)
    # 4. SUCCESS whose envelope says 400.
    if output is not None and output.get("status") == 400:
        message = output.get("message") or "no reason given"
        reason = f"Node {node_id} failed (envelope.status=400): {message}"
        return _categorised(_Judgement(VisitStatus.FAILED, output, reason), output.get("message"))
    # 5. SUCCESS whose agent reply is really an error (only a sent finalText is judged).
    if final_text is not None and final_text.strip():
        det = _detect(final_text)
        if det is not None:
            quote = final_text[:REASON_QUOTE_CHARS]
            reason = f'The agent reply matched error pattern "{det.name}": "{quote}"'
            return _Judgement(
                VisitStatus.FAILED,
                _failure_envelope(reason, output, final_text),
                reason,
                det.category,
                bool(det.retryable),
                det,
            )
    # 6. SUCCESS with a blank reply.
    if final_text is not None and not final_text.strip():
        reason = "empty agent reply"
        return _Judgement(VisitStatus.FAILED, _failure_envelope(reason, output, final_text), reason, "incomplete", False)
    return _Judgement(VisitStatus.SUCCESS, output)


__all__ = [
    "AgentResult",
    "ENDED_VISIT_STATUSES",
    "MISSING",
    "Registration",
    "graph_validate",
    "logs_append",
    "run_can_read",
    "run_can_record",
    "run_create",
    "run_finish",
    "run_get",
    "run_get_for_writer",
    "run_list",
    "visit_complete",
    "visit_detail",
    "visit_get",
    "visit_heartbeat",
    "visit_list",
    "visit_paths",
    "visit_register",
    "visit_verdict",
]
