"""Token routes of the recording API (SPEC §4.3, §4.5):

* ``POST /api/runs/{runId}/visits/{visitUuid}/tokens`` — issue another token
  (201 with the ``contextQuery`` object; 429 with Retry-After beyond
  ``MAX_TOKENS_PER_VISIT`` live; 409 for an ended visit; 503 when disabled).
* ``POST /api/runs/{runId}/visits/{visitUuid}/tokens/revoke`` ``{token}`` —
  revoke one token of the visit (frees its place).

Same permissions as the other recording writes: ``contextquery.record_run``,
and only the engine client that created the run (or a superuser).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from contextquery import tokens
from contextquery.api import internal_serializers as bodies
from contextquery.api.serializers import ContextQuerySerializer
from contextquery.api.views import RUN_ID, VISIT_UUID, RecordingView
from project import serving


class VisitTokenIssueView(RecordingView):
    """``POST …/visits/{visitUuid}/tokens``."""

    schema_tag = "Context tokens"

    serializer_class = ContextQuerySerializer
    error_statuses = ("401", "403", "404", "409", "429", "503")

    @extend_schema(
        operation_id="runs_visits_tokens_issue",
        summary="Issue another context token for a running visit",
        description="201 with the contextQuery object (snake_case keys, the bridge's context_query); "
        "the token is shown only here. 429 (Retry-After) when the visit already has MAX_TOKENS_PER_VISIT "
        "live tokens; 409 when the visit or run has ended; 503 when context query is disabled.",
        parameters=[RUN_ID, VISIT_UUID],
        request=None,
        responses={201: ContextQuerySerializer},
    )
    def post(self, request, run_id, visit_uuid):
        visit = self.visit(self.run_for_writing())
        issued = tokens.token_issue(visit=visit)
        payload = tokens.context_query_payload(issued=issued, visit=visit, base_url=serving.base_url(request.META))
        return Response(payload, status=status.HTTP_201_CREATED)


class VisitTokenRevokeView(RecordingView):
    """``POST …/visits/{visitUuid}/tokens/revoke`` ``{token}``."""

    schema_tag = "Context tokens"

    serializer_class = bodies.TokenRevokeSerializer
    error_statuses = ("400", "401", "403", "404", "413", "422")

    @extend_schema(
        operation_id="runs_visits_tokens_revoke",
        summary="Revoke one context token of the visit",
        description="Idempotent; the answer names the token by its first 4 characters only.",
        parameters=[RUN_ID, VISIT_UUID],
        request=bodies.TokenRevokeSerializer,
        responses={200: bodies.TokenRevokedSerializer},
    )
    def post(self, request, run_id, visit_uuid):
        visit = self.visit(self.run_for_writing())
        raw = self.body(bodies.TokenRevokeSerializer).validated_data["token"]
        token = tokens.token_revoke(visit=visit, raw=raw)
        return Response({"token": tokens.token_mask(raw), "revoked": True, "revokedAt": token.revoked_at})
