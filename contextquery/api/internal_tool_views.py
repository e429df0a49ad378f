"""The internal tool-gateway endpoints ``POST /internal/tools/{list,call,status}`` (SPEC §7.2).

Built on :class:`contextquery.api.internal_views.ContextQueryView`: the same
header token, client check, order of checks, envelope, expiry slide and one
audit row per query as the context endpoints (SPEC §4.5). The budget differs:
``call`` counts against ``MAX_TOOL_CALLS_PER_VISIT`` (default 20); ``list``
and ``status`` count against none, and ``status`` answers about one call at
most once a second (429 with Retry-After). Thin adapters over
:mod:`contextquery.tool_gateway`.
"""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view

from contextquery import tool_gateway
from contextquery.api import tool_serializers as bodies
from contextquery.api.internal_views import SECURITY, ContextQueryView

_RULES = (
    "Header X-Context-Token only; answered only to clients in ALLOWED_CLIENTS. Checks in order: "
    "503 disabled, 403 client address, 401 token, 400 JSON, 422 fields, 403 runId, 429 budget, "
    "404 not found. Every authenticated query is audited and slides the token's expiry."
)


def _documented(endpoint, *, summary, description, request, response, examples):
    """Class decorator: the OpenAPI operation of one internal tool endpoint."""
    return extend_schema_view(
        post=extend_schema(
            operation_id=f"internal_tools_{endpoint}",
            tags=["internal tools"],
            summary=summary,
            description=description + " " + _RULES,
            request=request,
            responses={200: response},
            auth=SECURITY,
            examples=[OpenApiExample(name, value=value, request_only=True) for name, value in examples.items()],
        )
    )


class _UnbudgetedView(ContextQueryView):
    """``list`` and ``status`` count against no budget (SPEC §7.2)."""

    # With no budget UPDATE to open it, a transaction would start with a read
    # and SQLite could refuse its later write at once; each statement commits alone.
    atomic = False
    spends_query_budget = False

    def budget_take(self, reader) -> bool:
        return True


@_documented(
    "list",
    summary="The business tools of the token's visit",
    description="[{name, description, inputSchema, kind, approval}]: the tools the engine gave the node at "
    "registration that are still enabled. Counts against no budget.",
    request=bodies.ToolListQuerySerializer,
    response=bodies.ToolListAnswerSerializer,
    examples={"Request": {"runId": "abc12345"}},
)
class ToolListView(_UnbudgetedView):
    endpoint = "tools/list"
    serializer_class = bodies.ToolListQuerySerializer
    error_statuses = ("400", "401", "403", "413", "422", "503")

    def answer(self, reader, data):
        return {"tools": tool_gateway.visit_tools_listing(visit_id=reader.visit_id)}


@_documented(
    "call",
    summary="Call one of the visit's business tools",
    description="A tool not among the visit's is 404; arguments that fail its inputSchema are 422 with the "
    "validator's messages. Approval none: executed now, answered SUCCEEDED or FAILED (the business service's "
    "4xx/5xx, a timeout or a redirect is a FAILED call, envelope 200). Approval required: stored as "
    "PENDING_APPROVAL and answered at once. A repeated idempotencyKey with the same arguments answers the "
    "same call (other arguments: 409). Counts against MAX_TOOL_CALLS_PER_VISIT (429 when spent).",
    request=bodies.ToolCallQuerySerializer,
    response=bodies.ToolCallAnswerSerializer,
    examples={"Request": {"runId": "abc12345", "name": "order_lookup", "arguments": {"orderId": "A-1001"}}},
)
class ToolCallView(ContextQueryView):
    endpoint = "tools/call"
    atomic = False  # the call may wait on a business service: no transaction (and no lock) held meanwhile
    spends_query_budget = False  # its own budget, MAX_TOOL_CALLS_PER_VISIT
    serializer_class = bodies.ToolCallQuerySerializer
    error_statuses = ("400", "401", "403", "404", "409", "413", "422", "429", "503")

    def budget_take(self, reader) -> bool:
        return tool_gateway.toolcall_budget_take(visit_id=reader.visit_id)

    def budget_refuse(self):
        return tool_gateway.toolcall_budget_refuse()

    def answer(self, reader, data):
        call = tool_gateway.toolcall_request(
            visit_id=reader.visit_id,
            name=data["name"],
            arguments=data["arguments"],
            idempotency_key=data["idempotencyKey"],
        )
        return tool_gateway.toolcall_answer(call=call, max_bytes=data["maxBytes"])


@_documented(
    "status",
    summary="Where one of the visit's tool calls stands",
    description="The call as it is now (a visit sees only its own calls: another's is 404). Counts against no "
    "budget, but answers about one call at most once a second (429 with Retry-After).",
    request=bodies.ToolStatusQuerySerializer,
    response=bodies.ToolCallAnswerSerializer,
    examples={"Request": {"runId": "abc12345", "callId": 17}},
)
class ToolStatusView(_UnbudgetedView):
    endpoint = "tools/status"
    serializer_class = bodies.ToolStatusQuerySerializer
    error_statuses = ("400", "401", "403", "404", "413", "422", "429", "503")

    def answer(self, reader, data):
        call = tool_gateway.toolcall_for_visit(visit_id=reader.visit_id, call_id=data["callId"])
        tool_gateway.toolcall_status_read(call=call)
        return tool_gateway.toolcall_answer(call=call, max_bytes=data["maxBytes"])
