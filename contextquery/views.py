"""The run inspection pages under /runs/ (SPEC §4.6): staff only, plain HTML
that works without JavaScript, every recorded text escaped by the templates.

* ``/runs/``: runs filtered with the API's ``RunFilter``, with visit and
  failure counts;
* ``/runs/<runId>/``: the graph picture above the visit timeline;
* ``/runs/<runId>/visits/<visitUuid>/``: one visit in full, with the
  false-positive form; ``…/output.json`` the whole output envelope;
* ``/runs/matched/<patternId>/``: the visits a pattern failed (its hits, or
  only its false positives), linked from the pattern page.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from contextquery import graph_layout, recording, tool_gateway
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
from patterns.models import HermesErrorPattern
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


staff_required = staff_page(gettext_lazy("The run pages are for staff users."))


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
    runs = recording.run_list().annotate(failure_count=Count("visits", filter=Q(visits__status=VisitStatus.FAILED)))
    run_filter = RunFilter(request.GET or None, queryset=runs)
    found = run_filter.qs if not run_filter.is_bound or run_filter.is_valid() else runs.none()
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
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
        },
    )


def _node_href(run: WorkflowRun):
    def href(node_id, visits):
        if len(visits) == 1:
            return reverse("contextquery:visit", args=[run.run_id, visits[0].visit_uuid])
        return f"{reverse('contextquery:run', args=[run.run_id])}?nodeId={node_id}#timeline"

    return href


@staff_required
@require_GET
def run_detail(request, run_id):
    """The graph picture above the visit timeline (filtered by node or status)."""
    run = _run_or_404(run_id)
    visits = list(
        recording.with_false_positive(Visit.objects.filter(run=run))
        .select_related("matched_pattern")
        .defer("output", "input", "final_text", "registration", "completion")
        .order_by("sort_order")
    )
    picture = graph_layout.graph_picture(
        graph=run.graph, visits=[visit_node_of(v) for v in visits], node_href=_node_href(run)
    )
    visit_filter = VisitFilter(request.GET or None, queryset=Visit.objects.filter(run=run))
    shown = visits
    if request.GET and visit_filter.is_valid():
        wanted = set(visit_filter.qs.values_list("pk", flat=True))
        shown = [v for v in visits if v.pk in wanted]
    by_uuid = {str(v.visit_uuid): v for v in visits}
    rows = [
        {"visit": v, "duration": duration_seconds(v), "parents": [by_uuid[p] for p in v.parent_uuids if p in by_uuid]}
        for v in shown
    ]
    return render(
        request,
        "contextquery/run_detail.html",
        {
            "run": run,
            "picture": picture,
            "rows": rows,
            "visit_filter": visit_filter,
            "visit_statuses": VisitStatus.choices,
            "node_ids": list(dict.fromkeys(v.node_id for v in visits)),
            "filtered": bool(request.GET),
            "failed_count": sum(1 for v in visits if v.status == VisitStatus.FAILED),
        },
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
        if log.type in (LogType.TOOL_CALL, LogType.TOOL_RESULT)
    ]


def _todo_list(logs) -> list[dict]:
    for log in reversed(logs):
        if log.type == LogType.TODO_UPDATE and isinstance(log.detail, list):
            return [item for item in log.detail if isinstance(item, dict)]
    return []


@staff_required
@require_GET
def visit_detail(request, run_id, visit_uuid):
    """One visit: input, output, reply, thinking, tool calls, todo list, logs,
    failure and its pattern, predecessor paths, reads and tokens."""
    run = _run_or_404(run_id)
    visit = _visit_or_404(run, visit_uuid)
    logs = list(visit.logs.order_by("seq"))
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
    tokens = [
        {"token": t, "prefix": t.hash_prefix, "state": t.state(now)} for t in visit.tokens.order_by("-issued_at", "-id")
    ]
    logs_shown = [
        {"log": log, "detail": shown_text(log.detail, as_json=not isinstance(log.detail, str), limit=LOG_DETAIL_CHARS)}
        for log in logs
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
            "thinking": [log for log in logs if log.type == LogType.THINKING],
            "tool_calls": _tool_calls(logs),
            "todo": _todo_list(logs),
            "logs": logs_shown,
            "graph": graph,
            "paths": paths,
            "reads": list(visit.reads.order_by("created_at", "id")),
            "tokens": tokens,
            "business_calls": business_calls,
            "judged": marks.reply_get(subject=visit.visit_uuid),
            "note_max": marks.NOTE_MAX_CHARS,
            "inline_chars": INLINE_CHARS,
            "admin_url": reverse("admin:contextquery_visit_change", args=[visit.pk]),
        },
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
    response["Content-Disposition"] = (
        f'attachment; filename="{run.run_id}-{visit.node_id if visit.node_id.isalnum() else "node"}'
        f'-{visit.iter_seq}-output.json"'
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


@staff_required
@require_POST
def visit_false_positive(request, run_id, visit_uuid):
    """Mark (``action=mark`` with a ``note``) or unmark a pattern's verdict as wrong."""
    run = _run_or_404(run_id)
    visit = _visit_or_404(run, visit_uuid)
    try:
        if request.POST.get("action") == "unmark":
            marks.reply_unmark_false_positive(subject=visit.visit_uuid, user=request.user)
            messages.success(request, _("The false-positive mark was removed."))
        else:
            marks.reply_mark_false_positive(
                subject=visit.visit_uuid, user=request.user, note=request.POST.get("note", "")
            )
            messages.success(
                request, _("Marked as a false positive of “%(name)s”.") % {"name": visit.matched_pattern_name}
            )
    except (Invalid, Conflict, Forbidden, NotFound) as error:
        if isinstance(error, Forbidden):
            raise PermissionDenied(error.message) from None
        texts = [t for group in (error.errors or {}).values() for t in group] or [error.message]
        for text in texts:
            messages.error(request, text)
    return redirect(reverse("contextquery:visit", args=[run.run_id, visit.visit_uuid]) + "#verdict")


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


__all__ = [
    "pattern_matched_visits",
    "run_detail",
    "run_list",
    "shown_text",
    "visit_detail",
    "visit_false_positive",
    "visit_output_raw",
]
