"""Context tokens (SPEC §4.5, §4.1): issue, authenticate, slide, revoke, purge.

A token is 48 hex characters from :mod:`secrets`, shown once at issue; only its
SHA-256 hex digest is stored. It is bound to one run and one visit. Its expiry
slides: ``TOKEN_TTL_SECONDS`` after the last sign of life of its visit (a
query with it, a log appended, a heartbeat), never later than
``TOKEN_MAX_LIFETIME_SECONDS`` after issue. It is revoked at once when its
visit completes or its run finishes. At most ``MAX_TOKENS_PER_VISIT`` are live
per visit. Dead rows are purged :data:`TOKEN_PURGE_GRACE` (24 hours) after they
died, so a finished visit still lists its tokens for a while.

Functions the recording and judgement rules call: :func:`context_query_object`,
:func:`tokens_touch`, :func:`tokens_revoke_for_visit`, :func:`tokens_revoke_for_run`.

A token's text never goes to a log: use :func:`token_mask` (first 4 characters
and ``***``) whenever one must be named.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from contextquery import liveness, tallies
from contextquery.client.wire import CONTEXT_ENDPOINTS, TOKEN_HEADER, TOKEN_HEX_CHARS, token_mask
from contextquery.models import ContextToken, RunStatus, Visit, VisitStatus, WorkflowRun
from project import serving
from project.errors import Conflict, LimitReached, NotFound, Unavailable

logger = logging.getLogger("hermes_ops.contextquery.tokens")

_TOKEN_RE = re.compile(rf"[0-9a-f]{{{TOKEN_HEX_CHARS}}}")
_PURGE_CACHE_KEY = "contextquery:tokens:last-purge"


def config() -> dict:
    """``settings.HERMES_CONTEXT_QUERY`` (read on each call so tests can override it)."""
    return settings.HERMES_CONTEXT_QUERY


def context_query_enabled() -> bool:
    """Whether the context query feature is on (``HERMES_CONTEXT_QUERY["ENABLED"]``)."""
    return bool(config()["ENABLED"])


def token_hash(raw: str) -> str:
    """SHA-256 hex digest of a token's text: what is stored and looked up."""
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def token_is_live(token: ContextToken, *, now: datetime | None = None) -> bool:
    """True when ``token`` is neither revoked nor expired at ``now``."""
    now = now or timezone.now()
    return token.revoked_at is None and token.expires_at > now


def _live(now: datetime) -> Q:
    return Q(revoked_at__isnull=True, expires_at__gt=now)


@dataclass(frozen=True)
class IssuedToken:
    """A freshly issued token: ``token`` is the text (shown this once), ``record`` the row."""

    token: str
    record: ContextToken


def token_issue(*, visit: Visit, make_room: bool = False) -> IssuedToken:
    """Issue a token for a running ``visit`` (SPEC §4.5).

    Counting the live tokens and inserting the new one happen under a lock on
    the visit row, so issuers racing in several processes cannot exceed
    ``MAX_TOKENS_PER_VISIT``. Expires ``TOKEN_TTL_SECONDS`` from now (capped by
    the maximum lifetime).

    Raises ``Unavailable`` (503) when context query is disabled, ``Conflict``
    (409) when the visit or its run has ended, ``LimitReached`` (429, with
    ``retry_after`` = seconds until the earliest live token expires) when the
    visit already has ``MAX_TOKENS_PER_VISIT`` live tokens — unless
    ``make_room``: then the visit's oldest live token is revoked to make room
    (a retried registration must never fail, SPEC §4.3).
    """
    cfg = config()
    if not cfg["ENABLED"]:
        raise Unavailable("Context query is disabled on this server (HERMES_CONTEXT_QUERY_ENABLED=false).")
    tokens_purge_maybe()
    with transaction.atomic():
        locked = Visit.objects.select_for_update().select_related("run").get(pk=visit.pk)
        if locked.status != VisitStatus.RUNNING:
            raise Conflict(
                f"Visit {locked.visit_uuid} has ended ({locked.status}); tokens are issued only to running visits."
            )
        if locked.run.status != RunStatus.RUNNING:
            raise Conflict(f"Run {locked.run.run_id} has finished ({locked.run.status}); no more tokens are issued.")
        now = timezone.now()
        live_expiries = sorted(
            ContextToken.objects.filter(_live(now), visit_id=locked.pk).values_list("expires_at", flat=True)
        )
        limit = cfg["MAX_TOKENS_PER_VISIT"]
        if len(live_expiries) >= limit and make_room:
            live = ContextToken.objects.filter(_live(now), visit_id=locked.pk).order_by("issued_at", "id")
            ContextToken.objects.filter(
                pk__in=list(live.values_list("pk", flat=True)[: len(live_expiries) - limit + 1])
            ).update(revoked_at=now)
        elif len(live_expiries) >= limit:
            wait = max(1, math.ceil((live_expiries[0] - now).total_seconds()))
            raise LimitReached(
                f"Visit {locked.visit_uuid} already has {limit} live context tokens, the most allowed; "
                "revoke one or wait for one to expire.",
                retry_after=wait,
            )
        raw = secrets.token_hex(TOKEN_HEX_CHARS // 2)
        ttl = min(cfg["TOKEN_TTL_SECONDS"], cfg["TOKEN_MAX_LIFETIME_SECONDS"])
        record = ContextToken.objects.create(
            token_hash=token_hash(raw),
            run_id=locked.run_id,
            visit_id=locked.pk,
            issued_at=now,
            expires_at=now + timedelta(seconds=ttl),
        )
    # DEBUG: every visit registration issues one, so INFO would log a line per visit.
    logger.debug("context token %s issued for visit %s", token_mask(raw), locked.visit_uuid)
    return IssuedToken(token=raw, record=record)


def context_query_object(*, visit: Visit, base_url: str | None = None, make_room: bool = False) -> dict | None:
    """Issue a token for ``visit`` and return the ``contextQuery`` object (SPEC §4.3).

    ``{base_url, token, run_id, visit_uuid, expires_at}`` — snake_case, exactly
    what the bridge's ``/run`` body takes as ``context_query``; ``base_url``
    is this server's address (default :func:`project.serving.base_url`); ``None`` when
    context query is disabled or the visit (or its run) has ended. Raises
    ``LimitReached`` (429) as :func:`token_issue` does, unless ``make_room``
    (a repeated registration), which revokes the visit's oldest live token.
    """
    if not context_query_enabled():
        return None
    if visit.status != VisitStatus.RUNNING or visit.run.status != RunStatus.RUNNING:
        # A repeated register of an ended visit: a token could not read anything.
        return None
    issued = token_issue(visit=visit, make_room=make_room)
    return context_query_payload(issued=issued, visit=visit, base_url=base_url)


def context_query_payload(*, issued: IssuedToken, visit: Visit, base_url: str | None = None) -> dict:
    """The ``contextQuery`` object for an already issued token (see :func:`context_query_object`)."""
    return {
        "base_url": base_url or serving.base_url(),
        "token": issued.token,
        "run_id": visit.run.run_id,
        "visit_uuid": str(visit.visit_uuid),
        "expires_at": issued.record.expires_at.isoformat().replace("+00:00", "Z"),
    }


def token_text_valid(raw: str) -> bool:
    """Whether ``raw`` has the shape of a token's text: 48 lowercase hex characters."""
    return _TOKEN_RE.fullmatch(raw) is not None


#: A query within this long of the last slide does not slide again: a touch
#: slides every live token of the visit, so a burst of queries pays the slide
#: once per second (``contextquery.queries`` asks the database whether a
#: token expires earlier than ``TOKEN_TTL_SECONDS - TOUCH_GRANULARITY`` from now).
TOUCH_GRANULARITY = timedelta(seconds=1)


def tokens_touch(*, visit: Visit | int) -> int:
    """A sign of life of ``visit`` (a query, a log batch, a heartbeat): slide the
    expiry of its live tokens to ``TOKEN_TTL_SECONDS`` from now, never past
    ``TOKEN_MAX_LIFETIME_SECONDS`` after each token's issue, never earlier than
    it was. An expired or revoked token stays dead. Returns how many slid.
    Accepts a ``Visit`` or its primary key. Also records the visit's sign of
    life (:func:`contextquery.liveness.visit_seen`, at most every 10 s).
    """
    visit_id = visit if isinstance(visit, int) else visit.pk
    cfg = config()
    now = timezone.now()
    liveness.visit_seen(visit_id=visit_id, now=now)
    new_expiry = now + timedelta(seconds=cfg["TOKEN_TTL_SECONDS"])
    lifetime = timedelta(seconds=cfg["TOKEN_MAX_LIFETIME_SECONDS"])
    # Tokens issued at or after this instant are not capped by their lifetime.
    uncapped_since = new_expiry - lifetime
    live = ContextToken.objects.filter(_live(now), visit_id=visit_id)
    moved = live.filter(issued_at__gte=uncapped_since, expires_at__lt=new_expiry).update(expires_at=new_expiry)
    # The rest near the end of their lifetime: a few rows at most (≤ MAX_TOKENS_PER_VISIT).
    for token_id, issued_at, expires_at in live.filter(issued_at__lt=uncapped_since).values_list(
        "id", "issued_at", "expires_at"
    ):
        cap = issued_at + lifetime
        if cap > expires_at:
            moved += ContextToken.objects.filter(_live(now), pk=token_id).update(expires_at=cap)
    return moved


def token_revoke(*, visit: Visit, raw: str) -> ContextToken:
    """Revoke the token whose text is ``raw`` if it belongs to ``visit`` (frees its place).

    Idempotent: revoking a revoked token answers the row again. Raises
    ``NotFound`` (404) when no token of this visit has that text.
    """
    token = ContextToken.objects.filter(token_hash=token_hash(raw or ""), visit_id=visit.pk).first()
    if token is None:
        raise NotFound(f"Visit {visit.visit_uuid} has no context token {token_mask(raw)}.")
    if token.revoked_at is None:
        now = timezone.now()
        ContextToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now)
        token.revoked_at = now
        logger.info("context token %s revoked for visit %s", token_mask(raw), visit.visit_uuid)
    return token


def tokens_revoke_for_visit(*, visit: Visit) -> int:
    """Revoke every unrevoked token of ``visit`` (its completion). Returns how many."""
    return ContextToken.objects.filter(visit_id=visit.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def tokens_revoke_for_run(*, run: WorkflowRun) -> int:
    """Revoke every unrevoked token of ``run`` (its finish). Returns how many."""
    return ContextToken.objects.filter(run_id=run.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


#: How long a dead token row (expired or revoked) is kept before a purge deletes
#: it. A visit's tokens die when it completes, so without a grace period a
#: finished visit's page and the admin would show no tokens at all; ops see
#: them for a day. A dead row authenticates nothing, so keeping it costs a row.
TOKEN_PURGE_GRACE = timedelta(hours=24)


def tokens_purge(*, now: datetime | None = None, grace: timedelta = TOKEN_PURGE_GRACE) -> int:
    """Delete token rows that died more than ``grace`` ago (SPEC §4.5): expired,
    or revoked, at or before ``now - grace`` (default :data:`TOKEN_PURGE_GRACE`,
    24 hours). Live tokens and recently dead ones stay. Audit rows belong to
    visits and are kept. Returns how many rows were deleted."""
    cutoff = (now or timezone.now()) - grace
    with transaction.atomic():
        deleted, _ = ContextToken.objects.filter(Q(expires_at__lte=cutoff) | Q(revoked_at__lte=cutoff)).delete()
        tallies.tally_purged_tokens(count=deleted)  # /metrics keeps counting them as issued
    return deleted


def tokens_purge_maybe() -> int:
    """Purge (:func:`tokens_purge`) opportunistically, at most once per ``CLEANUP_INTERVAL_SECONDS``
    across processes that share the cache. Returns how many rows were deleted."""
    if not cache.add(_PURGE_CACHE_KEY, True, timeout=config()["CLEANUP_INTERVAL_SECONDS"]):
        return 0
    return tokens_purge()


def context_query_curl_lines(*, context_query: dict, node_id: str) -> list[str]:
    """Ready-to-paste ``curl`` lines for the three internal endpoints (``loaddemo``).

    ``context_query`` is the object of :func:`context_query_object`; ``node_id``
    a predecessor to read with ``output`` and ``meta``. The lines carry the
    token: print them only where the token is shown at issue.
    """
    base, token, run_id = context_query["base_url"], context_query["token"], context_query["run_id"]
    bodies = {
        "path": {"runId": run_id, "visitUuid": context_query["visit_uuid"]},
        "output": {"runId": run_id, "nodeId": node_id, "field": None, "iterSeq": None},
        "meta": {"runId": run_id, "nodeId": node_id, "kind": "ALL"},
    }
    return [
        f"curl -sS -w '\\n' -X POST {base}{CONTEXT_ENDPOINTS[endpoint]} -H '{TOKEN_HEADER}: {token}' "
        f"-H 'Content-Type: application/json' -d '{json.dumps(body)}'"
        for endpoint, body in bodies.items()
    ]
