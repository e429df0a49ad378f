"""The context-query hot path (SPEC §4.5, issue 14): every step of an internal
query, from the token header to the audit row, in this one module.

:func:`context_query` answers ``POST /internal/context/{path,output,meta}``
(and the tool gateway's ``/internal/tools/…``, whose views supply their own
budget and answer) in the SPEC's order of checks:

1. disabled → 503
2. client address outside ``ALLOWED_CLIENTS`` → 403
3. missing, unknown, expired or revoked ``X-Context-Token`` → 401
4. malformed JSON or invalid UTF-8 → 400 (the body is parsed only now)
5. missing or invalid fields → 422
6. ``runId`` not the token's run (or a foreign ``visitUuid`` on path) → 403
7. budget spent → 429
8. not found or not a predecessor → 404

From step 3 on, every query counts against the visit's budget (taken before
the body is read, so a malformed request costs one too), slides the token's
expiry (at most once a second) and leaves one ``ContextRead`` audit row,
whatever its answer — a server fault included.

What makes it cheap, measured by ``make bench`` (``tests/bench/bench_context.py``):

* Statements are SQL written once below, not built by the ORM per query.
  SQLite: one SELECT of the token with its visit and run; then, in one
  transaction with one commit, the budget UPDATE, one or two SELECTs of the
  target and the audit INSERT (output and path: four statements; meta ALL:
  five). PostgreSQL: one statement reads the token, counts the query against
  the budget when the token is live and reads the target row the body names
  (:data:`_TOKEN_TAKE_SQL_PG`); then the audit INSERT — two statements that
  commit on their own, without waiting for the disk
  (:data:`project.transactions.NO_DISK_WAIT_SQL`), on a server-side binding
  cursor whose statements the server prepares once per connection
  (:func:`_cursor`). A crash of the database server can lose the last
  fraction of a second of counts and audit rows; concurrent queries never
  get past the budget.
* SQLite's WAL checkpoints run in a thread beside the requests
  (:mod:`project.wal`), so no query pays one.
* Scope is one bit test: a visit stores its ancestor set when it is
  registered (``Visit.ancestry``, :func:`paths.ancestry_of`), so no query
  reads the run's visits to find it; a path query reads the ancestors only,
  with their stored hop kinds, never the canvas.
* Meta reads the thinking, tool calls and todo list kept on the visit row as
  logs arrive (``Visit.meta_content``, :func:`meta_kept`, up to
  :data:`MAX_KEPT_ENTRIES`); ``kind`` ALL and larger visits read the logs.
  Path graphs and cut meta answers are kept per process, encoded as the
  JSON the endpoint sends (a visit's ancestors never change and its logs
  only grow).
* A body that passes a strict check of its types and bounds
  (:func:`fields_fast`) skips the DRF serializer; anything else goes to the
  serializer, which then decides and words the 422.
* The answer is written as envelope bytes directly (no DRF rendering).

Errors raised inside: ``Unauthorized`` (401), ``Forbidden`` (403),
``NotFound`` (404), ``LimitReached`` (429), ``Unavailable`` (503) and DRF's
parse and validation errors — all turned into the envelope here.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import UTC, datetime, timedelta
from typing import Protocol

import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from contextquery import paths, tokens
from contextquery.client.wire import MAX_MAX_BYTES, META_KINDS, MIN_MAX_BYTES
from contextquery.models import LogType
from contextquery.truncation import fit_json
from project.api import EncodedJSON, envelope_bytes, error_parts, json_bytes, parse_json_bytes
from project.errors import Forbidden, Invalid, LimitReached, NotFound, Unauthorized, Unavailable
from project.networks import address_allowed
from project.transactions import NO_DISK_WAIT_SQL

KIND_THINKING, KIND_TOOL_CALLS, KIND_TODO, KIND_ALL = META_KINDS

#: The log types each meta kind reads.
_KIND_LOG_TYPES = {
    KIND_THINKING: (LogType.THINKING,),
    KIND_TOOL_CALLS: (LogType.TOOL_CALL, LogType.TOOL_RESULT),
    KIND_TODO: (LogType.TODO_UPDATE,),
}

# --------------------------------------------------------------------------- SQL

#: The token with its visit and run, by digest (``%(hash)s``); the database
#: computes the flags: not revoked, not expired at ``%(now)s``, slide due
#: (expiring before ``%(slide)s``).
_TOKEN_SQL = """
SELECT t."id", t."visit_id", t."run_id",
       t."revoked_at" IS NULL AS unrevoked, t."expires_at" > %(now)s AS unexpired,
       t."expires_at" < %(slide)s AS slide_due, t."issued_at", t."expires_at",
       v."status" AS visit_status, v."visit_uuid", v."node_id", v."sort_order", v."parent_uuids", v."hop_kinds",
       v."ancestry", r."status" AS run_status, r."run_id" AS run_text
FROM "contextquery_contexttoken" t
JOIN "contextquery_visit" v ON v."id" = t."visit_id"
JOIN "contextquery_workflowrun" r ON r."id" = t."run_id"
WHERE t."token_hash" = %(hash)s
"""

#: PostgreSQL: the token as :data:`_TOKEN_SQL` reads it, the query counted
#: against the budget when the token is live, and (``{target_join}``) the row
#: the answer needs — one statement and so one commit, however many the
#: query's answer then reads. The UPDATE runs only for a live token of a
#: running visit and run; concurrent UPDATEs of the row are serialised by the
#: database, which re-checks ``query_count < limit`` on the row it waits for,
#: so the budget is exact under races.
_TOKEN_TAKE_SQL_PG = (
    "WITH t AS ("
    + _TOKEN_SQL
    + """), taken AS (
  UPDATE "contextquery_visit" b SET "query_count" = b."query_count" + 1
  FROM t
  WHERE b."id" = t."visit_id" AND t.unrevoked AND t.unexpired
    AND t.visit_status = 'RUNNING' AND t.run_status = 'RUNNING' AND b."query_count" < %(limit)s
  RETURNING b."id"
)
SELECT t.*, EXISTS (SELECT 1 FROM taken){target_columns}, {no_disk_wait}
FROM t{target_join}
"""
)

#: The columns of a target visit every answer reads; ``{column}`` is the one it needs.
_TARGET_COLUMNS = '"id", "visit_uuid", "iter_seq", "sort_order", "node_id", "status", {column}, "log_count"'

#: :data:`_TOKEN_TAKE_SQL_PG`'s target: :data:`_TARGET_COLUMNS` of the row its
#: join reads (the needed column as ``wanted``), by node as :data:`_LATEST_SQL`
#: or by uuid as :data:`_BY_UUID_SQL`, within the token's run.
_TARGET_COLUMNS_PG = ", " + ", ".join(
    "g." + name.strip() for name in _TARGET_COLUMNS.format(column="wanted").split(",")
)
_TARGET_OF_NODE_PG = (
    "\nLEFT JOIN LATERAL (SELECT "
    + _TARGET_COLUMNS
    + """ FROM "contextquery_visit"
  WHERE "run_id" = t."run_id" AND "node_id" = %(node)s AND "sort_order" < t."sort_order"{and_iter_seq}
  ORDER BY "iter_seq" DESC LIMIT 1
) g ON TRUE"""
)
_TARGET_OF_UUID_PG = (
    "\nLEFT JOIN LATERAL (SELECT "
    + _TARGET_COLUMNS
    + """ FROM "contextquery_visit" WHERE "visit_uuid" = %(uuid)s AND "run_id" = t."run_id"
) g ON TRUE"""
)

#: One query against the budget: the database serialises concurrent UPDATEs
#: of the row, so no race lets one query past the limit.
_BUDGET_SQL = """
UPDATE "contextquery_visit" SET "query_count" = "query_count" + 1
WHERE "id" = %s AND "query_count" < %s
"""

#: The newest visit of a node registered before the reader (one row through
#: the (run, node_id, iter_seq) index), with the column the answer needs.
_LATEST_SQL = (
    "SELECT "
    + _TARGET_COLUMNS
    + """ FROM "contextquery_visit"
WHERE "run_id" = %s AND "node_id" = %s AND "sort_order" < %s{and_iter_seq}
ORDER BY "iter_seq" DESC LIMIT 1"""
)

#: Every visit of a node registered before the reader, newest first, light columns.
_CANDIDATES_SQL = (
    "SELECT "
    + _TARGET_COLUMNS.format(column="NULL")
    + """ FROM "contextquery_visit"
WHERE "run_id" = %s AND "node_id" = %s AND "sort_order" < %s
ORDER BY "iter_seq" DESC"""
)

_BY_ID_SQL = 'SELECT {column} FROM "contextquery_visit" WHERE "id" = %s'

_BY_UUID_SQL = "SELECT " + _TARGET_COLUMNS + ', "run_id" FROM "contextquery_visit" WHERE "visit_uuid" = %s'

#: The ancestors' links for a path graph: every visit registered before the reader (filtered by its bits).
_ANCESTORS_SQL = """
SELECT "visit_uuid", "node_id", "sort_order", "parent_uuids", "hop_kinds"
FROM "contextquery_visit" WHERE "run_id" = %s AND "sort_order" < %s
"""

_LOGS_SQL = """
SELECT "type", "timestamp", "message", "detail" FROM "contextquery_visitlog"
WHERE "visit_id" = %s{and_types} ORDER BY "seq"
"""

_AUDIT_SQL = """
INSERT INTO "contextquery_contextread"
("visit_id", "endpoint", "node_id", "target_visit_uuid", "field", "kind", "iter_seq",
 "status_code", "bytes_returned", "duration_ms", "created_at")
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""
#: PostgreSQL, outside a transaction: the audit row committed without waiting for the disk.
_AUDIT_SQL_PG = _AUDIT_SQL.rstrip() + f" RETURNING {NO_DISK_WAIT_SQL}\n"


def _cursor():
    """A cursor for the statements above. On PostgreSQL a server-side binding
    cursor whose statements the server prepares once per connection (Django's
    own cursors bind on the client, so the server parses and plans every
    statement again); wrapped as Django wraps its own, so ``execute_wrapper``
    sees these statements too. While queries are logged (``DEBUG``, a test's
    ``CaptureQueriesContext``) Django's own cursor, whose log can show the
    SQL of a prepared statement."""
    if connection.vendor != "postgresql" or connection.queries_logged:
        return connection.cursor()
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Only server-side binding cursors prepare; Django's (client-side) never do.
        raw.prepare_threshold = PREPARE_THRESHOLD
    return connection.make_cursor(psycopg.Cursor(raw))


#: A hot-path statement is prepared by the server from its second run on a connection.
PREPARE_THRESHOLD = 1


def _rows(sql: str, params) -> list[tuple]:
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _write(sql: str, params) -> int:
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _aware(value) -> datetime:
    """A timestamp read by a raw cursor as an aware UTC datetime (SQLite hands
    back naive UTC, as text or as a datetime; PostgreSQL an aware datetime)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _db_datetime(moment: datetime):
    """``moment`` as the backend stores it (SQLite: naive UTC text; PostgreSQL: as is)."""
    return connection.ops.adapt_datetimefield_value(moment)


def _db_uuid(text: str):
    """A uuid parameter as the backend stores it (SQLite: 32 hex characters)."""
    value = uuid.UUID(text)
    return value if connection.features.has_native_uuid_field else value.hex


def _uuid_text(value) -> str:
    """A stored visit uuid as hyphenated text (SQLite hands back 32 hex characters)."""
    if isinstance(value, str) and len(value) == 32:
        return f"{value[:8]}-{value[8:12]}-{value[12:16]}-{value[16:20]}-{value[20:]}"
    return str(value)


def _json(value):
    """A JSON column as read by a raw cursor: text on both backends (Django decodes in the ORM only)."""
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _iso_db(value) -> str | None:
    """A stored timestamp as ISO 8601 with ``Z`` (SQLite's raw cursor hands back
    naive UTC, as text or as a datetime; PostgreSQL an aware datetime)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.replace(" ", "T") + "Z"
    if value.tzinfo is None:
        return value.isoformat() + "Z"
    return value.isoformat().replace("+00:00", "Z")


# --------------------------------------------------------------------------- the reader


@dataclass(frozen=True, slots=True)
class Reader:
    """The visit a live token reads for (what :func:`reader_authenticate` loads).

    ``visit_id``/``run_pk`` are primary keys; ``run_id`` and ``visit_uuid`` the
    wire ids; ``ancestry`` the visit's ancestor bits as an int (bit n ⇔
    sortOrder n); ``slide_due`` whether this query must slide the visit's
    tokens (:func:`tokens.token_touch_due`'s rule, computed in SQL).
    """

    token_id: int
    visit_id: int
    run_pk: int
    run_id: str
    visit_uuid: str
    node_id: str
    sort_order: int
    parent_uuids: str = dataclass_field(repr=False)  # JSON text, decoded by path only
    hop_kinds: str = dataclass_field(repr=False)
    ancestry: int = 0
    slide_due: bool = False
    #: True/False: the query was counted (or the budget was spent) by the
    #: token's own statement (PostgreSQL); None: not counted yet.
    granted: bool | None = None
    #: ``(hint, row)``: the target the token's statement read for ``hint``
    #: (row None when there is none), or None when it read none.
    prefetched: tuple | None = dataclass_field(default=None, repr=False)

    def may_read(self, sort_order: int) -> bool:
        """Whether the run's visit with ``sort_order`` is an ancestor (SPEC §4.5 scope)."""
        return bool(self.ancestry >> sort_order & 1)


@dataclass(frozen=True, slots=True)
class TargetHint:
    """The row an answer will read, known from the body before the token is
    checked: the latest visit of ``node_id`` among the predecessors (or its
    visit ``iter_seq``), or the visit ``visit_uuid``; ``column`` is the quoted
    column the answer needs (a constant of this module, never request text)."""

    column: str
    node_id: str | None = None
    iter_seq: int | None = None
    visit_uuid: str | None = None


def reader_authenticate(
    *, raw: str | None, now: datetime | None = None, spend: bool = False, hint: TargetHint | None = None
) -> Reader:
    """The :class:`Reader` of the live token whose text is ``raw`` (one statement).

    ``spend`` (PostgreSQL only): the same statement counts the query against
    the visit's ``MAX_QUERIES_PER_VISIT`` when the token is live
    (``Reader.granted``) and reads the target row of ``hint``
    (``Reader.prefetched``), so a query commits once and reads once before
    its answer. Elsewhere, or without ``spend``, one SELECT of the token.

    Raises ``Unauthorized`` (401) when ``raw`` is missing, not 48 lowercase hex
    characters, unknown, revoked, expired, or its visit or run has ended. The
    messages never repeat the token; nothing is counted then.
    """
    if raw is None or raw == "":
        raise Unauthorized(_("The X-Context-Token header is missing."))
    raw = raw.strip()
    if not tokens.token_text_valid(raw):
        raise Unauthorized(_("The X-Context-Token header is not a context token (48 lowercase hex characters)."))
    now = now or timezone.now()
    slide_before = now + timedelta(seconds=tokens.config()["TOKEN_TTL_SECONDS"]) - tokens.TOUCH_GRANULARITY
    params = {"now": _db_datetime(now), "slide": _db_datetime(slide_before), "hash": tokens.token_hash(raw)}
    found = _token_take_rows(params, hint) if spend else _rows(_TOKEN_SQL, params)
    if not found:
        raise Unauthorized(_("The context token is unknown."))
    granted = prefetched = None
    if spend:
        granted = bool(found[0][17])
        prefetched = (hint, found[0][18:] if found[0][18] is not None else None) if hint is not None else None
    (
        token_id,
        visit_id,
        run_pk,
        unrevoked,
        unexpired,
        short_of_ttl,
        issued_at,
        expires_at,
        visit_status,
        visit_uuid,
        node_id,
        sort_order,
        parent_uuids,
        hop_kinds,
        ancestry,
        run_status,
        run_id,
    ) = found[0][:17]
    if not unrevoked:
        raise Unauthorized(_("The context token has been revoked."))
    if not unexpired:
        raise Unauthorized(_("The context token has expired."))
    # Revocation at completion and at finish is the rule; this guards a row
    # whose revocation has not happened yet.
    if visit_status != "RUNNING" or run_status != "RUNNING":
        raise Unauthorized(_("The context token's visit has ended."))
    # Slide when the expiry is over a second short of TTL from now — unless the
    # token already sits at its lifetime's cap, where no slide can move it.
    slide_due = bool(short_of_ttl)
    if slide_due:
        cap = _aware(issued_at) + timedelta(seconds=tokens.config()["TOKEN_MAX_LIFETIME_SECONDS"])
        slide_due = _aware(expires_at) < cap
    return Reader(
        token_id=token_id,
        visit_id=visit_id,
        run_pk=run_pk,
        run_id=run_id,
        visit_uuid=_uuid_text(visit_uuid),
        node_id=node_id,
        sort_order=sort_order,
        parent_uuids=parent_uuids or "[]",
        hop_kinds=hop_kinds or "[]",
        ancestry=int.from_bytes(bytes(ancestry or b""), "little"),
        slide_due=slide_due,
        granted=granted,
        prefetched=prefetched,
    )


def _token_take_rows(params: dict, hint: TargetHint | None) -> list[tuple]:
    """:data:`_TOKEN_TAKE_SQL_PG` run with :data:`_TOKEN_SQL`'s ``params``: the
    17 token columns, whether the budget granted the query, then the 8 target
    columns of ``hint`` (none without a hint)."""
    params = {**params, "limit": tokens.config()["MAX_QUERIES_PER_VISIT"]}
    columns = join = ""
    if hint is not None:
        columns = _TARGET_COLUMNS_PG
        if hint.visit_uuid is not None:
            join = _TARGET_OF_UUID_PG.format(column=f"{hint.column} AS wanted")
            params["uuid"] = uuid.UUID(hint.visit_uuid)
        else:
            join = _TARGET_OF_NODE_PG.format(
                column=f"{hint.column} AS wanted",
                and_iter_seq=' AND "iter_seq" = %(iter)s' if hint.iter_seq is not None else "",
            )
            params.update(node=hint.node_id, iter=hint.iter_seq)
    sql = _TOKEN_TAKE_SQL_PG.format(target_columns=columns, target_join=join, no_disk_wait=NO_DISK_WAIT_SQL)
    return _rows(sql, params)


# --------------------------------------------------------------------------- budget


def query_budget_take(*, visit_id: int) -> bool:
    """Count one query against the visit's ``MAX_QUERIES_PER_VISIT`` (one
    conditional UPDATE). False when the budget was already spent (nothing is
    counted then)."""
    return _write(_BUDGET_SQL, (visit_id, tokens.config()["MAX_QUERIES_PER_VISIT"])) == 1


def query_budget_refuse() -> LimitReached:
    """The 429 for a spent budget (no Retry-After: waiting does not help)."""
    limit = tokens.config()["MAX_QUERIES_PER_VISIT"]
    return LimitReached(
        _("This visit has used its %(limit)d context queries; no more are answered.") % {"limit": limit}
    )


# --------------------------------------------------------------------------- one query


class Endpoint(Protocol):
    """What :func:`context_query` needs of an internal endpoint (its view class).

    ``endpoint``: the name the audit row keeps; ``atomic``: whether the
    budget, the answer and the audit share one transaction (False where the
    answer calls out, as a business tool call does, so no lock is held);
    ``spends_query_budget``: whether :meth:`budget_take` is the visit's
    context-query budget (then PostgreSQL counts it in the token's statement).
    """

    endpoint: str
    atomic: bool
    spends_query_budget: bool

    def target_hint(self, data: dict) -> TargetHint | None:
        """The row :meth:`answer` will read for the fields ``data``, if it is one row."""

    def fields(self, body: dict) -> dict:
        """The validated fields of ``body`` (raises DRF's ``ValidationError``)."""

    def check_ownership(self, reader: Reader, data: dict) -> None:
        """Step 6 beyond runId (raises ``Forbidden``)."""

    def budget_take(self, reader: Reader) -> bool:
        """Count this query; False when the budget is spent."""

    def budget_refuse(self) -> Exception:
        """The 429 raised at step 7."""

    def answer(self, reader: Reader, data: dict) -> dict:
        """The ``data`` of the 200 envelope (raises domain errors)."""


@dataclass(frozen=True)
class Answer:
    """An internal endpoint's answer: HTTP ``status``, envelope ``body`` bytes and extra ``headers``."""

    status: int
    body: bytes
    headers: dict[str, str]


def _error_answer(exc) -> Answer | None:
    parts = error_parts(exc)
    if parts is None:
        return None
    status, message, data, headers = parts
    return Answer(status, envelope_bytes(status, message, data), headers)


def context_query(*, endpoint: Endpoint, raw_token: str | None, client: str | None, body: bytes) -> Answer:
    """Answer one internal query in the order of checks of SPEC §4.5 (see the module docstring).

    ``raw_token`` is the ``X-Context-Token`` header, ``client`` the client
    address (``REMOTE_ADDR``), ``body`` the raw request body. Returns the
    :class:`Answer`; an error the request caused is an answer too. A server
    fault is re-raised after its audit row (status 500) is written.
    """
    started = time.perf_counter()
    try:
        if not tokens.context_query_enabled():
            raise Unavailable(_("Context query is disabled on this server."))
        if not address_allowed(client, settings.HERMES_CONTEXT_QUERY["ALLOWED_NETWORKS"]):
            raise Forbidden(_("Context queries are answered only to clients in HERMES_CONTEXT_QUERY_ALLOWED_CLIENTS."))
        # PostgreSQL: the token's statement also counts the query and reads
        # the answer's row, so a body that is certainly valid is read first
        # (its faults are still answered in their place below).
        spend = endpoint.spends_query_budget and connection.vendor == "postgresql"
        early = _fields_early(endpoint.endpoint, body) if spend and raw_token else None
        hint = endpoint.target_hint(early[1]) if early is not None else None
        reader = reader_authenticate(raw=raw_token, spend=spend, hint=hint)
    except Exception as exc:  # before authentication: nothing to count or audit
        answer = _error_answer(exc)
        if answer is None:
            raise
        return answer
    audited: dict = {}
    # Counted for good: by the token's statement, already committed.
    kept = reader.granted is not None
    counted = kept
    try:
        with transaction.atomic() if endpoint.atomic and not kept else nullcontext():
            granted = reader.granted if kept else endpoint.budget_take(reader)
            counted = True
            if reader.slide_due:
                tokens.tokens_touch(visit=reader.visit_id)
            try:
                if early is not None:
                    audited, data = early
                else:
                    audited = parse_json_bytes(body) if body.strip() else {}
                    if not isinstance(audited, dict):
                        raise Invalid(
                            _("The request body must be a JSON object."),
                            errors={"nonFieldErrors": [_("Must be a JSON object.")]},
                        )
                    data = endpoint.fields(audited)
                if data["runId"] != reader.run_id:
                    raise Forbidden(_("runId is not the run of this context token."))
                endpoint.check_ownership(reader, data)
                if not granted:
                    raise endpoint.budget_refuse()
                answer = Answer(200, envelope_bytes(200, "success", endpoint.answer(reader, data)), {})
            except Exception as exc:
                answer = _error_answer(exc)
                if answer is None:
                    raise
            _audit(reader, endpoint.endpoint, audited, answer.status, len(answer.body), started, no_disk_wait=kept)
    except Exception:
        # A server fault still leaves its audit row and counts (SPEC §4.5); the
        # transaction that held them was rolled back.
        with transaction.atomic():
            if not kept and (endpoint.atomic or not counted):
                endpoint.budget_take(reader)
            _audit(reader, endpoint.endpoint, audited, 500, 0, started)
        raise
    return answer


#: A body read before the token is checked is at most this long (a context
#: query's body is a few hundred bytes), so a caller without a token never
#: makes the server parse a large one.
EARLY_BODY_MAX_BYTES = 4096


def _fields_early(endpoint: str, body: bytes) -> tuple[dict, dict] | None:
    """``(body object, fields)`` when ``body`` is short and certainly valid for
    ``endpoint`` (:func:`fields_fast`), else None (then it is parsed and
    judged in its place in the order of checks)."""
    if endpoint not in BODY_KEYS or len(body) > EARLY_BODY_MAX_BYTES:
        return None
    try:
        parsed = parse_json_bytes(body) if body.strip() else {}
    except Exception:
        return None
    data = fields_fast(endpoint, parsed) if isinstance(parsed, dict) else None
    return (parsed, data) if data is not None else None


def _trimmed(value, length: int) -> str:
    return value[:length] if isinstance(value, str) else ""


def _audit(
    reader: Reader, endpoint: str, body: dict, status: int, size: int, started: float, *, no_disk_wait: bool = False
) -> None:
    """The audit row of one query (SPEC §4.5): what was asked, the status, the
    bytes and the time. ``no_disk_wait``: the row is written on its own (no
    transaction around it) and, on PostgreSQL, its commit does not wait for
    the disk (as the budget count it goes with did not)."""
    body = body if isinstance(body, dict) else {}
    iter_seq = body.get("iterSeq")
    if isinstance(iter_seq, bool) or not isinstance(iter_seq, int) or abs(iter_seq) >= 2**31:
        iter_seq = None
    sql = _AUDIT_SQL_PG if no_disk_wait and connection.vendor == "postgresql" else _AUDIT_SQL
    _write(
        sql,
        (
            reader.visit_id,
            endpoint,
            _trimmed(body.get("nodeId"), 200),
            _trimmed(body.get("visitUuid"), 64),
            _trimmed(body.get("field"), 500),
            _trimmed(body.get("kind"), 16),
            iter_seq,
            status,
            size,
            round((time.perf_counter() - started) * 1000, 3),
            _db_datetime(timezone.now()),
        ),
    )


# --------------------------------------------------------------------------- request fields

#: A dotted ``field`` has at most this many parts (more is a 422 at the door).
MAX_FIELD_PARTS = 64
MAX_ITER_SEQ = 2**31 - 1

#: The keys each context endpoint's body may carry (the serializers of
#: ``contextquery.api.internal_serializers`` declare the same; a test holds them equal).
BODY_KEYS = {
    "path": frozenset({"runId", "visitUuid"}),
    "output": frozenset({"runId", "nodeId", "field", "iterSeq", "maxBytes"}),
    "meta": frozenset({"runId", "visitUuid", "nodeId", "kind", "iterSeq", "maxBytes"}),
}


def _text_ok(value, limit: int) -> bool:
    return type(value) is str and 0 < len(value) <= limit and not value[0].isspace() and not value[-1].isspace()


def _uuid_ok(value) -> str | None:
    if type(value) is not str or len(value) != 36:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def fields_fast(endpoint: str, body: dict) -> dict | None:
    """The validated fields of a context query body when they are certainly
    valid, else None (then the endpoint's serializer decides and words the 422).

    Strict and conservative: only the endpoint's keys (:data:`BODY_KEYS`),
    exact JSON types, untrimmed-free strings within their lengths, integers in
    range. Returns every key of the endpoint, absent ones as None, with the
    serializer's defaults (``maxBytes`` = ``MAX_BYTES``, ``kind`` = ALL upper-cased).
    """
    keys = BODY_KEYS[endpoint]
    if not keys.issuperset(body):
        return None
    data = {key: body.get(key) for key in keys}
    if not _text_ok(data["runId"], 64):
        return None
    if "visitUuid" in keys and data["visitUuid"] is not None:
        data["visitUuid"] = _uuid_ok(data["visitUuid"])
        if data["visitUuid"] is None:
            return None
    if endpoint == "path":
        return data
    node_id = data["nodeId"]
    if node_id is not None and not _text_ok(node_id, 200):
        return None
    iter_seq = data["iterSeq"]
    if iter_seq is not None and (type(iter_seq) is not int or not 1 <= iter_seq <= MAX_ITER_SEQ):
        return None
    max_bytes = data["maxBytes"]
    if max_bytes is None:
        data["maxBytes"] = tokens.config()["MAX_BYTES"]
    elif type(max_bytes) is not int or not MIN_MAX_BYTES <= max_bytes <= MAX_MAX_BYTES:
        return None
    if endpoint == "output":
        field = data["field"]
        if node_id is None or (field is not None and (not _text_ok(field, 500) or field.count(".") >= MAX_FIELD_PARTS)):
            return None
        return data
    kind = data["kind"]
    if kind is None:
        data["kind"] = KIND_ALL
    elif type(kind) is not str or kind.upper() not in META_KINDS:
        return None
    else:
        data["kind"] = kind.upper()
    if node_id is None and data["visitUuid"] is None:
        return None
    return data


# --------------------------------------------------------------------------- scope


def _not_a_predecessor(what: str) -> NotFound:
    return NotFound(_("%(what)s is not a predecessor of the current visit.") % {"what": what})


@dataclass(frozen=True)
class Target:
    """The predecessor visit a query reads: ``pk``, ``visit_uuid`` text,
    ``iter_seq``, ``node_id``, ``status``, the requested ``column`` value and
    ``log_count`` (its logs only grow, so the count versions them)."""

    pk: int
    visit_uuid: str
    iter_seq: int
    node_id: str
    status: str
    column: object
    log_count: int


#: What :func:`_prefetched` answers when the token's statement read no target for the hint.
_NOT_READ = object()


def _prefetched(reader: Reader, hint: TargetHint):
    """The row the token's statement read for ``hint`` (None: there is none),
    or :data:`_NOT_READ` when it read none for it (then the caller reads it)."""
    if reader.prefetched is None or reader.prefetched[0] != hint:
        return _NOT_READ
    return reader.prefetched[1]


def output_hint(*, node_id: str, iter_seq: int | None) -> TargetHint:
    """The row :func:`output_query` reads."""
    return TargetHint('"output"', node_id=node_id, iter_seq=iter_seq)


def meta_hint(*, node_id: str | None, visit_uuid: str | None, kind: str, iter_seq: int | None) -> TargetHint:
    """The row :func:`meta_query` reads: ``meta_content`` except for ALL, which reads the logs."""
    column = "NULL" if kind == KIND_ALL else '"meta_content"'
    if visit_uuid is not None:
        return TargetHint(column, visit_uuid=str(visit_uuid))
    return TargetHint(column, node_id=node_id, iter_seq=iter_seq)


def _target_of_node(reader: Reader, hint: TargetHint) -> Target:
    """The visit of ``hint.node_id`` the reader may read — the given iterSeq,
    or the latest among its predecessors — with ``hint.column`` read. Raises ``NotFound``.

    Usually one statement: the node's newest visit before the reader is an
    ancestor (always, in a chain). When it is not (another branch), the
    node's other visits are scanned by their bits, then the column read by id.
    Everything outside the scope gets the same answer — a node never visited,
    visited only later or on another branch, an iterSeq it never reached — so a
    token learns nothing about visits it may not read (issue 12).
    """
    node_id, iter_seq, column = hint.node_id, hint.iter_seq, hint.column
    params = [reader.run_pk, node_id, reader.sort_order]
    if iter_seq is not None:
        params.append(iter_seq)
    row = _prefetched(reader, hint)
    if row is _NOT_READ:
        sql = _LATEST_SQL.format(column=column, and_iter_seq=' AND "iter_seq" = %s' if iter_seq is not None else "")
        row = next(iter(_rows(sql, params)), None) if reader.ancestry else None
    if row is not None and not reader.may_read(row[3]) and iter_seq is None:
        row = next((r for r in _rows(_CANDIDATES_SQL, params) if reader.may_read(r[3])), None)
        if row is not None:
            row = (*row[:6], _rows(_BY_ID_SQL.format(column=column), (row[0],))[0][0], row[7])
    if row is None or not reader.may_read(row[3]):
        label = (
            _("Node '%(node)s'") % {"node": node_id}
            if iter_seq is None
            else _("Visit %(iter)d of node '%(node)s'") % {"iter": iter_seq, "node": node_id}
        )
        raise _not_a_predecessor(label)
    return Target(row[0], _uuid_text(row[1]), row[2], row[4], row[5], row[6], row[7] or 0)


def _target_of_uuid(reader: Reader, hint: TargetHint) -> Target:
    """The visit ``hint.visit_uuid`` when the reader may read it, with ``hint.column``. Raises ``NotFound``."""
    visit_uuid = hint.visit_uuid
    row = _prefetched(reader, hint)  # read within the reader's run
    if row is _NOT_READ:
        found = _rows(_BY_UUID_SQL.format(column=hint.column), (_db_uuid(visit_uuid),)) if reader.ancestry else []
        row = found[0] if found and found[0][8] == reader.run_pk else None
    if row is None or not reader.may_read(row[3]):
        raise _not_a_predecessor(_("Visit %(visit)s") % {"visit": visit_uuid})
    return Target(row[0], _uuid_text(row[1]), row[2], row[4], row[5], row[6], row[7] or 0)


# --------------------------------------------------------------------------- path


def path_query(*, reader: Reader, encoded: bool = False) -> dict | EncodedJSON:
    """The §4.2 predecessor path graph of the reader's visit, in the wire shape
    ``{visitUuids, nodeIds, paths[{sequence, visitUuids, hasBacktrack, truncated}],
    backtrackEdgeKeys, truncated}``; bounded by ``MAX_PATHS`` and ``MAX_PATH_DEPTH``.
    Reads the ancestors' rows only (their stored hop kinds stand in for the canvas).
    ``encoded``: the answer as :class:`project.api.EncodedJSON` (what the endpoint sends).

    A visit's ancestors and their links never change once it is registered, so
    the graph (and its JSON) is made once per process and visit (:data:`_PATHS_MADE`).
    """
    cfg = tokens.config()
    key = (reader.visit_id, reader.visit_uuid, cfg["MAX_PATHS"], cfg["MAX_PATH_DEPTH"])
    with _MADE_LOCK:
        made = _PATHS_MADE.get(key)
        if made is not None:
            _PATHS_MADE.move_to_end(key)
    if made is None:
        graph = _path_graph_read(reader, max_paths=cfg["MAX_PATHS"], max_depth=cfg["MAX_PATH_DEPTH"])
        made = (graph, json_bytes(graph))
        _remember(_PATHS_MADE, key, made)
    return made[1] if encoded else copy.deepcopy(made[0])


#: Path graphs made by this process: ``(visit pk, visit_uuid, MAX_PATHS, MAX_PATH_DEPTH)`` → (answer, its
#: JSON). The primary key is in the key because a uuid alone can come back: an
#: engine may register a visitUuid again once the run that held it was deleted
#: (``purge_runs``, the admin), and a primary key is never given out twice.
_PATHS_MADE: OrderedDict = OrderedDict()
#: How many answers each of the per-process memories keeps (least recently used go first).
_MADE_SIZE = 128
_MADE_LOCK = threading.Lock()


def _remember(memory: OrderedDict, key, value) -> None:
    with _MADE_LOCK:
        memory[key] = value
        while len(memory) > _MADE_SIZE:
            memory.popitem(last=False)


def _path_graph_read(reader: Reader, *, max_paths: int, max_depth: int) -> dict:
    """:func:`path_query`'s answer made from the database."""
    rows = [(reader.visit_uuid, reader.node_id, reader.sort_order, reader.parent_uuids, reader.hop_kinds)]
    if reader.ancestry:
        rows += [r for r in _rows(_ANCESTORS_SQL, (reader.run_pk, reader.sort_order)) if reader.may_read(r[2])]
    # Both link columns of every row decoded in one call each.
    parents = json.loads("[" + ",".join(r[3] or "[]" for r in rows) + "]")
    kinds = json.loads("[" + ",".join(r[4] or "[]" for r in rows) + "]")
    visits = {}
    for (key, node_id, sort_order, _p, _k), links, hops in zip(rows, parents, kinds, strict=True):
        key = _uuid_text(key)
        visits[key] = paths.VisitNode(
            visit_uuid=key,
            node_id=node_id,
            sort_order=sort_order,
            parent_uuids=tuple(links),
            parent_kinds=tuple(hops),
        )
    graph = paths.path_graph(visit_uuid=reader.visit_uuid, visits=visits, max_paths=max_paths, max_depth=max_depth)
    return graph.as_dict()


# --------------------------------------------------------------------------- output

_MISSING = object()
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
            return _("none (an empty object)")
        shown = [repr(k if len(k) <= 60 else k[:57] + "...") for k in list(value)[:AVAILABLE_KEYS_SHOWN]]
        more = len(value) - len(shown)
        return ", ".join(shown) + (_(" and %(count)d more") % {"count": more} if more > 0 else "")
    if isinstance(value, list):
        return _("indexes 0 to %(last)d") % {"last": len(value) - 1} if value else _("none (an empty list)")
    return _("none (the value is %(type)s)") % {"type": "null" if value is None else type(value).__name__}


def _envelope_parts(output, status: str):
    """(status, message, data) of a visit's output envelope; a running visit has
    ``status: null`` (SPEC §4.5)."""
    if not isinstance(output, dict):
        return None, None, output
    envelope_status = output.get("status") if status != "RUNNING" else None
    return envelope_status, output.get("message"), output.get("data")


def output_query(
    *,
    reader: Reader,
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
    target = _target_of_node(reader, output_hint(node_id=node_id, iter_seq=iter_seq))
    status, message, data = _envelope_parts(_json(target.column), target.status)
    if field is not None:
        try:
            data = field_select(data, field)
        except FieldNotFound as exc:
            where = _(" at '%(path)s'") % {"path": exc.reached} if exc.reached else ""
            raise NotFound(
                _(
                    "Field '%(field)s' is not in the output data of node '%(node)s' (iterSeq %(iter)d); "
                    "available%(where)s: %(keys)s."
                )
                % {"field": field, "node": node_id, "iter": target.iter_seq, "where": where, "keys": exc.keys}
            ) from None
    fitted = fit_json(data, max_bytes or tokens.config()["MAX_BYTES"])
    return {
        "nodeId": node_id,
        "iterSeq": target.iter_seq,
        "visitUuid": target.visit_uuid,
        "status": status,
        "message": message,
        "data": fitted.value,
        "requestedField": field,
        "truncated": fitted.truncated,
        "originalBytes": fitted.original_bytes,
    }


# --------------------------------------------------------------------------- meta


#: Entries (thinking messages plus tool calls) a visit row keeps for the meta
#: query; past it the row keeps the todo list only (``overflow``) and the meta
#: query reads the logs, so a log batch never rewrites an ever-growing row.
MAX_KEPT_ENTRIES = 200


def meta_kept(logs, kept: dict | None = None, *, bounded: bool = True) -> dict:
    """What a visit keeps for the meta query (``Visit.meta_content``) once
    ``logs`` are appended to ``kept`` (None: from no logs). Pure.

    Past :data:`MAX_KEPT_ENTRIES` thinking messages and tool calls together
    (unless not ``bounded``) it keeps ``{"overflow": True, "todoList": …}`` only (then
    :func:`meta_content` is given the logs instead).

    ``logs``: dicts with ``type``, ``message`` and ``detail``, in seq order.
    Returns a new ``{"thinking": [messages], "toolCalls": [{tool, args} |
    {tool, result}], "todoList": the last TODO_UPDATE's detail or None}``.
    """
    kept = kept or {}
    overflow = bool(kept.get("overflow"))
    thinking = [] if overflow else list(kept.get("thinking") or ())
    calls = [] if overflow else list(kept.get("toolCalls") or ())
    todo = kept.get("todoList")
    for log in logs:
        kind = log["type"]
        if kind == LogType.TODO_UPDATE:
            todo = log["detail"]
        elif overflow:
            continue
        elif kind == LogType.THINKING:
            thinking.append(log["message"])
        elif kind == LogType.TOOL_CALL:
            calls.append({"tool": log["message"], "args": log["detail"]})
        elif kind == LogType.TOOL_RESULT:
            calls.append({"tool": log["message"], "result": log["detail"]})
        if bounded and len(thinking) + len(calls) > MAX_KEPT_ENTRIES:
            overflow, thinking, calls = True, [], []
    if overflow:
        return {"overflow": True, "todoList": todo}
    return {"thinking": thinking, "toolCalls": calls, "todoList": todo}


def meta_content(logs: list[dict], kind: str, *, kept: dict | None = None) -> dict:
    """The meta keys for ``kind`` (SPEC §4.5). Pure.

    ``thinking``: THINKING messages joined by newlines; ``toolCalls``:
    ``{tool, args}`` per TOOL_CALL and ``{tool, result}`` per TOOL_RESULT, in
    order; ``todoList``: the last TODO_UPDATE's detail (null when none);
    ``logs`` (ALL only): every log (dicts with ``type``, ``timestamp`` as ISO
    text, ``message``, ``detail``, in seq order). ``kept`` (a visit's
    :func:`meta_kept`) stands in for ``logs`` for the other kinds.
    """
    kept = kept if kept is not None else meta_kept(logs, bounded=False)
    content: dict = {}
    if kind in (KIND_THINKING, KIND_ALL):
        content["thinking"] = "\n".join(kept["thinking"])
    if kind in (KIND_TOOL_CALLS, KIND_ALL):
        content["toolCalls"] = kept["toolCalls"]
    if kind in (KIND_TODO, KIND_ALL):
        content["todoList"] = kept["todoList"]
    if kind == KIND_ALL:
        content["logs"] = [
            {"type": log["type"], "timestamp": log["timestamp"], "message": log["message"], "detail": log["detail"]}
            for log in logs
        ]
    return content


def _logs_read(visit_id: int, types: tuple[str, ...] = ()) -> list[dict]:
    """A visit's logs in seq order as :func:`meta_content` takes them (``types``: only those)."""
    and_types = f' AND "type" IN ({", ".join(["%s"] * len(types))})' if types else ""
    rows = _rows(_LOGS_SQL.format(and_types=and_types), (visit_id, *types))
    details = json.loads("[" + ",".join("null" if r[3] is None else r[3] for r in rows) + "]") if rows else []
    return [
        {"type": r[0], "timestamp": _iso_db(r[1]), "message": r[2], "detail": detail}
        for r, detail in zip(rows, details, strict=True)
    ]


def meta_query(
    *,
    reader: Reader,
    node_id: str | None = None,
    visit_uuid: str | None = None,
    kind: str = KIND_ALL,
    iter_seq: int | None = None,
    max_bytes: int | None = None,
    encoded: bool = False,
) -> dict | EncodedJSON:
    """A predecessor's thinking, tool calls and todo list (SPEC §4.5):
    ``{nodeId, iterSeq, visitUuid, thinking?, toolCalls?, todoList?, logs?, truncated, originalBytes}``.

    ``visit_uuid`` wins over ``node_id`` (then ``iter_seq`` is not used);
    ``kind`` is one of :data:`META_KINDS` (validated by the caller). The kind's
    content is cut as one JSON object to ``max_bytes``. ``encoded``: the
    answer as :class:`project.api.EncodedJSON` (what the endpoint sends).
    Raises ``NotFound``.
    """
    hint = meta_hint(node_id=node_id, visit_uuid=visit_uuid, kind=kind, iter_seq=iter_seq)
    target = _target_of_uuid(reader, hint) if hint.visit_uuid is not None else _target_of_node(reader, hint)
    answer, answer_bytes = _meta_answer(target, kind, max_bytes or tokens.config()["MAX_BYTES"])
    return answer_bytes if encoded else copy.deepcopy(answer)


#: Meta answers made by this process: ``(visit pk, visit_uuid, log_count, kind,
#: max_bytes)`` → ``(answer, its JSON)``. A visit's logs are only ever added, so
#: its log count versions the content exactly; an entry is never stale, only
#: evicted. The primary key tells apart a visit whose engine-chosen uuid was
#: registered again after the run that held it was deleted (:data:`_PATHS_MADE`).
_META_ANSWERS: OrderedDict = OrderedDict()


def _meta_answer(target: Target, kind: str, max_bytes: int) -> tuple[dict, EncodedJSON]:
    """:func:`meta_query`'s answer for ``target`` and its JSON, from
    :data:`_META_ANSWERS` when this process made it before (cutting 50 KB of
    logs to a budget, and encoding the cut, are the costly parts of a meta query)."""
    key = (target.pk, target.visit_uuid, target.log_count, kind, max_bytes)
    with _MADE_LOCK:
        found = _META_ANSWERS.get(key)
        if found is not None:
            _META_ANSWERS.move_to_end(key)
            return found
    kept = None if kind == KIND_ALL else _json(target.column)
    if kept is not None and kept.get("overflow") and kind != KIND_TODO:
        kept = None  # the row keeps the todo list only: read the logs
    logs = _logs_read(target.pk, _KIND_LOG_TYPES.get(kind, ())) if kept is None else []
    content = meta_content(logs, kind, kept=kept)
    fitted = fit_json(content, max_bytes)
    cut = fitted.value if isinstance(fitted.value, dict) else {}
    answer = {
        "nodeId": target.node_id,
        "iterSeq": target.iter_seq,
        "visitUuid": target.visit_uuid,
        **{name: cut.get(name) for name in content},
        "truncated": fitted.truncated,
        "originalBytes": fitted.original_bytes,
    }
    made = (answer, json_bytes(answer))
    _remember(_META_ANSWERS, key, made)
    return made
