"""Project-level views: health check and JSON handlers for unknown API URLs."""

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET
from django.views.defaults import page_not_found, server_error

from project.api import envelope, is_api_path, json_error


@require_GET
def healthz(request):
    """``GET /healthz`` → 200 ``{"status":"ok","database":"ok"}``, 503 when the
    database is unreachable (SPEC §1). No auth, no envelope."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:
        return JsonResponse({"status": "error", "database": "unavailable"}, status=503)
    return JsonResponse({"status": "ok", "database": "ok"})


def handler404(request, exception=None):
    """404 in the envelope for API paths, Django's page otherwise."""
    if is_api_path(request.path):
        return json_error(404, f"No endpoint matches {request.path}.")
    return page_not_found(request, exception)


def handler500(request):
    """500 in the envelope for API paths (a real server fault), the page otherwise."""
    if is_api_path(request.path):
        return json_error(500, "Internal server error.")
    return server_error(request)


__all__ = ["envelope", "handler404", "handler500", "healthz"]
