"""Bodies of the tool gateway (SPEC §7): the internal ``/internal/tools/…``
endpoints, ``/api/tool-bindings`` and ``/api/tool-calls``.

Request serializers are strict (unknown keys and wrong JSON types are 422);
the rules live in :mod:`contextquery.tool_gateway`, which every writer goes
through. Response serializers write camelCase and exist for the OpenAPI schema
too. No serializer ever writes a secret: a binding shows ``secretRef`` (the
secret's name) and ``secretSet`` (whether the server has a value for it).
"""

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contextquery import tool_gateway
from contextquery.api.internal_serializers import ContextQuerySerializer
from contextquery.client.wire import MAX_MAX_BYTES, MIN_MAX_BYTES
from contextquery.models import (
    ToolApproval,
    ToolBinding,
    ToolBindingChange,
    ToolCall,
    ToolCallStatus,
    ToolKind,
)
from project.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictModelSerializer,
    StrictSerializer,
    choice_field,
)

MAX_CALL_ID = 2**63 - 1


def _optional(field_class, **kwargs):
    return field_class(required=False, allow_null=True, default=None, **kwargs)


# --------------------------------------------------------------------------- internal requests


class ToolListQuerySerializer(ContextQuerySerializer):
    """``POST /internal/tools/list`` body."""


class _ResultBudgetMixin(StrictSerializer):
    maxBytes = _optional(
        StrictIntegerField,
        min_value=MIN_MAX_BYTES,
        max_value=MAX_MAX_BYTES,
        help_text="Bound on the UTF-8 size of the compact JSON of the result handed back (default MAX_BYTES, 8192).",
    )

    def validate_maxBytes(self, value):
        return settings.HERMES_CONTEXT_QUERY["MAX_BYTES"] if value is None else value


class ArgumentsField(serializers.JSONField):
    """A tool's arguments: a JSON object (its keys are checked by the binding's schema)."""

    default_error_messages = {"not_object": "Must be a JSON object of the tool's arguments."}

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.fail("not_object")
        return super().to_internal_value(data)


class ToolCallQuerySerializer(ContextQuerySerializer, _ResultBudgetMixin):
    """``POST /internal/tools/call`` body."""

    name = StrictCharField(max_length=64, help_text="The tool to call: one of the visit's (from list).")
    arguments = ArgumentsField(
        required=False, default=dict, help_text="The arguments, checked against the tool's inputSchema."
    )
    idempotencyKey = _optional(
        StrictCharField,
        max_length=tool_gateway.IDEMPOTENCY_KEY_MAX_CHARS,
        help_text="Optional, unique per visit: a repeat with the same key and arguments returns the same call "
        "(other arguments: 409).",
    )


class ToolStatusQuerySerializer(ContextQuerySerializer, _ResultBudgetMixin):
    """``POST /internal/tools/status`` body."""

    callId = StrictIntegerField(min_value=1, max_value=MAX_CALL_ID, help_text="A call this visit made.")


# --------------------------------------------------------------------------- internal answers


class AgentToolSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    inputSchema = serializers.DictField(help_text="The JSON Schema of the tool's arguments.")
    kind = serializers.ChoiceField(choices=ToolKind.choices)
    approval = serializers.ChoiceField(choices=ToolApproval.choices)


class ToolListAnswerSerializer(serializers.Serializer):
    tools = AgentToolSerializer(many=True)


class ToolCallAnswerSerializer(serializers.Serializer):
    """A call as the agent reads it; ``result`` is cut to ``maxBytes``."""

    callId = serializers.IntegerField()
    tool = serializers.CharField()
    status = serializers.ChoiceField(choices=ToolCallStatus.choices)
    result = serializers.JSONField(allow_null=True, help_text="The business service's answer (JSON), when it gave one.")
    httpStatus = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_null=True, help_text="Why the call failed or expired.")
    note = serializers.CharField(allow_null=True, help_text="The note of the person who decided.")
    message = serializers.CharField(help_text="One sentence on where the call stands.")
    truncated = serializers.BooleanField()
    originalBytes = serializers.IntegerField()


# --------------------------------------------------------------------------- /api/tool-bindings


class ToolBindingSerializer(StrictModelSerializer):
    """One tool binding (SPEC §7.1). Types are checked here, the rules (name,
    schema, allowed host, secret name, timeout) by ``contextquery.tool_gateway``.
    ``approval`` left out on create: ``required`` for a write, ``none`` for a read."""

    name = StrictCharField(max_length=64, help_text="The tool name the LLM sees: ^[a-z][a-z0-9_]{0,63}$.")
    description = StrictCharField(required=False, allow_blank=True, trim_whitespace=False)
    inputSchema = serializers.JSONField(
        source="input_schema", required=False, help_text="A JSON Schema of an object: the tool's arguments."
    )
    kind = choice_field(ToolKind.values, required=False)
    approval = choice_field(ToolApproval.values, required=False)
    endpoint = StrictCharField(max_length=500, help_text="http(s) URL the gateway POSTs the arguments to.")
    secretRef = StrictCharField(
        source="secret_ref",
        max_length=64,
        required=False,
        allow_blank=True,
        help_text="Name of the secret sent as Authorization: Bearer; its value is read from "
        "HERMES_TOOL_SECRET_<NAME> on the server and never shown.",
    )
    secretSet = serializers.SerializerMethodField(help_text="Whether the server has a value for the secret.")
    timeoutSeconds = StrictIntegerField(source="timeout_seconds", required=False, min_value=1, max_value=20)
    enabled = StrictBooleanField(required=False)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    class Meta:
        model = ToolBinding
        fields = [
            "id",
            "name",
            "description",
            "inputSchema",
            "kind",
            "approval",
            "endpoint",
            "secretRef",
            "secretSet",
            "timeoutSeconds",
            "enabled",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = ["id"]

    def get_secretSet(self, binding) -> bool:
        return tool_gateway.secret_is_set(binding.secret_ref)


class ToolBindingChangeSerializer(serializers.ModelSerializer):
    """One history row: who (``actorLabel``), via, action, before, after, when."""

    actorLabel = serializers.CharField(source="actor_label")
    createdAt = serializers.DateTimeField(source="created_at")
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)

    class Meta:
        model = ToolBindingChange
        fields = ["id", "action", "actorLabel", "via", "before", "after", "createdAt"]
        read_only_fields = fields


class ToolBindingDetailSerializer(ToolBindingSerializer):
    """A binding with its history, newest change first (``GET /{id}``)."""

    history = serializers.SerializerMethodField()

    class Meta(ToolBindingSerializer.Meta):
        fields = ToolBindingSerializer.Meta.fields + ["history"]

    @extend_schema_field(ToolBindingChangeSerializer(many=True))
    def get_history(self, binding):
        rows = ToolBindingChange.objects.filter(binding_ref=binding.pk).order_by("-created_at", "-id")
        return ToolBindingChangeSerializer(rows, many=True).data


# --------------------------------------------------------------------------- /api/tool-calls


class ToolCallSerializer(serializers.ModelSerializer):
    """One business tool call with its visit, run, decision and outcome (SPEC §7.1, §7.3)."""

    runId = serializers.CharField(source="visit.run.run_id")
    visitUuid = serializers.UUIDField(source="visit.visit_uuid")
    nodeId = serializers.CharField(source="visit.node_id")
    iterSeq = serializers.IntegerField(source="visit.iter_seq")
    tool = serializers.CharField(source="tool_name")
    bindingId = serializers.IntegerField(source="binding_id", allow_null=True)
    arguments = serializers.JSONField()
    idempotencyKey = serializers.CharField(source="idempotency_key")
    result = serializers.JSONField(allow_null=True)
    httpStatus = serializers.IntegerField(source="http_status", allow_null=True)
    decidedBy = serializers.SerializerMethodField(help_text="Who approved or rejected it (a username).")
    decidedAt = serializers.DateTimeField(source="decided_at", allow_null=True)
    requestedAt = serializers.DateTimeField(source="requested_at")
    expiresAt = serializers.SerializerMethodField()
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)
    durationMs = serializers.FloatField(source="duration_ms", allow_null=True)

    class Meta:
        model = ToolCall
        fields = [
            "id", "runId", "visitUuid", "nodeId", "iterSeq", "tool", "bindingId", "kind", "arguments",
            "idempotencyKey", "status", "result", "httpStatus", "error", "decidedBy", "decidedAt", "note",
            "requestedAt", "expiresAt", "finishedAt", "durationMs",
        ]  # fmt: skip
        read_only_fields = fields

    def get_decidedBy(self, call) -> str | None:
        return call.decided_by_label or None

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_expiresAt(self, call):
        expires = tool_gateway.toolcall_expires_at(call)
        return serializers.DateTimeField().to_representation(expires) if expires else None


class ToolCallRejectSerializer(StrictSerializer):
    """``POST /api/tool-calls/{id}/reject`` body."""

    note = StrictCharField(
        max_length=tool_gateway.NOTE_MAX_CHARS, help_text="Why the call is rejected; the agent reads it."
    )


class ToolCallApproveSerializer(StrictSerializer):
    """``POST /api/tool-calls/{id}/approve`` body (optional)."""

    note = StrictCharField(
        max_length=tool_gateway.NOTE_MAX_CHARS, required=False, allow_blank=True, default="", help_text="Optional."
    )
