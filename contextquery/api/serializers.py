"""Serializers of the recording API (SPEC §4.3): request bodies checked for
shape and type (422 naming the field), responses in camelCase. The rules live
in ``contextquery.ingest``."""

from urllib.parse import quote

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contextquery import liveness
from contextquery.api.internal_serializers import PathGraphSerializer
from contextquery.canvas import GraphSerializer
from contextquery.judgement import COMPLETION_STATUSES
from contextquery.models import ContextRead, LogType, RunMode, Visit, VisitLog, VisitStatus, WorkflowRun
from contextquery.recording import FINISH_STATUSES
from patterns.models import JudgedReply
from project.serializers import StrictCharField, StrictSerializer, choice_field

#: The most log entries one batch may carry.
MAX_LOGS_PER_BATCH = 1000


# --------------------------------------------------------------------------- requests


class RunCreateSerializer(StrictSerializer):
    """``POST /api/runs``."""

    runId = serializers.CharField(required=False, allow_null=True, max_length=64)
    workflowId = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    workflowName = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    mode = choice_field(RunMode.values, default=RunMode.DAG)
    graph = GraphSerializer(
        help_text="The canvas: {nodes: [{id, type, name, failStrategy}], edges: [{source, target}]}."
    )


class VisitRegisterSerializer(StrictSerializer):
    """``POST /api/runs/{runId}/visits``. Send ``fromVisitUuids`` (a list, ``[]``
    for a root) or ``fromVisitUuid``; send neither (or null) to let the server
    derive the parents (SPEC §4.2)."""

    visitUuid = serializers.UUIDField(required=False, allow_null=True)
    nodeId = serializers.CharField(max_length=200)
    nodeType = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=100)
    nodeName = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=200)
    fromVisitUuids = serializers.ListField(
        child=serializers.UUIDField(), required=False, allow_null=True, allow_empty=True, max_length=1000
    )
    fromVisitUuid = serializers.UUIDField(required=False, allow_null=True)
    input = serializers.JSONField(required=False, allow_null=True)
    tools = serializers.ListField(
        child=StrictCharField(max_length=64),
        required=False,
        allow_null=True,
        allow_empty=True,
        max_length=100,
        help_text="Names of the enabled tool bindings the node may call (SPEC §7.1); absent or null: none.",
    )

    def validate(self, attrs):
        many, one = attrs.get("fromVisitUuids"), attrs.get("fromVisitUuid")
        if many is not None and one is not None and [str(u) for u in many] != [str(one)]:
            raise serializers.ValidationError(
                {"fromVisitUuid": [_("Send either fromVisitUuids or fromVisitUuid, not two different parent lists.")]}
            )
        return attrs

    def parents(self):
        """The parent uuids sent (a list), or None to derive them."""
        many, one = self.validated_data.get("fromVisitUuids"), self.validated_data.get("fromVisitUuid")
        if many is not None:
            return [str(u) for u in many]
        if one is not None:
            return [str(one)]
        return None


class LogEntrySerializer(StrictSerializer):
    """One log entry ``{seq?, type, timestamp?, message?, detail?}`` (SPEC §4.1)."""

    seq = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2_000_000_000)
    type = choice_field(LogType.values)
    timestamp = serializers.DateTimeField(required=False, allow_null=True)
    message = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    detail = serializers.JSONField(required=False, allow_null=True)


class LogsAppendSerializer(StrictSerializer):
    """``POST …/logs``: ``{logs: [entry, …]}``, kept in order."""

    logs = LogEntrySerializer(many=True, allow_empty=True, max_length=MAX_LOGS_PER_BATCH)


class AgentResultSerializer(StrictSerializer):
    """The agent's structured signals (SPEC §4.4)."""

    failed = serializers.BooleanField(required=False, allow_null=True)
    failureReason = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    error = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    completed = serializers.BooleanField(required=False, allow_null=True)
    turnExitReason = serializers.CharField(required=False, allow_null=True, allow_blank=True)


class VisitCompleteSerializer(StrictSerializer):
    """``POST …/complete``."""

    status = choice_field(COMPLETION_STATUSES)
    output = serializers.JSONField(
        required=False, allow_null=True, help_text="The output envelope {status, message, data}."
    )
    finalText = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    error = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    agentResult = AgentResultSerializer(required=False, allow_null=True)


class RunFinishSerializer(StrictSerializer):
    """``POST /api/runs/{runId}/finish``."""

    status = choice_field(FINISH_STATUSES)


# --------------------------------------------------------------------------- responses


class RunSerializer(serializers.ModelSerializer):
    runId = serializers.CharField(source="run_id")
    workflowId = serializers.CharField(source="workflow_id")
    workflowName = serializers.CharField(source="workflow_name")
    createdBy = serializers.SerializerMethodField()
    startedAt = serializers.DateTimeField(source="started_at")
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)
    visitCount = serializers.SerializerMethodField()
    failedVisitCount = serializers.SerializerMethodField()
    durationSeconds = serializers.SerializerMethodField()
    lastSeenAt = serializers.SerializerMethodField()
    stale = serializers.SerializerMethodField()

    class Meta:
        model = WorkflowRun
        fields = [
            "runId", "workflowId", "workflowName", "mode", "status", "graph",
            "createdBy", "startedAt", "finishedAt", "durationSeconds", "visitCount", "failedVisitCount",
            "lastSeenAt", "stale",
        ]  # fmt: skip

    def get_failedVisitCount(self, run) -> int:
        count = getattr(run, "failure_count", None)
        return run.visits.filter(status=VisitStatus.FAILED).count() if count is None else count

    def get_durationSeconds(self, run) -> float | None:
        """Seconds from start to finish; null while the run is RUNNING."""
        if run.finished_at is None:
            return None
        return round((run.finished_at - run.started_at).total_seconds(), 3)

    def get_createdBy(self, run) -> str | None:
        return run.created_by.get_username() if run.created_by_id else None

    @extend_schema_field(serializers.DateTimeField())
    def get_lastSeenAt(self, run):
        """The latest sign of life of any of its visits, else its start (SPEC §8)."""
        return serializers.DateTimeField().to_representation(liveness.run_liveness(run=run).last_seen_at)

    def get_stale(self, run) -> bool:
        """RUNNING with no sign of life for HERMES_STALE_RUN_MINUTES and no tool call waiting for a person."""
        return liveness.run_liveness(run=run).stale

    def get_visitCount(self, run) -> int:
        count = getattr(run, "visit_count", None)
        return run.visits.count() if count is None else count


class MatchedPatternSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="Null when the pattern was deleted since.")
    key = serializers.CharField(allow_null=True)
    name = serializers.CharField()
    pattern = serializers.CharField(required=False)


class VisitSerializer(serializers.ModelSerializer):
    visitUuid = serializers.UUIDField(source="visit_uuid")
    runId = serializers.CharField(source="run.run_id")
    nodeId = serializers.CharField(source="node_id")
    nodeType = serializers.CharField(source="node_type")
    nodeName = serializers.CharField(source="node_name")
    iterSeq = serializers.IntegerField(source="iter_seq")
    sortOrder = serializers.IntegerField(source="sort_order")
    fromVisitUuids = serializers.ListField(source="parent_uuids", child=serializers.CharField())
    finalText = serializers.CharField(source="final_text", allow_null=True)
    failureReason = serializers.CharField(source="failure_reason")
    failureCategory = serializers.CharField(source="failure_category")
    runAction = serializers.CharField(source="run_action")
    matchedPattern = serializers.SerializerMethodField()
    falsePositive = serializers.SerializerMethodField()
    logCount = serializers.IntegerField(source="log_count", help_text="Logs stored for the visit.")
    queryCount = serializers.IntegerField(source="query_count")
    tools = serializers.ListField(child=serializers.CharField(), help_text="The business tools the node was given.")
    toolCallCount = serializers.IntegerField(source="tool_call_count")
    startedAt = serializers.DateTimeField(source="started_at")
    endedAt = serializers.DateTimeField(source="ended_at", allow_null=True)
    lastSeenAt = serializers.DateTimeField(
        source="last_seen_at", help_text="The visit's last sign of life (written at most every 10 s)."
    )

    class Meta:
        model = Visit
        fields = [
            "visitUuid", "runId", "nodeId", "nodeType", "nodeName", "iterSeq", "sortOrder",
            "fromVisitUuids", "status", "input", "output", "finalText", "failureReason",
            "failureCategory", "retryable", "runAction", "matchedPattern", "falsePositive",
            "logCount", "queryCount", "tools", "toolCallCount", "startedAt", "endedAt", "lastSeenAt",
        ]  # fmt: skip

    @staticmethod
    def _matched(visit) -> dict | None:
        if not (visit.matched_pattern_id or visit.matched_pattern_name):
            return None
        return {
            "id": visit.matched_pattern_id,
            "key": visit.matched_pattern_key or None,
            "name": visit.matched_pattern_name,
            "pattern": visit.matched_pattern_text,
        }

    @extend_schema_field(MatchedPatternSerializer(allow_null=True))
    def get_matchedPattern(self, visit):
        return self._matched(visit)

    def get_falsePositive(self, visit) -> bool:
        marked = getattr(visit, "false_positive", None)
        if marked is None:
            marked = JudgedReply.objects.filter(subject=visit.visit_uuid, mark=JudgedReply.Mark.FALSE_POSITIVE).exists()
        return marked


class ContextQuerySerializer(serializers.Serializer):
    """Exactly what the bridge's ``/run`` body takes as ``context_query`` (snake_case, SPEC §4.3)."""

    base_url = serializers.CharField()
    token = serializers.CharField()
    run_id = serializers.CharField()
    visit_uuid = serializers.CharField()
    expires_at = serializers.CharField()


class VisitRegisteredSerializer(VisitSerializer):
    contextQuery = serializers.SerializerMethodField()

    class Meta(VisitSerializer.Meta):
        fields = VisitSerializer.Meta.fields + ["contextQuery"]

    @extend_schema_field(ContextQuerySerializer(allow_null=True))
    def get_contextQuery(self, visit):
        return self.context.get("context_query")


class VisitLogSerializer(serializers.ModelSerializer):
    detail = serializers.JSONField(allow_null=True)

    class Meta:
        model = VisitLog
        fields = ["seq", "type", "timestamp", "message", "detail"]


class ContextReadSerializer(serializers.ModelSerializer):
    nodeId = serializers.CharField(source="node_id")
    visitUuid = serializers.CharField(source="target_visit_uuid")
    iterSeq = serializers.IntegerField(source="iter_seq", allow_null=True)
    statusCode = serializers.IntegerField(source="status_code")
    bytesReturned = serializers.IntegerField(source="bytes_returned")
    durationMs = serializers.FloatField(source="duration_ms")
    createdAt = serializers.DateTimeField(source="created_at")

    class Meta:
        model = ContextRead
        fields = ["endpoint", "nodeId", "visitUuid", "field", "kind", "iterSeq", "statusCode",
                  "bytesReturned", "durationMs", "createdAt"]  # fmt: skip


class VisitDetailSerializer(VisitSerializer):
    """One visit with its first 100 logs (``logCount`` says how many there are;
    ``logsUrl`` pages through all of them), predecessor paths and the reads its LLM made."""

    logs = serializers.SerializerMethodField()
    logsUrl = serializers.SerializerMethodField()
    paths = serializers.SerializerMethodField()
    reads = serializers.SerializerMethodField()

    class Meta(VisitSerializer.Meta):
        fields = VisitSerializer.Meta.fields + ["logs", "logsUrl", "paths", "reads"]

    @extend_schema_field(VisitLogSerializer(many=True))
    def get_logs(self, visit):
        return VisitLogSerializer(self.context["detail"]["logs"], many=True).data

    def get_logsUrl(self, visit) -> str:
        return f"/api/runs/{quote(visit.run.run_id, safe='')}/visits/{visit.visit_uuid}/logs"

    @extend_schema_field(PathGraphSerializer)
    def get_paths(self, visit):
        return self.context["detail"]["paths"].as_dict()

    @extend_schema_field(ContextReadSerializer(many=True))
    def get_reads(self, visit):
        return ContextReadSerializer(self.context["detail"]["reads"], many=True).data


class LogsAppendedSerializer(serializers.Serializer):
    visitUuid = serializers.CharField()
    added = serializers.IntegerField(help_text="Entries stored by this batch.")
    skipped = serializers.IntegerField(help_text="Entries whose seq was stored already.")
    lastSeq = serializers.IntegerField(help_text="The highest seq of the visit.")


class HeartbeatSerializer(serializers.Serializer):
    visitUuid = serializers.CharField()
    status = serializers.ChoiceField(choices=VisitStatus.choices)


class VerdictSerializer(serializers.Serializer):
    """The effective status decided on completion (SPEC §4.4)."""

    visitUuid = serializers.CharField()
    effectiveStatus = serializers.ChoiceField(choices=VisitStatus.choices)
    failureReason = serializers.CharField(allow_null=True)
    matchedPattern = MatchedPatternSerializer(allow_null=True)
    category = serializers.CharField(allow_null=True)
    retryable = serializers.BooleanField(allow_null=True)
    runAction = serializers.ChoiceField(choices=["abort", "continue"])


class RunFinishedSerializer(RunSerializer):
    cancelledVisits = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = RunSerializer.Meta.fields + ["cancelledVisits"]

    def get_cancelledVisits(self, run) -> int:
        return self.context.get("cancelled", 0)


class MissedFailureRequestSerializer(StrictSerializer):
    """``POST …/visits/{visitUuid}/missed-failure`` body: an optional ``note`` and the
    ``category`` ops name (empty: ``other``) (SPEC §3.3a)."""

    note = StrictCharField(required=False, allow_blank=True, default="")
    category = StrictCharField(required=False, allow_blank=True, default="")


class ReplyMarkSerializer(serializers.Serializer):
    """A judged reply's mark: ``mark`` is ``missed_failure``, ``false_positive`` or null."""

    visitUuid = serializers.UUIDField(source="subject")
    mark = serializers.CharField(allow_null=True)
    note = serializers.CharField(source="mark_note")
    category = serializers.CharField(allow_null=True)
    modelScore = serializers.FloatField(source="model_score", allow_null=True)
    markedBy = serializers.CharField(allow_null=True)
    markedAt = serializers.DateTimeField(source="marked_at", allow_null=True)

    def to_representation(self, row):
        data = super().to_representation(row)
        data["mark"] = row.mark or None
        data["category"] = row.category or None
        data["markedBy"] = row.marked_by.get_username() if row.marked_by_id else None
        return data
