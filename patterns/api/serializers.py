"""Serializers of the error-pattern API (SPEC §3.4): camelCase fields, strict
JSON types, unknown keys refused. The model's rules run once, in
``patterns.changes``, which every writer goes through."""

from rest_framework import serializers

from patterns.models import HermesErrorPattern, PatternChange
from project.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictModelSerializer,
    StrictSerializer,
)


class PatternSerializer(StrictModelSerializer):
    """One error pattern. ``key``, ``isBuiltIn``, ``hitCount``, ``lastHitAt``,
    ``createdAt`` and ``updatedAt`` are read-only (SPEC §3.1); types are
    checked here, the model's rules by ``patterns.changes``."""

    name = StrictCharField(max_length=100, allow_blank=True, trim_whitespace=False)
    pattern = StrictCharField(max_length=500, allow_blank=True, trim_whitespace=False)
    enabled = StrictBooleanField(required=False)
    description = StrictCharField(required=False, allow_blank=True, trim_whitespace=False)
    retryable = StrictBooleanField(required=False)
    priority = StrictIntegerField(required=False, min_value=-(2**31), max_value=2**31 - 1)
    scope = serializers.ChoiceField(
        choices=["error", "anywhere"],
        required=False,
        help_text="error (default): matches only where the reply is an error (SPEC §3.3); anywhere: wherever it occurs.",
    )
    isBuiltIn = serializers.BooleanField(source="is_built_in", read_only=True)
    hitCount = serializers.IntegerField(source="hit_count", read_only=True)
    lastHitAt = serializers.DateTimeField(source="last_hit_at", read_only=True, allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    class Meta:
        model = HermesErrorPattern
        fields = [
            "id",
            "key",
            "name",
            "pattern",
            "enabled",
            "isBuiltIn",
            "description",
            "category",
            "retryable",
            "priority",
            "scope",
            "hitCount",
            "lastHitAt",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = ["id", "key"]


class PatternChangeSerializer(serializers.ModelSerializer):
    """One history row: who (``actorLabel``), via, action, before, after, when."""

    actorLabel = serializers.CharField(source="actor_label")
    createdAt = serializers.DateTimeField(source="created_at")
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)

    class Meta:
        model = PatternChange
        fields = ["id", "action", "actorLabel", "via", "before", "after", "createdAt"]
        read_only_fields = fields


class PatternDetailSerializer(PatternSerializer):
    """A pattern with its history, newest change first (``GET /{id}``)."""

    history = serializers.SerializerMethodField()

    class Meta(PatternSerializer.Meta):
        fields = PatternSerializer.Meta.fields + ["history"]

    def get_history(self, obj) -> list[dict]:
        rows = PatternChange.objects.filter(pattern_ref=obj.pk).order_by("-created_at", "-id")
        return PatternChangeSerializer(rows, many=True).data


class DetectRequestSerializer(StrictSerializer):
    """``POST /detect`` body: ``{text}``, a string (a blank one is an error, ``matchedBy: "blank"``)."""

    text = StrictCharField(allow_blank=True, trim_whitespace=False)


class DetectMatchSerializer(serializers.Serializer):
    """One enabled pattern that matches the text."""

    id = serializers.IntegerField()
    key = serializers.CharField(allow_null=True)
    name = serializers.CharField()
    category = serializers.CharField()
    retryable = serializers.BooleanField()
    span = serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2)


class DetectResultSerializer(serializers.Serializer):
    """``POST /detect`` answer; ``span`` is ``[start, end]`` in the text's offsets.
    ``matchedBy`` is ``pattern``, ``model`` (no pattern matched; the detection
    model's score reached its threshold, SPEC §3.3a) or ``blank`` (a blank text
    is an error, category ``incomplete``, with no pattern), null when the text
    is no error."""

    isError = serializers.BooleanField()
    matchedBy = serializers.ChoiceField(
        choices=["pattern", "model", "blank"], allow_null=True, help_text="Which signal decided; null when no error."
    )
    matchedPatternId = serializers.IntegerField(allow_null=True)
    matchedPatternKey = serializers.CharField(allow_null=True)
    matchedPatternName = serializers.CharField(allow_null=True)
    category = serializers.CharField(allow_null=True)
    retryable = serializers.BooleanField(allow_null=True)
    span = serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2, allow_null=True)
    modelScore = serializers.FloatField(allow_null=True, help_text="the detection model's probability (SPEC §3.3a)")
    matches = DetectMatchSerializer(many=True, help_text="Every enabled pattern that matches, in (priority, id) order.")


class ResetResultSerializer(serializers.Serializer):
    """``POST /reset`` answer: how many custom patterns were deleted and
    built-ins restored or re-inserted."""

    deleted = serializers.IntegerField()
    restored = serializers.IntegerField()
    inserted = serializers.IntegerField()
