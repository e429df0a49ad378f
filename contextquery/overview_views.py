"""The ops pages at the site's root (SPEC §8): the overview (``/``) and the
Prometheus scrape (``/metrics``). Thin adapters over
``contextquery.overview`` and ``contextquery.metrics``."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from contextquery import metrics, overview
from project.networks import address_allowed
from project.pages import staff_page

staff_required = staff_page(gettext_lazy("The overview is for staff users."))


@staff_required
@require_GET
def overview_page(request):
    """``/?window=24h|7d``: runs by status, failed visits over time, the patterns,
    nodes and workflows that fail most, pending approvals; each number a link."""
    asked = request.GET.get("window")
    window = overview.window_get(key=asked)
    window_error = None
    if asked is not None and asked not in overview.WINDOWS:
        # Said on the page rather than silently showing another window than the one asked for.
        window_error = _("window: “%(asked)s” is not one of %(allowed)s; showing the last 24 hours.") % {
            "asked": asked,
            "allowed": ", ".join(overview.WINDOWS),
        }
    return render(
        request,
        "overview.html",
        {
            "window": window,
            "window_error": window_error,
            "windows": list(overview.WINDOWS),
            "runs": overview.overview_runs(window=window),
            "failures": overview.overview_failures(window=window),
            "patterns": overview.overview_patterns(window=window),
            "nodes": overview.overview_nodes(window=window),
            "workflows": overview.overview_workflows(window=window),
            "approvals": overview.overview_approvals(),
            "stale_minutes": settings.HERMES_STALE_RUN_MINUTES,
        },
    )


@require_GET
def metrics_scrape(request):
    """``GET /metrics``: the Prometheus text format, only to clients in
    ``HERMES_METRICS_ALLOWED_CLIENTS`` (others 403). No login: Prometheus
    scrapes from the instance's own host."""
    if not address_allowed(request.META.get("REMOTE_ADDR"), settings.HERMES_METRICS_ALLOWED_NETWORKS):
        return HttpResponse(
            "/metrics is answered only to clients in HERMES_METRICS_ALLOWED_CLIENTS.\n",
            status=403,
            content_type="text/plain; charset=utf-8",
        )
    body, content_type = metrics.metrics_text(accept=request.headers.get("Accept", ""))
    return HttpResponse(body, content_type=content_type)
