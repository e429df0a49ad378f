"""``manage.py gen_load_data [--runs N] [--visits V] [--probe]``: bulk load data for benchmarks (issue 7).

Writes ``N`` finished AGENTIC runs of ``V`` visits each (default 10,000 × 200
= 2 M visits) straight into the tables, bypassing the recording rules: on
PostgreSQL with ``COPY`` through the ORM's connection, elsewhere with
``bulk_create``. Each run has a 20-node chain canvas; each visit's parent is
the visit before it and its node is drawn at random, so the planner flies back
often. Every run also gets a few small logs, revoked tokens and audit rows so
every hot table grows with the run count.

``--probe`` adds one RUNNING run shaped for the context benchmarks: 200
visits, its last one RUNNING (the visit that queries), 50 KB of logs on one
earlier visit, nested output data for dotted fields. Its description is
printed as JSON on the last line.

Meant for an otherwise idle database: primary keys are assigned here and the
sequences reset afterwards. On 2 cores, 2 M visits take a few minutes on
PostgreSQL; lower ``--runs`` for a quicker, smaller load.
"""

from __future__ import annotations

import json
import random
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.core.management.color import no_style
from django.db import connection, models, transaction
from django.db.models import Max
from django.utils import timezone

from contextquery import paths, queries
from contextquery.models import (
    ContextRead,
    ContextToken,
    LogType,
    RunMode,
    RunStatus,
    Visit,
    VisitLog,
    VisitStatus,
    WorkflowRun,
)

NODE_COUNT = 20
NODES = [f"N{i}" for i in range(NODE_COUNT)]
GRAPH = {
    "nodes": [{"id": n, "type": "agent", "name": f"Step {n}", "failStrategy": "abort"} for n in NODES],
    "edges": [{"source": a, "target": b} for a, b in zip(NODES, NODES[1:], strict=False)],
}
#: Runs written per transaction (and per COPY batch).
RUNS_PER_CHUNK = 50
#: Of every filler run: visits with logs, logs on each, tokens and audit rows.
FILLER_LOGGED_VISITS = 3
FILLER_LOGS_PER_VISIT = 5
FILLER_TOKENS = 5
FILLER_READS = 10
#: The probe run's visit with the big logs (sortOrder) and its size.
PROBE_LOGGED_SORT_ORDER = 100
PROBE_LOG_BYTES = 50 * 1024
#: A dotted field present in every visit's output data.
DOTTED_FIELD = "result.items.3.name"


@dataclass(frozen=True)
class Probe:
    """The RUNNING run the context benchmarks query (see the module docstring).

    ``visit_uuid`` is the RUNNING last visit (issue its token); ``output_node``
    a predecessor node to read with ``output`` (``DOTTED_FIELD`` reaches into
    its data); ``meta_visit_uuid`` the predecessor holding ``PROBE_LOG_BYTES``
    of logs.
    """

    run_id: str
    visit_uuid: str
    output_node: str
    field: str
    meta_visit_uuid: str
    visits: int


def _output(node_id: str, seq: int) -> dict:
    items = [{"name": f"{node_id}-item-{i}", "score": (seq * 7 + i) % 100} for i in range(6)]
    return {
        "status": 200,
        "message": "ok",
        "data": {"result": {"items": items, "count": len(items)}, "summary": f"Visit {seq} of {node_id} finished."},
    }


class _Ids:
    """Primary keys handed out here, starting after the highest stored one."""

    def __init__(self, *model_classes):
        self.next = {m: (m.objects.aggregate(m=Max("pk"))["m"] or 0) + 1 for m in model_classes}

    def take(self, model) -> int:
        value = self.next[model]
        self.next[model] = value + 1
        return value


class _Writer:
    """Buffers rows per model and writes them with COPY (PostgreSQL) or bulk_create."""

    def __init__(self):
        self.rows: dict[type[models.Model], list[dict]] = {}
        self.copy = connection.vendor == "postgresql"

    def add(self, model, **values):
        self.rows.setdefault(model, []).append(values)

    def flush(self):
        # Parents before children: the foreign keys are checked at once.
        for model in (WorkflowRun, Visit, VisitLog, ContextToken, ContextRead):
            rows = self.rows.pop(model, [])
            if rows:
                (self._copy if self.copy else self._bulk)(model, rows)

    @staticmethod
    def _bulk(model, rows):
        model.objects.bulk_create([model(**row) for row in rows], batch_size=500)

    @staticmethod
    def _copy(model, rows):
        fields = model._meta.concrete_fields
        defaults = {f.attname: f.get_default() for f in fields}
        json_fields = {f.attname for f in fields if isinstance(f, models.JSONField)}
        columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        with connection.cursor() as cursor:
            with cursor.cursor.copy(f"COPY {model._meta.db_table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    values = []
                    for f in fields:
                        value = row.get(f.attname, defaults[f.attname])
                        if f.attname in json_fields and value is not None:
                            value = json.dumps(value, separators=(",", ":"))
                        values.append(value)
                    copy.write_row(values)


def _run_rows(writer: _Writer, ids: _Ids, rng: random.Random, *, visits: int, probe: bool) -> Probe | None:
    now = timezone.now()
    run_pk = ids.take(WorkflowRun)
    run_id = f"{'probe' if probe else 'load'}-{uuid.uuid4().hex[:12]}"
    started = now - timedelta(minutes=visits)
    writer.add(
        WorkflowRun,
        id=run_pk,
        run_id=run_id,
        workflow_id="bench",
        workflow_name="Benchmark load",
        mode=RunMode.AGENTIC,
        status=RunStatus.RUNNING if probe else RunStatus.SUCCESS,
        graph=GRAPH,
        created_by_id=None,
        started_at=started,
        finished_at=None if probe else now,
        visit_counter=visits,
    )
    iter_seqs: dict[str, int] = {}
    previous = None
    # The probe's logged visit must be a predecessor: before the last (RUNNING) one.
    probe_logged = max(1, min(PROBE_LOGGED_SORT_ORDER, visits - 1))
    logged = {probe_logged} if probe else set(rng.sample(range(1, visits + 1), min(FILLER_LOGGED_VISITS, visits)))
    uuids, pks, node_of = [], [], {}
    canvas = paths.Canvas(GRAPH)
    ancestry, previous_node = b"", None
    for order in range(1, visits + 1):
        node_id = NODES[0] if order == 1 else rng.choice(NODES)
        iter_seqs[node_id] = iter_seqs.get(node_id, 0) + 1
        visit_uuid = str(uuid.uuid4())
        pk = ids.take(Visit)
        running = probe and order == visits
        at = started + timedelta(seconds=order * 30)
        writer.add(
            Visit,
            id=pk,
            visit_uuid=visit_uuid,
            run_id=run_pk,
            node_id=node_id,
            node_type="agent",
            node_name=f"Step {node_id}",
            iter_seq=iter_seqs[node_id],
            sort_order=order,
            parent_uuids=[previous] if previous else [],
            hop_kinds=[paths.hop_kind(parent_node=previous_node, child_node=node_id, canvas=canvas)]
            if previous
            else [],
            ancestry=ancestry,
            status=VisitStatus.RUNNING if running else VisitStatus.SUCCESS,
            input={"prompt": f"Work on {node_id}", "order": order},
            output=None if running else _output(node_id, order),
            final_text=None if running else f"{node_id} done.",
            registration={"nodeId": node_id},
            log_counter=0,
            query_count=0,
            started_at=at,
            ended_at=None if running else at + timedelta(seconds=20),
        )
        if order in logged:
            row = writer.rows[Visit][-1]
            row["log_counter"], row["meta_content"] = _logs(writer, ids, pk, at, big=probe)
            row["log_count"] = row["log_counter"]
        uuids.append(visit_uuid)
        pks.append(pk)
        node_of[visit_uuid] = node_id
        previous, previous_node = visit_uuid, node_id
        ancestry = paths.ancestry_of([(order, ancestry)])
    if not probe:
        for _ in range(FILLER_TOKENS):
            visit_pk = rng.choice(pks)
            writer.add(
                ContextToken,
                id=ids.take(ContextToken),
                token_hash=uuid.uuid4().hex + uuid.uuid4().hex,
                run_id=run_pk,
                visit_id=visit_pk,
                issued_at=started,
                expires_at=started + timedelta(seconds=120),
                revoked_at=now,
            )
        for _ in range(FILLER_READS):
            writer.add(
                ContextRead,
                id=ids.take(ContextRead),
                visit_id=rng.choice(pks),
                endpoint="output",
                node_id=rng.choice(NODES),
                status_code=200,
                bytes_returned=400,
                duration_ms=3.0,
                created_at=now,
            )
        return None
    # The output node: the node of the visit just before the last, so its
    # latest visit is a predecessor.
    return Probe(
        run_id=run_id,
        visit_uuid=uuids[-1],
        output_node=node_of[uuids[-2]],
        field=DOTTED_FIELD,
        meta_visit_uuid=uuids[probe_logged - 1],
        visits=visits,
    )


def _logs(writer: _Writer, ids: _Ids, visit_pk: int, at, *, big: bool) -> tuple[int, dict]:
    """Small logs, or about ``PROBE_LOG_BYTES`` of thinking, tool calls and todos.
    Returns the last seq and the visit's kept meta content (as ``logs_append`` keeps it)."""
    thought = "Considering the sources and what the next step needs. " * 8  # ≈ 440 bytes
    kinds = [
        (LogType.THINKING, thought, None),
        (LogType.TOOL_CALL, "web_search", {"query": "quarterly revenue by region", "limit": 10}),
        (
            LogType.TOOL_RESULT,
            "web_search",
            {"hits": [{"title": f"Result {i}", "url": f"https://example.org/{i}"} for i in range(4)]},
        ),
        (
            LogType.TODO_UPDATE,
            "",
            [{"text": "collect", "status": "done"}, {"text": "summarise", "status": "in_progress"}],
        ),
    ]
    count = 0
    size = 0
    seq = 0
    written = []
    while (big and size < PROBE_LOG_BYTES) or (not big and count < FILLER_LOGS_PER_VISIT):
        log_type, message, detail = kinds[seq % len(kinds)]
        seq += 1
        count += 1
        size += len(message) + len(json.dumps(detail))
        writer.add(
            VisitLog,
            id=ids.take(VisitLog),
            visit_id=visit_pk,
            seq=seq,
            type=log_type,
            timestamp=at + timedelta(milliseconds=seq),
            message=message,
            detail=detail,
        )
        written.append({"type": log_type, "message": message, "detail": detail})
    return seq, queries.meta_kept(written)


def load_data_write(*, runs: int, visits: int = 200, probe: bool = False, seed: int = 7, progress=None) -> Probe | None:
    """Write ``runs`` finished filler runs of ``visits`` visits, then (``probe``)
    the probe run. Returns the :class:`Probe` or None. ``progress(done, total)``
    is called after each chunk. Raises ``CommandError`` for counts out of range.
    """
    if runs < 0 or not (2 if probe else 1) <= visits <= 100_000:
        raise CommandError("--runs must be ≥ 0 and --visits between 1 (2 with --probe) and 100000.")
    rng = random.Random(seed)
    done = 0
    found = None
    while done < runs or (probe and found is None):
        chunk = min(RUNS_PER_CHUNK, runs - done)
        with transaction.atomic():
            ids = _Ids(WorkflowRun, Visit, VisitLog, ContextToken, ContextRead)
            writer = _Writer()
            for _ in range(chunk):
                _run_rows(writer, ids, rng, visits=visits, probe=False)
            if done + chunk >= runs and probe:
                found = _run_rows(writer, ids, rng, visits=visits, probe=True)
            writer.flush()
        done += chunk
        if progress:
            progress(done, runs)
    _sequences_reset()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return found


def _sequences_reset():
    sql = connection.ops.sequence_reset_sql(no_style(), [WorkflowRun, Visit, VisitLog, ContextToken, ContextRead])
    with connection.cursor() as cursor:
        for statement in sql:
            cursor.execute(statement)


class Command(BaseCommand):
    help = "Bulk-write benchmark runs (default 10,000 × 200 visits); --probe adds the run the context benchmarks query."

    def add_arguments(self, parser):
        parser.add_argument("--runs", type=int, default=10_000, help="filler runs to write (default 10000)")
        parser.add_argument("--visits", type=int, default=200, help="visits per run (default 200)")
        parser.add_argument("--probe", action="store_true", help="also write the RUNNING probe run; print it as JSON")
        parser.add_argument("--seed", type=int, default=7)

    def handle(self, *args, runs, visits, probe, seed, **options):
        started = time.perf_counter()

        def progress(done, total):
            if total and (done % 1000 == 0 or done == total):
                rate = done * visits / max(time.perf_counter() - started, 1e-9)
                print(f"{done}/{total} runs ({rate:,.0f} visits/s)", file=sys.stderr, flush=True)

        found = load_data_write(runs=runs, visits=visits, probe=probe, seed=seed, progress=progress)
        elapsed = time.perf_counter() - started
        self.stdout.write(f"Wrote {runs} runs × {visits} visits in {elapsed:.1f} s ({connection.vendor}).")
        if found is not None:
            self.stdout.write(json.dumps(asdict(found)))
