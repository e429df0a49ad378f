"""The engine-facing recording API, ``/api/runs`` (SPEC §4.3).

Thin adapters: a request serializer checks the body's shape, a function of
``contextquery.recording`` or ``contextquery.judgement`` applies the rule, a response serializer writes the
answer. Errors are domain exceptions mapped by ``project.api.exception_handler``.
"""

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.response import Response

from contextquery import judgement, liveness, recording
from contextquery.api import serializers as s
from contextquery.filters import LogFilter, RunFilter, VisitFilter
from contextquery.models import Visit, VisitLog, WorkflowRun
from patterns import marks
from project import serving
from project.errors import NotFound

RUN_ID = OpenApiParameter("run_id", OpenApiTypes.STR, OpenApiParameter.PATH, description="The run's runId.")
VISIT_UUID = OpenApiParameter(
    "visit_uuid", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The visit's visitUuid."
)


class RecordingPermission(permissions.BasePermission):
    """Reading: an engine client (``record_run``, its own runs) or a reader of
    all runs (``read_all_runs`` or staff); writing: ``record_run`` (SPEC §4.3).
    Ownership of a run is checked by ``recording.run_get_for_reader`` and
    ``recording.run_get_for_writer``."""

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if request.method in permissions.SAFE_METHODS:
            self.message = _(
                "Reading runs needs an engine client (contextquery.record_run, its own runs) or the "
                "contextquery.read_all_runs permission."
            )
            return recording.run_can_read(user=user)
        self.message = _("Recording runs needs the contextquery.record_run permission.")
        return recording.run_can_record(user=user)


class RecordingView(generics.GenericAPIView):
    permission_classes = [permissions.IsAuthenticated, RecordingPermission]
    error_statuses = ("400", "401", "403", "404", "409", "413", "422")

    def body(self, serializer_class):
        """The request body validated by ``serializer_class`` (422 naming the field)."""
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer

    def run_for_reading(self):
        return recording.run_get_for_reader(run_id=self.kwargs["run_id"], user=self.request.user)

    def run_for_writing(self):
        return recording.run_get_for_writer(run_id=self.kwargs["run_id"], user=self.request.user)

    def visit(self, run):
        return recording.visit_get(run=run, visit_uuid=self.kwargs["visit_uuid"])


class RunListCreateView(RecordingView):
    """``GET /api/runs`` (paginated, filtered) and ``POST /api/runs``."""

    schema_tag = "Runs"

    queryset = WorkflowRun.objects.none()
    serializer_class = s.RunSerializer
    filterset_class = RunFilter
    # 404: a page past the last one; 400/413: a create body that is not JSON or too large.
    error_statuses = ("400", "401", "403", "404", "413", "422")

    def get_queryset(self):
        return recording.run_list(user=self.request.user)

    @extend_schema(operation_id="runs_list", summary="List runs", responses=s.RunSerializer(many=True))
    def get(self, request):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        page = liveness.runs_attach_liveness(runs=page)  # stale and lastSeenAt: one query per page
        return self.get_paginated_response(s.RunSerializer(page, many=True).data)

    @extend_schema(
        operation_id="runs_create",
        summary="Create a run with its canvas graph",
        description="201 for a new run; 200 with the stored run for an equal repeat of an engine-chosen runId.",
        request=s.RunCreateSerializer,
        responses={201: s.RunSerializer, 200: s.RunSerializer},
        filters=False,
    )
    def post(self, request):
        body = self.body(s.RunCreateSerializer).validated_data
        run, created = recording.run_create(
            user=request.user,
            graph=body["graph"],
            run_id=body.get("runId"),
            workflow_id=body["workflowId"],
            workflow_name=body["workflowName"],
            mode=body["mode"],
        )
        return Response(s.RunSerializer(run).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class RunDetailView(RecordingView):
    """``GET /api/runs/{runId}``."""

    schema_tag = "Runs"

    serializer_class = s.RunSerializer
    error_statuses = ("401", "403", "404")

    @extend_schema(operation_id="runs_retrieve", summary="One run", parameters=[RUN_ID], responses=s.RunSerializer)
    def get(self, request, run_id):
        return Response(s.RunSerializer(self.run_for_reading()).data)


class RunFinishView(RecordingView):
    """``POST /api/runs/{runId}/finish``."""

    schema_tag = "Runs"

    serializer_class = s.RunFinishSerializer

    @extend_schema(
        operation_id="runs_finish",
        summary="Finish a run",
        description="Visits still RUNNING become CANCELLED; the run's live tokens are revoked. "
        "A repeat with the same status answers 200; another status 409.",
        parameters=[RUN_ID],
        request=s.RunFinishSerializer,
        responses=s.RunFinishedSerializer,
    )
    def post(self, request, run_id):
        run = self.run_for_writing()
        body = self.body(s.RunFinishSerializer).validated_data
        run, cancelled = recording.run_finish(run=run, status=body["status"])
        return Response(s.RunFinishedSerializer(run, context={"cancelled": cancelled}).data)


class VisitListRegisterView(RecordingView):
    """``GET /api/runs/{runId}/visits`` and ``POST`` (register a visit)."""

    schema_tag = "Visits"

    queryset = Visit.objects.none()
    serializer_class = s.VisitSerializer
    filterset_class = VisitFilter

    def get_queryset(self):
        return recording.visit_list(run=self.run_for_reading())

    @extend_schema(
        operation_id="runs_visits_list",
        summary="A run's visits, by sortOrder",
        parameters=[RUN_ID],
        responses=s.VisitSerializer(many=True),
    )
    def get(self, request, run_id):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.VisitSerializer(page, many=True).data)

    @extend_schema(
        operation_id="runs_visits_register",
        summary="Register a visit",
        description="201 with the visit and its contextQuery (null when context query is disabled); "
        "200 for an equal repeat of an engine-chosen visitUuid, with a fresh token.",
        parameters=[RUN_ID],
        request=s.VisitRegisterSerializer,
        responses={201: s.VisitRegisteredSerializer, 200: s.VisitRegisteredSerializer},
        filters=False,
    )
    def post(self, request, run_id):
        run = self.run_for_writing()
        serializer = self.body(s.VisitRegisterSerializer)
        body = serializer.validated_data
        result = recording.visit_register(
            run=run,
            node_id=body["nodeId"],
            visit_uuid=body.get("visitUuid"),
            node_type=body.get("nodeType"),
            node_name=body.get("nodeName"),
            from_visit_uuids=serializer.parents(),
            input=body.get("input"),
            base_url=serving.base_url(request.META),
            tools=body.get("tools"),
        )
        data = s.VisitRegisteredSerializer(result.visit, context={"context_query": result.context_query}).data
        return Response(data, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class VisitDetailView(RecordingView):
    """``GET /api/runs/{runId}/visits/{visitUuid}``: the visit, its logs, paths and reads."""

    schema_tag = "Visits"

    serializer_class = s.VisitDetailSerializer
    error_statuses = ("401", "403", "404")

    @extend_schema(
        operation_id="runs_visits_retrieve",
        summary="One visit with its logs, predecessor paths and the reads its LLM made",
        parameters=[RUN_ID, VISIT_UUID],
        responses=s.VisitDetailSerializer,
    )
    def get(self, request, run_id, visit_uuid):
        visit = self.visit(self.run_for_reading())
        detail = recording.visit_detail(visit=visit)
        return Response(s.VisitDetailSerializer(visit, context={"detail": detail}).data)


class VisitLogsView(RecordingView):
    """``GET …/visits/{visitUuid}/logs`` (paginated) and ``POST`` (append a batch)."""

    schema_tag = "Logs"

    serializer_class = s.LogsAppendSerializer
    error_statuses = ("400", "401", "403", "404", "413", "422", "429")
    queryset = VisitLog.objects.none()
    filterset_class = LogFilter

    def get_queryset(self):
        return recording.log_list(visit=self.visit(self.run_for_reading()))

    @extend_schema(
        operation_id="runs_visits_logs_list",
        summary="A visit's logs, by seq",
        parameters=[RUN_ID, VISIT_UUID],
        responses=s.VisitLogSerializer(many=True),
    )
    def get(self, request, run_id, visit_uuid):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.VisitLogSerializer(page, many=True).data)

    @extend_schema(
        operation_id="runs_visits_logs_append",
        summary="Append a batch of logs",
        description="Order kept; an entry whose seq is stored already is skipped. Accepted after completion "
        "and after the run finished. A TODO_UPDATE's detail is the whole todo list [{text, status}] (or that "
        "list as JSON text); 429 when the visit would hold more than MAX_LOGS_PER_VISIT logs.",
        parameters=[RUN_ID, VISIT_UUID],
        request=s.LogsAppendSerializer,
        responses=s.LogsAppendedSerializer,
        filters=False,
    )
    def post(self, request, run_id, visit_uuid):
        visit = self.visit(self.run_for_writing())
        logs = self.body(s.LogsAppendSerializer).validated_data["logs"]
        result = recording.logs_append(visit=visit, logs=[dict(entry) for entry in logs])
        return Response({"visitUuid": str(visit.visit_uuid), **result})


class VisitHeartbeatView(RecordingView):
    """``POST …/visits/{visitUuid}/heartbeat``."""

    schema_tag = "Visits"

    serializer_class = s.HeartbeatSerializer

    @extend_schema(
        operation_id="runs_visits_heartbeat",
        summary="The visit is alive (slides its tokens' expiry)",
        parameters=[RUN_ID, VISIT_UUID],
        request=None,
        responses=s.HeartbeatSerializer,
    )
    def post(self, request, run_id, visit_uuid):
        visit = recording.visit_heartbeat(visit=self.visit(self.run_for_writing()))
        return Response({"visitUuid": str(visit.visit_uuid), "status": visit.status})


class VisitCompleteView(RecordingView):
    """``POST …/visits/{visitUuid}/complete`` → the verdict of SPEC §4.4."""

    schema_tag = "Visits"

    serializer_class = s.VisitCompleteSerializer

    @extend_schema(
        operation_id="runs_visits_complete",
        summary="Complete a visit; the server decides its effective status",
        description="An identical repeat answers the stored verdict; a different one 409.",
        parameters=[RUN_ID, VISIT_UUID],
        request=s.VisitCompleteSerializer,
        responses=s.VerdictSerializer,
    )
    def post(self, request, run_id, visit_uuid):
        visit = self.visit(self.run_for_writing())
        body = self.body(s.VisitCompleteSerializer).validated_data
        agent_result = body.get("agentResult")
        verdict = judgement.visit_complete(
            visit=visit,
            status=body["status"],
            output=body.get("output"),
            final_text=body.get("finalText"),
            error=body.get("error"),
            agent_result=dict(agent_result) if agent_result is not None else None,
        )
        return Response(verdict)


class VisitMissedFailureView(RecordingView):
    """``POST …/visits/{visitUuid}/missed-failure`` marks a reply that passed as a failure nothing
    caught; ``DELETE`` takes the mark back (SPEC §3.3a). Staff only (403 otherwise)."""

    schema_tag = "Visits"

    # Staff mark (patterns.marks checks); reading the run is checked by run_get_for_reader.
    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.MissedFailureRequestSerializer
    error_statuses = ("400", "401", "403", "404", "409", "413", "422")

    def _visit(self):
        return self.visit(recording.run_get_for_reader(run_id=self.kwargs["run_id"], user=self.request.user))

    @extend_schema(
        operation_id="runs_visits_missed_failure_mark",
        summary="Mark a visit that passed as a missed failure (training data for the detection model)",
        parameters=[RUN_ID, VISIT_UUID],
        request=s.MissedFailureRequestSerializer,
        responses=s.ReplyMarkSerializer,
    )
    def post(self, request, run_id, visit_uuid):
        visit = self._visit()
        body = self.body(s.MissedFailureRequestSerializer).validated_data
        row = marks.reply_mark_missed_failure(
            subject=visit.visit_uuid, user=request.user, note=body["note"], category=body["category"]
        )
        return Response(s.ReplyMarkSerializer(row).data)

    @extend_schema(
        operation_id="runs_visits_missed_failure_unmark",
        summary="Take back a visit's mark",
        parameters=[RUN_ID, VISIT_UUID],
        request=None,
        responses=s.ReplyMarkSerializer,
    )
    def delete(self, request, run_id, visit_uuid):
        visit = self._visit()
        row = marks.reply_unmark_false_positive(subject=visit.visit_uuid, user=request.user)
        if row is None:
            raise NotFound(_("No judged reply of visit %(visit)s is recorded.") % {"visit": visit.visit_uuid})
        return Response(s.ReplyMarkSerializer(row).data)
