"""The internal context endpoints ``POST /internal/context/{path,output,meta}`` (SPEC §4.5).

Thin adapters over ``contextquery.queries``. The base class holds the rules
every endpoint shares, in the SPEC's order of checks:

1. disabled → 503
2. client address outside ``ALLOWED_CLIENTS`` → 403
3. missing, unknown, expired or revoked ``X-Context-Token`` → 401
4. malformed JSON or invalid UTF-8 → 400 (the body is parsed only now)
5. missing or invalid fields → 422
6. ``runId`` not the token's run (or a foreign ``visitUuid`` on path) → 403
7. budget spent → 429
8. not found or not a predecessor → 404

From step 3 on, every request counts against the visit's budget (taken
before the body is read, so a malformed request costs one query too), slides
the token's expiry and writes one ``ContextRead`` audit row, whatever its
answer.
"""

from __future__ import annotations

import ipaddress
import time

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.response import Response
from rest_framework.views import APIView

from contextquery import queries, tokens
from contextquery.api import internal_serializers as bodies
from contextquery.client.wire import TOKEN_HEADER
from contextquery.models import ContextRead
from project.api import StrictJSONParser, parse_json_bytes
from project.errors import Forbidden, Invalid, Unavailable

#: The token header as Django names it in ``request.META``.
_TOKEN_META_KEY = "HTTP_" + TOKEN_HEADER.upper().replace("-", "_")
#: The OpenAPI security scheme of the internal endpoints.
SECURITY = [{"ContextToken": []}]


class FirstRendererNegotiation(BaseContentNegotiation):
    """Always answer JSON: the agent side sends no meaningful Accept header."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def client_allowed(address: str | None) -> bool:
    """Whether ``address`` (``REMOTE_ADDR``) is inside ``ALLOWED_NETWORKS`` (from ``ALLOWED_CLIENTS``)."""
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    cfg = settings.HERMES_CONTEXT_QUERY
    networks = cfg.get("ALLOWED_NETWORKS")
    if networks is None:  # a settings override that gave only ALLOWED_CLIENTS
        networks = [ipaddress.ip_network(item, strict=False) for item in cfg["ALLOWED_CLIENTS"]]
    return any(ip in network for network in networks)


def _trimmed(value, length: int) -> str:
    return value[:length] if isinstance(value, str) else ""


class ContextQueryView(APIView):
    """Base of the three endpoints: check order, budget, audit, expiry slide.

    Subclasses set ``endpoint`` and ``serializer_class`` and implement
    :meth:`answer` ``(token, body) -> dict``.
    """

    authentication_classes: list = []  # the header token only: no session, so no CSRF either
    permission_classes: list = []
    parser_classes = [StrictJSONParser]  # documented only: the raw body is parsed after authentication
    content_negotiation_class = FirstRendererNegotiation
    throttle_classes: list = []
    endpoint = ""
    serializer_class: type = bodies.ContextQuerySerializer

    def initial(self, request, *args, **kwargs):
        self._token = None
        self._body = None
        self._started = time.perf_counter()
        super().initial(request, *args, **kwargs)

    def post(self, request, *args, **kwargs):
        if not tokens.context_query_enabled():
            raise Unavailable("Context query is disabled on this server.")
        if not client_allowed(request.META.get("REMOTE_ADDR")):
            raise Forbidden("Context queries are answered only to clients in HERMES_CONTEXT_QUERY_ALLOWED_CLIENTS.")
        token = tokens.token_authenticate(raw=request.META.get(_TOKEN_META_KEY))
        self._token = token
        granted = self.budget_take(token)
        if tokens.token_touch_due(token):
            tokens.tokens_touch(visit=token.visit_id)
        raw = request.body
        body = parse_json_bytes(raw) if raw.strip() else {}
        if not isinstance(body, dict):
            raise Invalid(
                "The request body must be a JSON object.", errors={"nonFieldErrors": ["Must be a JSON object."]}
            )
        self._body = body
        serializer = self.serializer_class(data=body)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if data["runId"] != token.run.run_id:
            raise Forbidden("runId is not the run of this context token.")
        self.check_ownership(token, data)
        if not granted:
            raise self.budget_refuse()
        return Response(self.answer(token, data))

    def budget_take(self, token) -> bool:
        """Count this query against the visit's budget (before the body is read);
        False when it is spent. The context queries share ``MAX_QUERIES_PER_VISIT``."""
        return queries.query_budget_take(visit_id=token.visit_id)

    def budget_refuse(self) -> Exception:
        """The 429 raised at step 7 when :meth:`budget_take` said no."""
        return queries.query_budget_refuse()

    def check_ownership(self, token, data) -> None:
        """Step 6 beyond runId (``path`` refuses a foreign visitUuid)."""

    def answer(self, token, data) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def dispatch(self, request, *args, **kwargs):
        try:
            response = super().dispatch(request, *args, **kwargs)
        except Exception:
            # A server fault still leaves its audit row (SPEC §4.5: every
            # authenticated query is audited, whatever its answer).
            if getattr(self, "_token", None) is not None:
                self._audit(self._token, status_code=500, size=0)
            raise
        token = getattr(self, "_token", None)
        if token is not None:
            response.render()
            self._audit(token, status_code=response.status_code, size=len(response.content))
        return response

    def _audit(self, token, *, status_code: int, size: int) -> None:
        body = self._body if isinstance(self._body, dict) else {}
        iter_seq = body.get("iterSeq")
        target = body.get("visitUuid")
        ContextRead.objects.create(
            visit_id=token.visit_id,
            endpoint=self.endpoint,
            node_id=_trimmed(body.get("nodeId"), 200),
            target_visit_uuid=_trimmed(target, 64),
            field=_trimmed(body.get("field"), 500),
            kind=_trimmed(body.get("kind"), 16),
            iter_seq=iter_seq
            if isinstance(iter_seq, int) and not isinstance(iter_seq, bool) and abs(iter_seq) < 2**31
            else None,
            status_code=status_code,
            bytes_returned=size,
            duration_ms=round((time.perf_counter() - self._started) * 1000, 3),
            created_at=timezone.now(),
        )


_ERRORS = (400, 401, 403, 404, 413, 422, 429, 503)
_RULES = (
    "Header X-Context-Token only; answered only to clients in ALLOWED_CLIENTS. Checks in order: "
    "503 disabled, 403 client address, 401 token, 400 JSON, 422 fields, 403 runId, 429 budget "
    "(MAX_QUERIES_PER_VISIT per visit), 404 not a predecessor. Every authenticated query counts "
    "toward the budget, is audited and slides the token's expiry. An explicit null means 'not given'."
)


def _documented(endpoint, *, summary, description, request, response, examples):
    """Class decorator: the OpenAPI operation of one internal endpoint."""
    return extend_schema_view(
        post=extend_schema(
            operation_id=f"internal_context_{endpoint}",
            tags=["Internal: context query"],
            summary=summary,
            description=description + " " + _RULES,
            request=request,
            responses={200: response},
            auth=SECURITY,
            examples=[OpenApiExample(name, value=value, request_only=True) for name, value in examples.items()],
        )
    )


@_documented(
    "path",
    summary="Predecessor path graph of the token's visit",
    description="The §4.2 graph, bounded by MAX_PATHS and MAX_PATH_DEPTH. A visitUuid other than the token's is 403.",
    request=bodies.PathQuerySerializer,
    response=bodies.PathGraphSerializer,
    examples={"Request": {"runId": "abc12345", "visitUuid": "550e8400-e29b-41d4-a716-446655440000"}},
)
class PathQueryView(ContextQueryView):
    endpoint = "path"
    serializer_class = bodies.PathQuerySerializer
    error_statuses = _ERRORS

    def check_ownership(self, token, data):
        if data.get("visitUuid") is not None and data["visitUuid"] != str(token.visit.visit_uuid):
            raise Forbidden("visitUuid is not the visit of this context token.")

    def answer(self, token, data):
        return queries.path_query(token=token)


@_documented(
    "output",
    summary="A predecessor's output envelope, or one (dotted) field of its data",
    description="iterSeq null: the latest visit of the node among the predecessors. A missing field is 404 "
    "naming the available keys. data is cut to maxBytes (truncated, originalBytes); status is null while "
    "the predecessor is RUNNING.",
    request=bodies.OutputQuerySerializer,
    response=bodies.OutputAnswerSerializer,
    examples={
        "Whole data": {"runId": "abc12345", "nodeId": "B", "field": None, "iterSeq": None},
        "One field": {"runId": "abc12345", "nodeId": "B", "field": "result"},
    },
)
class OutputQueryView(ContextQueryView):
    endpoint = "output"
    serializer_class = bodies.OutputQuerySerializer
    error_statuses = _ERRORS

    def answer(self, token, data):
        return queries.output_query(
            token=token,
            node_id=data["nodeId"],
            field=data["field"],
            iter_seq=data["iterSeq"],
            max_bytes=data["maxBytes"],
        )


@_documented(
    "meta",
    summary="A predecessor's thinking, tool calls and todo list",
    description="visitUuid wins over nodeId; kind THINKING | TOOL_CALLS | TODO | ALL (default ALL, "
    "case-insensitive; logs with ALL only). The content is cut to maxBytes.",
    request=bodies.MetaQuerySerializer,
    response=bodies.MetaAnswerSerializer,
    examples={"Thinking": {"runId": "abc12345", "visitUuid": None, "nodeId": "B", "kind": "THINKING", "iterSeq": None}},
)
class MetaQueryView(ContextQueryView):
    endpoint = "meta"
    serializer_class = bodies.MetaQuerySerializer
    error_statuses = _ERRORS

    def answer(self, token, data):
        return queries.meta_query(
            token=token,
            node_id=data["nodeId"],
            visit_uuid=data["visitUuid"],
            kind=data["kind"],
            iter_seq=data["iterSeq"],
            max_bytes=data["maxBytes"],
        )
