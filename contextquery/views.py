"""The run inspection pages under /runs/ (SPEC §4.6): staff only, plain HTML
that works without JavaScript, every recorded text escaped by the templates.

* ``/runs/``: runs filtered with the API's ``RunFilter``, with visit and
  failure counts;
* ``/runs/<runId>/``: the graph picture above the visit timeline;
* ``/runs/<runId>/visits/<visitUuid>/``: one visit in full, with the
  false-positive form; ``…/output.json`` the whole output envelope;
* ``/runs/matched/<patternId>/``: the visits a pattern failed (its hits, or
  only its false positives), linked from the pattern page;
* ``/visits/``: visits across runs, filtered with ``VisitFilter`` (the
  overview's numbers link here, SPEC §8).

A RUNNING run's page and a running visit's page refresh themselves (SPEC §8):
``static/hermes/live.js`` polls ``…/live.json`` and, when its ``fingerprint``
changes, reloads the page's ``data-live-region`` parts in place. Without
JavaScript a ``<noscript>`` refresh reloads the whole page instead.
"""

from __future__ import annotations

import hashlib
import json
import re

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import F, Q
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import content_disposition_header, urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_POST

from contextquery import graph_layout, liveness, recording, tool_gateway
from contextquery.filters import RunFilter, VisitFilter
from contextquery.models import (
    LogType,
    RunMode,
    RunStatus,
    Visit,
    VisitStatus,
    WorkflowRun,
)
from contextquery.paths import visit_node_of
from patterns import marks
from patterns.matching import compile_patterns
from patterns.models import Category, HermesErrorPattern
from project.api import envelope
from project.errors import Conflict, Forbidden, Invalid, NotFound
from project.pages import staff_page

PAGE_SIZE = 50
#: JSON or text longer than this is folded in a closed <details>.
FOLD_CHARS = 4_000
#: At most this much of one JSON value or text is put in the page; the rest is
#: behind the raw download, so a megabyte output cannot stall the browser.
INLINE_CHARS = 100_000
#: A log's detail is shown up to this many characters in the log tables (a visit
#: may have hundreds of logs, and tool calls appear twice: as calls and as logs).
LOG_DETAIL_CHARS = 5_000
#: Raw logs per page of the visit page (``?logs=2`` is the second page).
LOGS_PER_PAGE = 100
#: Thoughts and tool calls shown in their sections; the rest are in the raw logs.
SECTION_ENTRIES = 100
#: How often a live page asks whether it changed (seconds); without JavaScript
#: the page reloads itself every ``NOSCRIPT_REFRESH_SECONDS``.
LIVE_POLL_SECONDS = 3
NOSCRIPT_REFRESH_SECONDS = 15


staff_required = staff_page(gettext_lazy("The run pages are for staff users."))

#: The run graph's zoom levels: fitted to the page's width (the default), or a scale in percent.
ZOOMS = (("fit", gettext_lazy("fit")), ("100", "100%"), ("150", "150%"), ("200", "200%"))


def _query_without(request, *names: str) -> str:
    """The page's query string without ``names`` (for links that set one of them)."""
    query = request.GET.copy()
    for name in names:
        query.pop(name, None)
    return query.urlencode()


def _run_or_404(run_id: str) -> WorkflowRun:
    try:
        return recording.run_get(run_id=run_id)
    except NotFound as error:
        raise Http404(error.message) from None


def _visit_or_404(run: WorkflowRun, visit_uuid) -> Visit:
    try:
        return recording.visit_get(run=run, visit_uuid=visit_uuid)
    except NotFound as error:
        raise Http404(error.message) from None


def shown_text(value, *, as_json: bool, limit: int = INLINE_CHARS) -> dict | None:
    """What a page shows of a JSON value or text: ``{text, size, folded, cut}``.

    ``text`` is pretty JSON (or the text) cut to ``limit`` characters; ``size``
    the full length in characters; ``folded`` when it is long enough to start
    collapsed; ``cut`` when ``text`` is only the beginning. None for no value.
    """
    if value is None:
        return None
    text = json.dumps(value, indent=2, ensure_ascii=False) if as_json else str(value)
    return {"text": text[:limit], "size": len(text), "folded": len(text) > FOLD_CHARS, "cut": len(text) > limit}


def age_text(moment, *, now=None) -> str:
    """How long ago ``moment`` was, in words: "12 s ago", "5 min ago", "2 h 5 min ago"."""
    seconds = max(0, int(((now or timezone.now()) - moment).total_seconds()))
    if seconds < 60:
        return ngettext("%(n)d second ago", "%(n)d seconds ago", seconds) % {"n": seconds}
    minutes = seconds // 60
    if minutes < 60:
        return ngettext("%(n)d minute ago", "%(n)d minutes ago", minutes) % {"n": minutes}
    return _("%(h)d h %(m)d min ago") % {"h": minutes // 60, "m": minutes % 60}


def _fingerprint(*parts) -> str:
    """A short digest of what a live page shows: it changes when the page would."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _live_answer(data: dict) -> JsonResponse:
    response = JsonResponse(envelope(200, "success", data), json_dumps_params={"ensure_ascii": False})
    response["Cache-Control"] = "no-store"
    return response


def duration_seconds(visit: Visit) -> float | None:
    """Seconds from start to end of ``visit``; None while it runs."""
    if visit.started_at is None or visit.ended_at is None:
        return None
    return (visit.ended_at - visit.started_at).total_seconds()


# --------------------------------------------------------------------------- runs


@staff_required
@require_GET
def run_list(request):
    """Runs, newest first, filtered with the API's FilterSet, paginated."""
    runs = recording.run_list()
    run_filter = RunFilter(request.GET or None, queryset=runs)
    found = run_filter.qs if not run_filter.is_bound or run_filter.is_valid() else runs.none()
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    page.object_list = liveness.runs_attach_liveness(runs=page.object_list)
    query = request.GET.copy()
    query.pop("page", None)
    workflows = (
        WorkflowRun.objects.exclude(workflow_id="")
        .order_by("workflow_id")
        .values_list("workflow_id", flat=True)
        .distinct()[:200]
    )
    return render(
        request,
        "contextquery/run_list.html",
        {
            "filter": run_filter,
            "page_obj": page,
            "query": query.urlencode(),
            "statuses": RunStatus.choices,
            "modes": RunMode.choices,
            "workflows": list(workflows),
            "stale_minutes": settings.HERMES_STALE_RUN_MINUTES,
            "sort": request.GET.get("sort", ""),
            "sort_query": _query_without(request, "sort", "page"),
        },
    )


def _node_href(run: WorkflowRun):
    def href(node_id, visits):
        if len(visits) == 1:
            return reverse("contextquery:visit", args=[run.run_id, visits[0].visit_uuid])
        return f"{reverse('contextquery:run', args=[run.run_id])}?{urlencode({'nodeId': node_id})}#timeline"

    return href


@staff_required
@require_GET
def run_detail(request, run_id):
    """The graph picture above the visit timeline (filtered by node or status);
    a RUNNING run refreshes itself and shows each visit's last sign of life."""
    run = liveness.run_liveness(run=_run_or_404(run_id))
    visits = list(
        recording.with_false_positive(Visit.objects.filter(run=run))
        .select_related("matched_pattern")
        .defer("output", "input", "final_text", "registration", "completion")
        .order_by("sort_order")
    )
    zoom = request.GET.get("zoom") if request.GET.get("zoom") in dict(ZOOMS) else "fit"
    picture = graph_layout.graph_picture(
        graph=run.graph, visits=[visit_node_of(v) for v in visits], node_href=_node_href(run)
    )
    visit_filter = VisitFilter(request.GET or None, queryset=Visit.objects.filter(run=run))
    shown = visits
    if request.GET and visit_filter.is_valid():
        wanted = set(visit_filter.qs.values_list("pk", flat=True))
        shown = [v for v in visits if v.pk in wanted]
    by_uuid = {str(v.visit_uuid): v for v in visits}
    now = timezone.now()
    rows = [
        {
            "visit": v,
            "duration": duration_seconds(v),
            "parents": [by_uuid[p] for p in v.parent_uuids if p in by_uuid],
            "seen_ago": age_text(v.last_seen_at, now=now),
        }
        for v in shown
    ]
    return render(
        request,
        "contextquery/run_detail.html",
        {
            "run": run,
            "picture": picture,
            "zoom": zoom,
            "zoom_choices": [(value, label) for value, label in ZOOMS],
            "zoom_query": _query_without(request, "zoom"),
            "zoomed_width": round(picture.width * int(zoom) / 100) if zoom != "fit" else None,
            "zoomed_height": round(picture.height * int(zoom) / 100) if zoom != "fit" else None,
            "rows": rows,
            "visit_filter": visit_filter,
            "visit_statuses": VisitStatus.choices,
            "node_ids": list(dict.fromkeys(v.node_id for v in visits)),
            "filtered": bool(request.GET),
            "failed_count": sum(1 for v in visits if v.status == VisitStatus.FAILED),
            # No column of blanks: "Failure reason" shows once some visit of the run has one.
            "reason_column": any(v.failure_reason or v.matched_pattern_name for v in visits),
            "seen_ago": age_text(run.last_seen_at, now=now),
            "stale_minutes": settings.HERMES_STALE_RUN_MINUTES,
            **_live_context(
                live=run.status == RunStatus.RUNNING,
                url=reverse("contextquery:run-live", args=[run.run_id]),
                fingerprint=_run_fingerprint(run, visits),
            ),
        },
    )


def _live_context(*, live: bool, url: str, fingerprint: str) -> dict:
    return {
        "live": live,
        "live_url": url,
        "live_fingerprint": fingerprint,
        "live_seconds": LIVE_POLL_SECONDS,
        "noscript_seconds": NOSCRIPT_REFRESH_SECONDS,
    }


def _run_fingerprint(run: WorkflowRun, visits) -> str:
    return _fingerprint(
        run.status,
        run.stale,
        [(str(v.visit_uuid), v.status, v.log_counter, v.query_count, v.last_seen_at) for v in visits],
    )


@staff_required
@require_GET
def run_live(request, run_id):
    """``/runs/<runId>/live.json``: what a RUNNING run's page polls (SPEC §8).

    ``{runId, status, live, stale, lastSeenAt, now, fingerprint, visits:
    [{visitUuid, nodeId, iterSeq, status, logCount, lastSeenAt}]}``;
    ``fingerprint`` changes whenever the run page would show something new.
    """
    run = liveness.run_liveness(run=_run_or_404(run_id))
    visits = list(
        Visit.objects.filter(run=run)
        .order_by("sort_order")
        .only("visit_uuid", "node_id", "iter_seq", "status", "log_counter", "query_count", "last_seen_at")
    )
    return _live_answer(
        {
            "runId": run.run_id,
            "status": run.status,
            "live": run.status == RunStatus.RUNNING,
            "stale": run.stale,
            "lastSeenAt": run.last_seen_at.isoformat(),
            "now": timezone.now().isoformat(),
            "fingerprint": _run_fingerprint(run, visits),
            "visits": [
                {
                    "visitUuid": str(v.visit_uuid),
                    "nodeId": v.node_id,
                    "iterSeq": v.iter_seq,
                    "status": v.status,
                    "logCount": v.log_counter,
                    "lastSeenAt": v.last_seen_at.isoformat(),
                }
                for v in visits
            ],
        }
    )


# --------------------------------------------------------------------------- visits


def _tool_calls(logs) -> list[dict]:
    return [
        {
            "log": log,
            "tool": log.message,
            "kind": log.type,
            "detail": shown_text(log.detail, as_json=not isinstance(log.detail, str), limit=LOG_DETAIL_CHARS),
        }
        for log in logs
    ]


def _todo_list(visit: Visit) -> list[dict]:
    last = visit.logs.filter(type=LogType.TODO_UPDATE).order_by("-seq").values_list("detail", flat=True).first()
    return [item for item in last if isinstance(item, dict)] if isinstance(last, list) else []


def reply_marked(visit: Visit, *, limit: int = INLINE_CHARS) -> dict | None:
    """The reply cut around the text its matched pattern matched, for ``<mark>``:
    ``{before, match, after}``, or None when no stored pattern matches it now.
    The pattern's text is the copy the visit kept at completion, so a later
    edit of the pattern does not move the mark."""
    text = visit.final_text
    if not text or not visit.matched_pattern_text:
        return None
    found = None
    # The visit keeps the pattern's text, not its scope: where the reply is an
    # error first, then anywhere.
    for scope in ("error", "anywhere"):
        rule = {"id": 0, "name": visit.matched_pattern_name, "pattern": visit.matched_pattern_text, "scope": scope}
        found = compile_patterns([rule]).detect(
            text, head_chars=settings.PATTERNS_SCAN_CHARS, tail_chars=settings.PATTERNS_SCAN_TAIL_CHARS
        )
        if found is not None:
            break
    if found is None or found.span[1] > limit:
        return None
    start, end = found.span
    return {"before": text[:start], "match": text[start:end], "after": text[end:limit], "cut": len(text) > limit}


def visit_neighbours(visit: Visit) -> dict:
    """The visits around ``visit`` for navigating a run: ``previous`` and ``next``
    by sortOrder (or None), and ``same_node``: every visit of its node by iterSeq
    (B#1, B#2 … — a retry and what it retried)."""
    light = ("visit_uuid", "node_id", "iter_seq", "sort_order", "status", "run_id")
    # sortOrder counts the run's registrations one by one, so the neighbours are
    # at sortOrder ± 1: one query finds them and the node's visits.
    around = (visit.sort_order - 1, visit.sort_order + 1)
    found = list(
        Visit.objects.filter(Q(node_id=visit.node_id) | Q(sort_order__in=around), run_id=visit.run_id).only(*light)
    )
    by_order = {v.sort_order: v for v in found}
    return {
        "previous": by_order.get(around[0]),
        "next": by_order.get(around[1]),
        "same_node": sorted((v for v in found if v.node_id == visit.node_id), key=lambda v: v.iter_seq),
    }


def _first(logs, limit: int) -> tuple[list, int]:
    """The first ``limit`` of a log queryset and how many it holds in all."""
    shown = list(logs[:limit])
    return shown, (len(shown) if len(shown) < limit else logs.count())


@staff_required
@require_GET
def visit_detail(request, run_id, visit_uuid):
    """One visit: input, output, reply, thinking, tool calls, todo list, logs,
    failure and its pattern, predecessor paths, reads and tokens."""
    run = _run_or_404(run_id)
    visit = _visit_or_404(run, visit_uuid)
    # A visit may hold thousands of logs: the page shows one page of raw logs
    # and the first entries of each derived section (issue 12).
    log_page = Paginator(visit.logs.order_by("seq"), LOGS_PER_PAGE).get_page(request.GET.get("logs"))
    thinking, thinking_total = _first(visit.logs.filter(type=LogType.THINKING).order_by("seq"), SECTION_ENTRIES)
    calls, calls_total = _first(
        visit.logs.filter(type__in=(LogType.TOOL_CALL, LogType.TOOL_RESULT)).order_by("seq"), SECTION_ENTRIES
    )
    tokens = list(visit.tokens.order_by("-issued_at", "-id"))
    graph = recording.visit_paths(visit=visit)
    on_paths = {
        str(v.visit_uuid): v
        for v in Visit.objects.filter(run=run, visit_uuid__in=graph.visit_uuids + list(visit.parent_uuids)).only(
            "visit_uuid", "node_id", "iter_seq", "status", "sort_order", "run_id"
        )
    }
    backtracks = set(graph.backtrack_edge_keys)
    paths = [
        {
            "path": path,
            "steps": [
                {
                    "visit": on_paths.get(uuid),
                    "uuid": uuid,
                    "node_id": node,
                    "backtrack": i > 0 and f"{path.sequence[i - 1]}->{node}" in backtracks,
                }
                for i, (node, uuid) in enumerate(zip(path.sequence, path.visit_uuids, strict=False))
            ],
        }
        for path in graph.paths
    ]
    now = timezone.now()
    token_rows = [{"token": t, "prefix": t.hash_prefix, "state": t.state(now)} for t in tokens]
    logs_shown = [
        {"log": log, "detail": shown_text(log.detail, as_json=not isinstance(log.detail, str), limit=LOG_DETAIL_CHARS)}
        for log in log_page
    ]
    business_calls = [
        {
            "call": call,
            "arguments": shown_text(call.arguments, as_json=True, limit=LOG_DETAIL_CHARS),
            "result": shown_text(call.result, as_json=True, limit=LOG_DETAIL_CHARS),
        }
        for call in tool_gateway.toolcalls_for_visit(visit_id=visit.pk)
    ]
    return render(
        request,
        "contextquery/visit_detail.html",
        {
            "run": run,
            "visit": visit,
            "duration": duration_seconds(visit),
            "parents": [on_paths.get(u) or u for u in visit.parent_uuids],
            "input": shown_text(visit.input, as_json=True),
            "output": shown_text(visit.output, as_json=True),
            "final_text": shown_text(visit.final_text, as_json=False),
            "reply_marked": reply_marked(visit),
            **visit_neighbours(visit),
            "thinking": thinking,
            "thinking_more": thinking_total - len(thinking),
            "tool_calls": _tool_calls(calls),
            "tool_calls_more": calls_total - len(calls),
            "todo": _todo_list(visit),
            "logs": logs_shown,
            "log_page": log_page,
            "graph": graph,
            "paths": paths,
            "reads": list(visit.reads.order_by("created_at", "id")),
            "tokens": token_rows,
            "business_calls": business_calls,
            "judged": marks.reply_get(subject=visit.visit_uuid),
            "note_max": marks.NOTE_MAX_CHARS,
            "categories": Category.choices,
            "inline_chars": INLINE_CHARS,
            "admin_url": reverse("admin:contextquery_visit_change", args=[visit.pk]),
            "seen_ago": age_text(visit.last_seen_at, now=now),
            **_live_context(
                live=visit.status == VisitStatus.RUNNING,
                url=reverse("contextquery:visit-live", args=[run.run_id, visit.visit_uuid]),
                fingerprint=_visit_fingerprint(visit, tokens),
            ),
        },
    )


def _visit_fingerprint(visit: Visit, tokens) -> str:
    return _fingerprint(
        visit.status,
        visit.log_counter,
        visit.query_count,
        visit.last_seen_at,
        [(t.pk, t.expires_at, t.revoked_at) for t in tokens],
    )


@staff_required
@require_GET
def visit_live(request, run_id, visit_uuid):
    """``/runs/<runId>/visits/<visitUuid>/live.json``: what a running visit's page polls (SPEC §8).

    ``{visitUuid, status, live, logCount, queryCount, lastSeenAt, now, fingerprint}``.
    """
    visit = _visit_or_404(_run_or_404(run_id), visit_uuid)
    tokens = list(visit.tokens.order_by("-issued_at", "-id").only("pk", "expires_at", "revoked_at"))
    return _live_answer(
        {
            "visitUuid": str(visit.visit_uuid),
            "status": visit.status,
            "live": visit.status == VisitStatus.RUNNING,
            "logCount": visit.log_counter,
            "queryCount": visit.query_count,
            "lastSeenAt": visit.last_seen_at.isoformat(),
            "now": timezone.now().isoformat(),
            "fingerprint": _visit_fingerprint(visit, tokens),
        }
    )


@staff_required
@require_GET
def visit_output_raw(request, run_id, visit_uuid):
    """The whole output envelope as a JSON download (the page shows only its beginning)."""
    run = _run_or_404(run_id)
    visit = _visit_or_404(run, visit_uuid)
    response = HttpResponse(
        json.dumps(visit.output, indent=2, ensure_ascii=False), content_type="application/json; charset=utf-8"
    )
    # RFC 6266: an ASCII fallback and filename* in UTF-8, so a non-ASCII node id keeps the attachment.
    node = re.sub(r'[\x00-\x1f\x7f/\\"]+', "_", visit.node_id)
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=f"{run.run_id}-{node}-{visit.iter_seq}-output.json"
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _mark_answered(request, run, visit, mark) -> HttpResponse:
    """Run ``mark()`` (which returns the success message) and come back to the
    visit's verdict; a refused mark's reasons become error messages (403 stays 403)."""
    try:
        messages.success(request, mark())
    except (Invalid, Conflict, Forbidden, NotFound) as error:
        if isinstance(error, Forbidden):
            raise PermissionDenied(error.message) from None
        texts = [t for group in (error.errors or {}).values() for t in group] or [error.message]
        for text in texts:
            messages.error(request, text)
    return redirect(reverse("contextquery:visit", args=[run.run_id, visit.visit_uuid]) + "#verdict")


@staff_required
@require_POST
def visit_missed_failure(request, run_id, visit_uuid):
    """Mark (``action=mark`` with a ``note`` and a ``category``) or unmark a reply that passed as
    a missed failure (SPEC §3.3a)."""
    run = _run_or_404(run_id)
    visit = _visit_or_404(run, visit_uuid)

    def mark():
        if request.POST.get("action") == "unmark":
            marks.reply_unmark_false_positive(subject=visit.visit_uuid, user=request.user)
            return _("The missed-failure mark was removed.")
        marks.reply_mark_missed_failure(
            subject=visit.visit_uuid,
            user=request.user,
            note=request.POST.get("note", ""),
            category=request.POST.get("category", ""),
        )
        return _("Marked as a missed failure; train_detector will learn from it.")

    return _mark_answered(request, run, visit, mark)


@staff_required
@require_POST
def visit_false_positive(request, run_id, visit_uuid):
    """Mark (``action=mark`` with a ``note``) or unmark a pattern's verdict as wrong."""
    run = _run_or_404(run_id)
    visit = _visit_or_404(run, visit_uuid)

    def mark():
        if request.POST.get("action") == "unmark":
            marks.reply_unmark_false_positive(subject=visit.visit_uuid, user=request.user)
            return _("The false-positive mark was removed.")
        marks.reply_mark_false_positive(subject=visit.visit_uuid, user=request.user, note=request.POST.get("note", ""))
        return _("Marked as a false positive of “%(name)s”.") % {"name": visit.matched_pattern_name}

    return _mark_answered(request, run, visit, mark)


@staff_required
@require_GET
def pattern_matched_visits(request, pattern_pk):
    """The visits a pattern failed, newest first; ``?falsePositive=true`` keeps
    only those ops marked as false positives (``false`` only the others)."""
    pattern = get_object_or_404(HermesErrorPattern, pk=pattern_pk)
    choice = {"true": True, "false": False}.get(request.GET.get("falsePositive", ""))
    visits = recording.visit_list_failed_by(pattern_id=pattern.pk, false_positive=choice)
    page = Paginator(visits, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "contextquery/pattern_visits.html",
        {
            "pattern": pattern,
            "page_obj": page,
            "false_positive": choice,
            "query": query.urlencode(),
            "false_positives": marks.pattern_false_positive_count(pattern=pattern),
        },
    )


@staff_required
@require_GET
def visit_list(request):
    """``/visits/``: visits across runs, latest ended first (running ones last),
    filtered with the API's ``VisitFilter`` (status, category, pattern, false
    positive, workflow, node, end time), paginated."""
    visits = recording.with_false_positive(
        Visit.objects.select_related("run").defer("output", "input", "final_text", "registration", "completion")
    ).order_by(F("ended_at").desc(nulls_last=True), "-id")
    visit_filter = VisitFilter(request.GET or None, queryset=visits)
    found = visit_filter.qs if not visit_filter.is_bound or visit_filter.is_valid() else visits.none()
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    pattern = None
    if visit_filter.is_bound and visit_filter.is_valid() and visit_filter.form.cleaned_data.get("patternId"):
        pattern = HermesErrorPattern.objects.filter(pk=visit_filter.form.cleaned_data["patternId"]).first()
    return render(
        request,
        "contextquery/visit_list.html",
        {
            "filter": visit_filter,
            "page_obj": page,
            "query": query.urlencode(),
            "statuses": VisitStatus.choices,
            "categories": visit_filter.filters["category"].extra["choices"],
            "pattern": pattern,
        },
    )


__all__ = [
    "pattern_matched_visits",
    "run_detail",
    "run_list",
    "run_live",
    "shown_text",
    "visit_detail",
    "visit_false_positive",
    "visit_missed_failure",
    "visit_list",
    "visit_live",
    "visit_output_raw",
]
