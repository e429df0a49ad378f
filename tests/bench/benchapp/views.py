"""Benchmark floors (issue 7): what the stack costs before any context work.

Routed only by the bench servers' URLs (``tests.bench.benchapp.urls``), so
they never exist in production:

* ``POST /internal/context/_floor`` — :class:`FloorQueryView`, the real
  :class:`ContextQueryView` base: client address, token, budget, expiry slide,
  body parse and ``runId`` check, audit row. Answers ``{}`` (in the envelope).
* ``POST /internal/context/_plain`` — :func:`plain_view`, a bare Django view
  answering ``{}``: the cost of the WSGI server, middleware and URL routing.
"""

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema

from contextquery.api import internal_serializers as bodies
from contextquery.api.internal_views import ContextQueryView


@extend_schema(exclude=True)
class FloorQueryView(ContextQueryView):
    """The authenticated floor: the base class's whole check order and audit, then ``{}``."""

    endpoint = "floor"
    serializer_class = bodies.ContextQuerySerializer

    def answer(self, reader, data) -> dict:
        return {}


@csrf_exempt
def plain_view(request):
    """The plain floor: a Django view answering ``{}``."""
    return JsonResponse({})
