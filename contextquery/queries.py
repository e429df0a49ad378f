"""What a running visit may read of its run (SPEC §4.5): path, output, meta.

Scope: only the token visit's ancestor visits (through parent links, §4.2) —
not the visit itself, not its siblings, not later visits, not another run.
Each query loads the run's visits in one query (light columns only) to find
the scope, then at most one more query for the target's output or logs.

Errors raised: ``NotFound`` (404) for a node, visit or field out of reach;
``LimitReached`` (429) for a spent budget (:func:`query_budget_take`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db import connection
from django.db.models import F

from contextquery import paths
from contextquery.client.wire import META_KINDS
from contextquery.models import ContextToken, LogType, Visit, VisitLog, VisitStatus
from contextquery.tokens import config
from contextquery.truncation import fit_json
from project.errors import LimitReached, NotFound

KIND_THINKING, KIND_TOOL_CALLS, KIND_TODO, KIND_ALL = META_KINDS

_KIND_LOG_TYPES = {
    KIND_THINKING: (LogType.THINKING,),
    KIND_TOOL_CALLS: (LogType.TOOL_CALL, LogType.TOOL_RESULT),
    KIND_TODO: (LogType.TODO_UPDATE,),
}


def query_budget_take(*, visit_id: int) -> bool:
    """Count one query against the visit's budget of ``MAX_QUERIES_PER_VISIT``.

    One conditional ``UPDATE … SET query_count = query_count + 1 WHERE id = ?
    AND query_count < ?``: the database serialises concurrent updates of the
    row, so no race lets one query past the limit. Returns False when the
    budget was already spent (nothing is counted then).
    """
    limit = config()["MAX_QUERIES_PER_VISIT"]
    return bool(Visit.objects.filter(pk=visit_id, query_count__lt=limit).update(query_count=F("query_count") + 1))


def query_budget_refuse() -> LimitReached:
    """The 429 for a spent budget (no Retry-After: waiting does not help)."""
    limit = config()["MAX_QUERIES_PER_VISIT"]
    return LimitReached(f"This visit has used its {limit} context queries; no more are answered.")


@dataclass
class Scope:
    """The run's visits as seen from the token's visit.

    ``nodes``: every visit of the run as a :class:`paths.VisitNode`, by uuid;
    ``iter_seqs``: uuid → iterSeq; ``ancestors``: uuids the token visit may read.
    """

    visit_uuid: str
    nodes: dict[str, paths.VisitNode]
    iter_seqs: dict[str, int]
    pks: dict[str, int]
    ancestors: frozenset[str]

    def visits_of(self, node_id: str) -> list[str]:
        """Uuids of ``node_id``'s visits in the run, by iterSeq."""
        return sorted((u for u, n in self.nodes.items() if n.node_id == node_id), key=self.iter_seqs.__getitem__)


def _uuid_text(value) -> str:
    """A visit uuid as the hyphenated text parent links use: SQLite hands back
    32 hex characters, PostgreSQL a ``uuid.UUID``."""
    if isinstance(value, str) and len(value) == 32:
        return f"{value[:8]}-{value[8:12]}-{value[12:16]}-{value[16:20]}-{value[20:]}"
    return str(value)


def _scope_rows(run_id: int) -> list[tuple]:
    """``(pk, uuid text, node_id, sort_order, parent list, status, iter_seq)`` of
    every visit of the run. Runs the ORM's own SQL but skips its per-row
    converters: a uuid object and a ``json.loads`` per row cost more than the
    query itself at 200 visits; the parent lists are decoded in one call."""
    # order_by(): Visit's default ordering starts with "run", which would join
    # the run table and sort by its ordering for rows whose order is unused here.
    query = (
        Visit.objects.filter(run_id=run_id)
        .order_by()
        .values_list("pk", "visit_uuid", "node_id", "sort_order", "parent_uuids", "status", "iter_seq")
    )
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    # Both backends hand JSON columns over as text (Django decodes in from_db_value).
    parents = json.loads("[" + ",".join("null" if r[4] is None else r[4] for r in rows) + "]")
    return [(r[0], _uuid_text(r[1]), r[2], r[3], p, r[5], r[6]) for r, p in zip(rows, parents, strict=False)]


def _scope(token: ContextToken) -> Scope:
    nodes, iter_seqs, pks = {}, {}, {}
    for pk, key, node_id, sort_order, parents, status, iter_seq in _scope_rows(token.run_id):
        nodes[key] = paths.VisitNode(
            visit_uuid=key,
            node_id=node_id,
            sort_order=sort_order,
            parent_uuids=tuple(str(p) for p in (parents or ())),
            status=status,
        )
        iter_seqs[key] = iter_seq
        pks[key] = pk
    me = str(token.visit.visit_uuid)
    return Scope(
        visit_uuid=me,
        nodes=nodes,
        iter_seqs=iter_seqs,
        pks=pks,
        ancestors=frozenset(paths.ancestors(visit_uuid=me, visits_by_uuid=nodes)),
    )


def _not_a_predecessor(what: str) -> NotFound:
    return NotFound(f"{what} is not a predecessor of the current visit.")


def _resolve_node_visit(scope: Scope, *, node_id: str, iter_seq: int | None) -> str:
    """The uuid of the visit of ``node_id`` to read: the given iterSeq, or the
    latest one among the predecessors. Raises ``NotFound``.

    Everything outside the scope gets the same answer — a node never visited,
    visited only later or on another branch, an iterSeq it never reached — so a
    token learns nothing about visits it may not read (issue 12).
    """
    readable = [u for u in scope.visits_of(node_id) if u in scope.ancestors]
    if iter_seq is not None:
        readable = [u for u in readable if scope.iter_seqs[u] == iter_seq]
    if not readable:
        label = f"Node '{node_id}'" if iter_seq is None else f"Visit {iter_seq} of node '{node_id}'"
        raise _not_a_predecessor(label)
    return readable[-1]


def path_query(*, token: ContextToken) -> dict:
    """The §4.2 predecessor path graph of the token's visit, in the wire shape
    ``{visitUuids, nodeIds, paths[{sequence, visitUuids, hasBacktrack, truncated}],
    backtrackEdgeKeys, truncated}``; bounded by ``MAX_PATHS`` and ``MAX_PATH_DEPTH``."""
    scope = _scope(token)
    cfg = config()
    graph = paths.path_graph(
        visit_uuid=scope.visit_uuid,
        visits=scope.nodes,
        canvas=token.run.graph,
        max_paths=cfg["MAX_PATHS"],
        max_depth=cfg["MAX_PATH_DEPTH"],
    )
    return graph.as_dict()


_MISSING = object()
#: A dotted ``field`` has at most this many parts (more is a 422 at the door).
MAX_FIELD_PARTS = 64
#: A field lookup tries at most this many candidate keys, whatever the data:
#: keys that themselves contain dots make the search branch, and a hostile
#: output must not turn one query into seconds of CPU (SPEC §4.5, issue 12).
MAX_FIELD_PROBES = 1000


class FieldNotFound(LookupError):
    """``field`` is not in the data: ``reached`` is the dotted path found deepest,
    ``keys`` what is available there, ``bounded`` True when the lookup gave up
    after :data:`MAX_FIELD_PROBES` tries."""

    def __init__(self, reached: str, keys: str, *, bounded: bool = False):
        super().__init__(reached, keys)
        self.reached, self.keys, self.bounded = reached, keys, bounded


def field_select(data, field: str):
    """The value at ``field`` inside ``data`` (SPEC §4.5).

    ``field`` names a key of ``data``; a dotted path reaches into nested objects
    and list indexes (``items.0.name``). At every level a key that itself
    contains dots is tried whole first, then shorter prefixes. At most
    :data:`MAX_FIELD_PROBES` candidate keys are tried in all, so any lookup
    takes milliseconds. Raises :class:`FieldNotFound` with the dotted path
    found deepest and the keys (or index range) available there.
    """
    deepest = {"at": -1, "value": data}
    failed: set[tuple[int, int]] = set()
    probes = [MAX_FIELD_PROBES]

    def step(value, start: int):
        if start > deepest["at"]:
            deepest["at"], deepest["value"] = start, value
        if (id(value), start) in failed or not isinstance(value, (dict, list)):
            return _MISSING
        # Candidate keys, longest first: the whole remaining text, then each prefix ending before a dot.
        cuts = [len(field)] + [i for i in range(len(field) - 1, start - 1, -1) if field[i] == "."]
        for end in cuts:
            if probes[0] <= 0:
                return _MISSING
            probes[0] -= 1
            key = field[start:end]
            if isinstance(value, dict) and key in value:
                child = value[key]
            elif isinstance(value, list) and key.isdigit() and key.isascii() and int(key) < len(value):
                child = value[int(key)]
            else:
                continue
            if end == len(field):
                return child
            found = step(child, end + 1)
            if found is not _MISSING:
                return found
        failed.add((id(value), start))
        return _MISSING

    found = step(data, 0) if field else _MISSING
    if found is _MISSING:
        reached = field[: max(deepest["at"] - 1, 0)]
        raise FieldNotFound(reached, _available(deepest["value"]), bounded=probes[0] <= 0)
    return found


#: How many of the available keys a "field not found" answer names.
AVAILABLE_KEYS_SHOWN = 20


def _available(value) -> str:
    if isinstance(value, dict):
        if not value:
            return "none (an empty object)"
        shown = [repr(k if len(k) <= 60 else k[:57] + "...") for k in list(value)[:AVAILABLE_KEYS_SHOWN]]
        more = len(value) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    if isinstance(value, list):
        return f"indexes 0 to {len(value) - 1}" if value else "none (an empty list)"
    return f"none (the value is {'null' if value is None else type(value).__name__})"


def _envelope_parts(output, status: str):
    """(status, message, data) of a visit's output envelope; a running visit has
    ``status: null`` (SPEC §4.5)."""
    if not isinstance(output, dict):
        return None, None, output
    envelope_status = output.get("status") if status != VisitStatus.RUNNING else None
    return envelope_status, output.get("message"), output.get("data")


def output_query(
    *,
    token: ContextToken,
    node_id: str,
    field: str | None = None,
    iter_seq: int | None = None,
    max_bytes: int | None = None,
) -> dict:
    """A predecessor's output (SPEC §4.5):
    ``{nodeId, iterSeq, visitUuid, status, message, data, requestedField, truncated, originalBytes}``.

    ``iter_seq`` None → the latest visit of ``node_id`` among the predecessors;
    ``field`` selects (dotted) inside ``data``; ``data`` is cut to ``max_bytes``
    (default ``MAX_BYTES``). Raises ``NotFound`` for a node or visit out of
    scope, or a missing field (naming the available keys).
    """
    scope = _scope(token)
    uuid = _resolve_node_visit(scope, node_id=node_id, iter_seq=iter_seq)
    output, visit_status = Visit.objects.filter(pk=scope.pks[uuid]).values_list("output", "status").get()
    status, message, data = _envelope_parts(output, visit_status)
    chosen_seq = scope.iter_seqs[uuid]
    if field is not None:
        try:
            data = field_select(data, field)
        except FieldNotFound as exc:
            reached, keys = exc.reached, exc.keys
            where = f" at '{reached}'" if reached else ""
            raise NotFound(
                f"Field '{field}' is not in the output data of node '{node_id}' (iterSeq {chosen_seq}); "
                f"available{where}: {keys}."
            ) from None
    fitted = fit_json(data, max_bytes or config()["MAX_BYTES"])
    return {
        "nodeId": node_id,
        "iterSeq": chosen_seq,
        "visitUuid": uuid,
        "status": status,
        "message": message,
        "data": fitted.value,
        "requestedField": field,
        "truncated": fitted.truncated,
        "originalBytes": fitted.original_bytes,
    }


def _iso(moment) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def meta_content(logs: list[dict], kind: str) -> dict:
    """The meta keys for ``kind`` from a visit's logs (dicts with ``type``,
    ``timestamp``, ``message``, ``detail``, in ``seq`` order). Pure.

    ``thinking``: THINKING messages joined by newlines; ``toolCalls``:
    ``{tool, args}`` per TOOL_CALL and ``{tool, result}`` per TOOL_RESULT, in
    order; ``todoList``: the last TODO_UPDATE's detail (null when none);
    ``logs`` (ALL only): every log.
    """
    content: dict = {}
    if kind in (KIND_THINKING, KIND_ALL):
        content["thinking"] = "\n".join(log["message"] for log in logs if log["type"] == LogType.THINKING)
    if kind in (KIND_TOOL_CALLS, KIND_ALL):
        calls = []
        for log in logs:
            if log["type"] == LogType.TOOL_CALL:
                calls.append({"tool": log["message"], "args": log["detail"]})
            elif log["type"] == LogType.TOOL_RESULT:
                calls.append({"tool": log["message"], "result": log["detail"]})
        content["toolCalls"] = calls
    if kind in (KIND_TODO, KIND_ALL):
        todos = [log["detail"] for log in logs if log["type"] == LogType.TODO_UPDATE]
        content["todoList"] = todos[-1] if todos else None
    if kind == KIND_ALL:
        content["logs"] = [
            {
                "type": log["type"],
                "timestamp": _iso(log["timestamp"]),
                "message": log["message"],
                "detail": log["detail"],
            }
            for log in logs
        ]
    return content


def meta_query(
    *,
    token: ContextToken,
    node_id: str | None = None,
    visit_uuid: str | None = None,
    kind: str = KIND_ALL,
    iter_seq: int | None = None,
    max_bytes: int | None = None,
) -> dict:
    """A predecessor's thinking, tool calls and todo list (SPEC §4.5):
    ``{nodeId, iterSeq, visitUuid, thinking?, toolCalls?, todoList?, logs?, truncated, originalBytes}``.

    ``visit_uuid`` wins over ``node_id`` (then ``iter_seq`` is not used);
    ``kind`` is one of :data:`META_KINDS` (validated by the caller). The kind's
    content is cut as one JSON object to ``max_bytes``. Raises ``NotFound``.
    """
    scope = _scope(token)
    if visit_uuid is not None:
        uuid = str(visit_uuid)
        if uuid not in scope.ancestors:
            raise _not_a_predecessor(f"Visit {uuid}")
    else:
        uuid = _resolve_node_visit(scope, node_id=node_id, iter_seq=iter_seq)
    logs = VisitLog.objects.filter(visit_id=scope.pks[uuid]).order_by("seq")
    if kind in _KIND_LOG_TYPES:
        logs = logs.filter(type__in=_KIND_LOG_TYPES[kind])
    content = meta_content(list(logs.values("type", "timestamp", "message", "detail")), kind)
    fitted = fit_json(content, max_bytes or config()["MAX_BYTES"])
    cut = fitted.value if isinstance(fitted.value, dict) else {}
    return {
        "nodeId": scope.nodes[uuid].node_id,
        "iterSeq": scope.iter_seqs[uuid],
        "visitUuid": uuid,
        **{key: cut.get(key) for key in content},
        "truncated": fitted.truncated,
        "originalBytes": fitted.original_bytes,
    }
