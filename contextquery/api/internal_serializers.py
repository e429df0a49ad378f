"""Request and response bodies of the internal context endpoints (SPEC §4.5).

Request fields are strict about JSON types (a number is not a string, a
boolean is not a number), and an explicit ``null`` for an optional field means
"not given". Response serializers exist for the OpenAPI schema only.
"""

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from contextquery.client.wire import MAX_MAX_BYTES, META_KINDS, MIN_MAX_BYTES
from contextquery.queries import MAX_FIELD_PARTS
from contextquery.tokens import config
from project.serializers import StrictCharField, StrictIntegerField, StrictSerializer

MAX_ITER_SEQ = 2**31 - 1


class StrictUUIDField(serializers.UUIDField):
    """A UUID given as a string (hyphenated or 32 hex characters)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return str(super().to_internal_value(data))


def _optional(field_class, **kwargs):
    return field_class(required=False, allow_null=True, default=None, **kwargs)


class ContextQuerySerializer(StrictSerializer):
    """Fields every internal query carries."""

    runId = StrictCharField(max_length=64, help_text="The run of the token; another run's id is refused (403).")


class PathQuerySerializer(ContextQuerySerializer):
    """``POST /internal/context/path`` body."""

    visitUuid = _optional(StrictUUIDField, help_text="The token's visit (optional); another visit is refused (403).")


class _ByteBudgetMixin(StrictSerializer):
    iterSeq = _optional(
        StrictIntegerField,
        min_value=1,
        max_value=MAX_ITER_SEQ,
        help_text="Which visit of the node (1 = first); null or absent = its latest visit among the predecessors.",
    )
    maxBytes = _optional(
        StrictIntegerField,
        min_value=MIN_MAX_BYTES,
        max_value=MAX_MAX_BYTES,
        help_text="Bound on the UTF-8 size of the compact JSON of the answer's data (default MAX_BYTES, 8192).",
    )

    def validate_maxBytes(self, value):
        return config()["MAX_BYTES"] if value is None else value


def _field_parts_bounded(value):
    if value is not None and value.count(".") + 1 > MAX_FIELD_PARTS:
        raise serializers.ValidationError(
            _("A field may have at most %(limit)d dotted parts; this one has %(count)d.")
            % {"limit": MAX_FIELD_PARTS, "count": value.count(".") + 1}
        )


class OutputQuerySerializer(ContextQuerySerializer, _ByteBudgetMixin):
    """``POST /internal/context/output`` body."""

    nodeId = StrictCharField(max_length=200, help_text="The predecessor node to read.")
    field = _optional(
        StrictCharField,
        max_length=500,
        validators=[_field_parts_bounded],
        help_text="A key of data; a dotted path (at most 64 parts) reaches into nested objects and list indexes.",
    )


class MetaQuerySerializer(ContextQuerySerializer, _ByteBudgetMixin):
    """``POST /internal/context/meta`` body; ``visitUuid`` wins over ``nodeId``."""

    visitUuid = _optional(StrictUUIDField, help_text="The predecessor visit to read; wins over nodeId.")
    nodeId = _optional(StrictCharField, max_length=200, help_text="The predecessor node to read (when no visitUuid).")
    kind = _optional(
        StrictCharField,
        max_length=16,
        help_text="THINKING | TOOL_CALLS | TODO | ALL (default ALL; case-insensitive).",
    )

    def validate_kind(self, value):
        if value is None:
            return "ALL"
        kind = value.strip().upper()
        if kind not in META_KINDS:
            raise serializers.ValidationError(
                _("Unknown kind %(kind)r; use one of %(kinds)s.") % {"kind": value, "kinds": ", ".join(META_KINDS)}
            )
        return kind

    def validate(self, attrs):
        if attrs.get("visitUuid") is None and attrs.get("nodeId") is None:
            raise serializers.ValidationError({"nodeId": [_("Give nodeId or visitUuid.")]})
        return attrs


# --- Response bodies (schema only).


class PathSerializer(serializers.Serializer):
    sequence = serializers.ListField(child=serializers.CharField())
    visitUuids = serializers.ListField(child=serializers.CharField())
    hasBacktrack = serializers.BooleanField()
    truncated = serializers.BooleanField()


class PathGraphSerializer(serializers.Serializer):
    visitUuids = serializers.ListField(child=serializers.CharField())
    nodeIds = serializers.ListField(child=serializers.CharField())
    paths = PathSerializer(many=True)
    backtrackEdgeKeys = serializers.ListField(child=serializers.CharField())
    truncated = serializers.BooleanField()


class _ReadSerializer(serializers.Serializer):
    nodeId = serializers.CharField()
    iterSeq = serializers.IntegerField()
    visitUuid = serializers.CharField()
    truncated = serializers.BooleanField()
    originalBytes = serializers.IntegerField()


class OutputAnswerSerializer(_ReadSerializer):
    status = serializers.IntegerField(allow_null=True, help_text="The output envelope's status; null while RUNNING.")
    message = serializers.CharField(allow_null=True)
    data = serializers.JSONField(allow_null=True)
    requestedField = serializers.CharField(allow_null=True)


class MetaAnswerSerializer(_ReadSerializer):
    thinking = serializers.CharField(required=False)
    toolCalls = serializers.ListField(child=serializers.DictField(), required=False)
    todoList = serializers.JSONField(required=False, allow_null=True)
    logs = serializers.ListField(child=serializers.DictField(), required=False, help_text="kind ALL only.")


class TokenRevokeSerializer(StrictSerializer):
    """``POST …/tokens/revoke`` body."""

    token = StrictCharField(max_length=200, trim_whitespace=True)


class TokenRevokedSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="The first 4 characters and ***.")
    revoked = serializers.BooleanField()
    revokedAt = serializers.DateTimeField()
