"""Serializers of the recording API (SPEC §4.3): request bodies checked for
shape and type (422 naming the field), responses in camelCase. The rules live
in ``contextquery.ingest``."""

from drf_spectacular.utils import extend_schema_field
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from contextquery.api.internal_serializers import PathGraphSerializer
from contextquery.models import ContextRead, LogType, RunMode, Visit, VisitLog, VisitStatus, WorkflowRun
from contextquery.ingest import COMPLETION_STATUSES, FINISH_STATUSES

#: The most log entries one batch may carry.
MAX_LOGS_PER_BATCH = 1000


def choice(values, **kwargs) -> serializers.ChoiceField:
    """A ChoiceField whose refusal lists the allowed values (SPEC §2)."""
    values = [str(v) for v in values]
    # DRF fills {input}; the allowed values are filled in here, lazily, so the
    # sentence is translated in the language of each request.
    message = format_lazy(_('"{{input}}" is not allowed; use one of {allowed}.'), allowed=", ".join(values))
    return serializers.ChoiceField(choices=[(v, v) for v in values], error_messages={"invalid_choice": message}, **kwargs)


# --------------------------------------------------------------------------- requests


class RunCreateSerializer(serializers.Serializer):
    """``POST /api/runs``."""

    runId = serializers.CharField(required=False, allow_null=True, max_length=64)  # noqa: N815
    workflowId = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")  # noqa: N815
    workflowName = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")  # noqa: N815
    mode = choice(RunMode.values, default=RunMode.DAG)
    graph = serializers.JSONField(
        help_text="The canvas: {nodes: [{id, type, name, failStrategy: abort|skip}], edges: [{source, target}]}."
    )


class VisitRegisterSerializer(serializers.Serializer):
    """``POST /api/runs/{runId}/visits``. Send ``fromVisitUuids`` (a list, ``[]``
    for a root) or ``fromVisitUuid``; send neither (or null) to let the server
    derive the parents (SPEC §4.2)."""

    visitUuid = serializers.UUIDField(required=False, allow_null=True)  # noqa: N815
    nodeId = serializers.CharField(max_length=200)  # noqa: N815
    nodeType = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=100)  # noqa: N815
    nodeName = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=200)  # noqa: N815
    fromVisitUuids = serializers.ListField(  # noqa: N815
        child=serializers.UUIDField(), required=False, allow_null=True, allow_empty=True, max_length=1000
    )
    fromVisitUuid = serializers.UUIDField(required=False, allow_null=True)  # noqa: N815
    input = serializers.JSONField(required=False, allow_null=True)

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


class LogEntrySerializer(serializers.Serializer):
    """One log entry ``{seq?, type, timestamp?, message?, detail?}`` (SPEC §4.1)."""

    seq = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2_000_000_000)
    type = choice(LogType.values)
    timestamp = serializers.DateTimeField(required=False, allow_null=True)
    message = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    detail = serializers.JSONField(required=False, allow_null=True)


class LogsAppendSerializer(serializers.Serializer):
    """``POST …/logs``: ``{logs: [entry, …]}``, kept in order."""

    logs = LogEntrySerializer(many=True, allow_empty=True, max_length=MAX_LOGS_PER_BATCH)


class AgentResultSerializer(serializers.Serializer):
    """The agent's structured signals (SPEC §4.4)."""

    failed = serializers.BooleanField(required=False, allow_null=True)
    failureReason = serializers.CharField(required=False, allow_null=True, allow_blank=True)  # noqa: N815
    error = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    completed = serializers.BooleanField(required=False, allow_null=True)
    turnExitReason = serializers.CharField(required=False, allow_null=True, allow_blank=True)  # noqa: N815


class VisitCompleteSerializer(serializers.Serializer):
    """``POST …/complete``."""

    status = choice(COMPLETION_STATUSES)
    output = serializers.JSONField(
        required=False, allow_null=True, help_text="The output envelope {status, message, data}."
    )
    finalText = serializers.CharField(  # noqa: N815
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False
    )
    error = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    agentResult = AgentResultSerializer(required=False, allow_null=True)  # noqa: N815


class RunFinishSerializer(serializers.Serializer):
    """``POST /api/runs/{runId}/finish``."""

    status = choice(FINISH_STATUSES)


# --------------------------------------------------------------------------- responses


class RunSerializer(serializers.ModelSerializer):
    runId = serializers.CharField(source="run_id")  # noqa: N815
    workflowId = serializers.CharField(source="workflow_id")  # noqa: N815
    workflowName = serializers.CharField(source="workflow_name")  # noqa: N815
    createdBy = serializers.SerializerMethodField()  # noqa: N815
    startedAt = serializers.DateTimeField(source="started_at")  # noqa: N815
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)  # noqa: N815
    visitCount = serializers.SerializerMethodField()  # noqa: N815

    class Meta:
        model = WorkflowRun
        fields = [
            "runId", "workflowId", "workflowName", "mode", "status", "graph",
            "createdBy", "startedAt", "finishedAt", "visitCount",
        ]  # fmt: skip

    def get_createdBy(self, run) -> str | None:  # noqa: N802
        return run.created_by.get_username() if run.created_by_id else None

    def get_visitCount(self, run) -> int:  # noqa: N802
        count = getattr(run, "visit_count", None)
        return run.visits.count() if count is None else count


class MatchedPatternSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="Null when the pattern was deleted since.")
    key = serializers.CharField(allow_null=True)
    name = serializers.CharField()
    pattern = serializers.CharField(required=False)


class VisitSerializer(serializers.ModelSerializer):
    visitUuid = serializers.UUIDField(source="visit_uuid")  # noqa: N815
    runId = serializers.CharField(source="run.run_id")  # noqa: N815
    nodeId = serializers.CharField(source="node_id")  # noqa: N815
    nodeType = serializers.CharField(source="node_type")  # noqa: N815
    nodeName = serializers.CharField(source="node_name")  # noqa: N815
    iterSeq = serializers.IntegerField(source="iter_seq")  # noqa: N815
    sortOrder = serializers.IntegerField(source="sort_order")  # noqa: N815
    fromVisitUuids = serializers.ListField(source="parent_uuids", child=serializers.CharField())  # noqa: N815
    finalText = serializers.CharField(source="final_text", allow_null=True)  # noqa: N815
    failureReason = serializers.CharField(source="failure_reason")  # noqa: N815
    failureCategory = serializers.CharField(source="failure_category")  # noqa: N815
    runAction = serializers.CharField(source="run_action")  # noqa: N815
    matchedPattern = serializers.SerializerMethodField()  # noqa: N815
    falsePositive = serializers.SerializerMethodField()  # noqa: N815
    logCount = serializers.IntegerField(source="log_counter")  # noqa: N815
    queryCount = serializers.IntegerField(source="query_count")  # noqa: N815
    startedAt = serializers.DateTimeField(source="started_at")  # noqa: N815
    endedAt = serializers.DateTimeField(source="ended_at", allow_null=True)  # noqa: N815

    class Meta:
        model = Visit
        fields = [
            "visitUuid", "runId", "nodeId", "nodeType", "nodeName", "iterSeq", "sortOrder",
            "fromVisitUuids", "status", "input", "output", "finalText", "failureReason",
            "failureCategory", "retryable", "runAction", "matchedPattern", "falsePositive",
            "logCount", "queryCount", "startedAt", "endedAt",
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
    def get_matchedPattern(self, visit):  # noqa: N802
        return self._matched(visit)

    def get_falsePositive(self, visit) -> bool:  # noqa: N802
        return visit.false_positive_at is not None


class ContextQuerySerializer(serializers.Serializer):
    """Exactly what the bridge's ``/run`` body takes as ``context_query`` (snake_case, SPEC §4.3)."""

    base_url = serializers.CharField()
    token = serializers.CharField()
    run_id = serializers.CharField()
    visit_uuid = serializers.CharField()
    expires_at = serializers.CharField()


class VisitRegisteredSerializer(VisitSerializer):
    contextQuery = serializers.SerializerMethodField()  # noqa: N815

    class Meta(VisitSerializer.Meta):
        fields = VisitSerializer.Meta.fields + ["contextQuery"]

    @extend_schema_field(ContextQuerySerializer(allow_null=True))
    def get_contextQuery(self, visit):  # noqa: N802
        return self.context.get("context_query")


class VisitLogSerializer(serializers.ModelSerializer):
    detail = serializers.JSONField(allow_null=True)

    class Meta:
        model = VisitLog
        fields = ["seq", "type", "timestamp", "message", "detail"]


class ContextReadSerializer(serializers.ModelSerializer):
    nodeId = serializers.CharField(source="node_id")  # noqa: N815
    visitUuid = serializers.CharField(source="target_visit_uuid")  # noqa: N815
    iterSeq = serializers.IntegerField(source="iter_seq", allow_null=True)  # noqa: N815
    statusCode = serializers.IntegerField(source="status_code")  # noqa: N815
    bytesReturned = serializers.IntegerField(source="bytes_returned")  # noqa: N815
    durationMs = serializers.FloatField(source="duration_ms")  # noqa: N815
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815

    class Meta:
        model = ContextRead
        fields = ["endpoint", "nodeId", "visitUuid", "field", "kind", "iterSeq", "statusCode",
                  "bytesReturned", "durationMs", "createdAt"]  # fmt: skip


class VisitDetailSerializer(VisitSerializer):
    """One visit with its logs, predecessor paths and the reads its LLM made."""

    logs = serializers.SerializerMethodField()
    paths = serializers.SerializerMethodField()
    reads = serializers.SerializerMethodField()

    class Meta(VisitSerializer.Meta):
        fields = VisitSerializer.Meta.fields + ["logs", "paths", "reads"]

    @extend_schema_field(VisitLogSerializer(many=True))
    def get_logs(self, visit):
        return VisitLogSerializer(self.context["detail"]["logs"], many=True).data

    @extend_schema_field(PathGraphSerializer)
    def get_paths(self, visit):
        return self.context["detail"]["paths"].as_dict()

    @extend_schema_field(ContextReadSerializer(many=True))
    def get_reads(self, visit):
        return ContextReadSerializer(self.context["detail"]["reads"], many=True).data


class LogsAppendedSerializer(serializers.Serializer):
    visitUuid = serializers.CharField()  # noqa: N815
    added = serializers.IntegerField(help_text="Entries stored by this batch.")
    skipped = serializers.IntegerField(help_text="Entries whose seq was stored already.")
    lastSeq = serializers.IntegerField(help_text="The highest seq of the visit.")  # noqa: N815


class HeartbeatSerializer(serializers.Serializer):
    visitUuid = serializers.CharField()  # noqa: N815
    status = serializers.ChoiceField(choices=VisitStatus.choices)


class VerdictSerializer(serializers.Serializer):
    """The effective status decided on completion (SPEC §4.4)."""

    visitUuid = serializers.CharField()  # noqa: N815
    effectiveStatus = serializers.ChoiceField(choices=VisitStatus.choices)  # noqa: N815
    failureReason = serializers.CharField(allow_null=True)  # noqa: N815
    matchedPattern = MatchedPatternSerializer(allow_null=True)  # noqa: N815
    category = serializers.CharField(allow_null=True)
    retryable = serializers.BooleanField(allow_null=True)
    runAction = serializers.ChoiceField(choices=["abort", "continue"])  # noqa: N815


class RunFinishedSerializer(RunSerializer):
    cancelledVisits = serializers.SerializerMethodField()  # noqa: N815

    class Meta(RunSerializer.Meta):
        fields = RunSerializer.Meta.fields + ["cancelledVisits"]

    def get_cancelledVisits(self, run) -> int:  # noqa: N802
        return self.context.get("cancelled", 0)
