"""The internal context endpoints ``POST /internal/context/{path,output,meta}`` (SPEC §4.5).

Thin: the order of checks, the budget, the audit and the answers live in
:mod:`contextquery.queries` (the hot path, issue 14). These classes are what
that module calls back for (:class:`contextquery.queries.Endpoint`) and what
drf-spectacular documents. Their ``dispatch`` skips DRF's request wrapping,
content negotiation and rendering: the answer is already envelope bytes.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework.views import APIView

from contextquery import queries
from contextquery.api import internal_serializers as bodies
from contextquery.client.wire import TOKEN_HEADER
from project.api import envelope_bytes
from project.errors import Forbidden

#: The token header as Django names it in ``request.META``.
_TOKEN_META_KEY = "HTTP_" + TOKEN_HEADER.upper().replace("-", "_")
#: The OpenAPI security scheme of the internal endpoints.
SECURITY = [{"ContextToken": []}]


class ContextQueryView(APIView):
    """Base of the internal endpoints: one POST answered by :func:`queries.context_query`.

    Subclasses set ``endpoint`` (the audit's name) and ``serializer_class``
    and implement :meth:`answer` ``(reader, data) -> dict``; they may replace
    the budget (:meth:`budget_take`, :meth:`budget_refuse`) and add checks of
    step 6 (:meth:`check_ownership`).
    """

    authentication_classes: list = []  # the header token only: no session, so no CSRF either
    permission_classes: list = []
    throttle_classes: list = []
    endpoint = ""
    serializer_class: type = bodies.ContextQuerySerializer
    #: The budget, the answer and the audit commit together (False where the answer calls out).
    atomic = True
    #: :meth:`budget_take` is the visit's context-query budget (PostgreSQL counts it with the token's read).
    spends_query_budget = True

    def dispatch(self, request, *args, **kwargs):
        self.request = request
        if request.method != "POST":
            message = f'Method "{request.method}" not allowed.'
            response = HttpResponse(envelope_bytes(405, message), status=405, content_type="application/json")
            response["Allow"] = "POST"
            return response
        return self.post(request)

    def post(self, request, *args, **kwargs):
        answer = queries.context_query(
            endpoint=self,
            raw_token=request.META.get(_TOKEN_META_KEY),
            client=request.META.get("REMOTE_ADDR"),
            body=request.body,
        )
        response = HttpResponse(answer.body, status=answer.status, content_type="application/json")
        for name, value in answer.headers.items():
            response[name] = value
        return response

    def fields(self, body: dict) -> dict:
        """The validated fields: :func:`queries.fields_fast` when it is sure, else the serializer."""
        fast = queries.fields_fast(self.endpoint, body) if self.endpoint in queries.BODY_KEYS else None
        if fast is not None:
            return fast
        serializer = self.serializer_class(data=body)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def budget_take(self, reader) -> bool:
        """Count this query against the visit's budget (before the body is read);
        False when it is spent. The context queries share ``MAX_QUERIES_PER_VISIT``."""
        return queries.query_budget_take(visit_id=reader.visit_id)

    def budget_refuse(self) -> Exception:
        """The 429 raised at step 7 when :meth:`budget_take` said no."""
        return queries.query_budget_refuse()

    def check_ownership(self, reader, data) -> None:
        """Step 6 beyond runId (``path`` refuses a foreign visitUuid)."""

    def target_hint(self, data) -> queries.TargetHint | None:
        """The one row :meth:`answer` reads for ``data`` (read with the token on PostgreSQL); None: no such row."""
        return None

    def answer(self, reader, data) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


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

    def check_ownership(self, reader, data):
        if data.get("visitUuid") is not None and data["visitUuid"] != reader.visit_uuid:
            raise Forbidden(_("visitUuid is not the visit of this context token."))

    def answer(self, reader, data):
        return queries.path_query(reader=reader, encoded=True)


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

    def target_hint(self, data):
        return queries.output_hint(node_id=data["nodeId"], iter_seq=data["iterSeq"])

    def answer(self, reader, data):
        return queries.output_query(
            reader=reader,
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

    def target_hint(self, data):
        return queries.meta_hint(
            node_id=data["nodeId"], visit_uuid=data["visitUuid"], kind=data["kind"], iter_seq=data["iterSeq"]
        )

    def answer(self, reader, data):
        return queries.meta_query(
            reader=reader,
            node_id=data["nodeId"],
            visit_uuid=data["visitUuid"],
            kind=data["kind"],
            iter_seq=data["iterSeq"],
            max_bytes=data["maxBytes"],
            encoded=True,
        )
