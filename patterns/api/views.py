"""The error-pattern API, ``/api/hermes-error-patterns`` (SPEC §3.4).

A thin adapter: the serializer checks types and model rules, ``patterns.changes``
applies the change and keeps the history, ``project.api`` maps errors to the
envelope. Reading needs an authenticated user, writing a staff user.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from patterns import changes
from patterns.api.serializers import (
    DetectRequestSerializer,
    DetectResultSerializer,
    PatternDetailSerializer,
    PatternSerializer,
    ResetResultSerializer,
)
from patterns.detection import detect_json
from patterns.filters import PatternFilter
from patterns.models import HermesErrorPattern

#: Actions any authenticated user may call; everything else needs staff.
READ_ACTIONS = frozenset({"list", "retrieve", "detect"})


class ReadAuthenticatedWriteStaff(permissions.BasePermission):
    """Authenticated users read (and try ``detect``, which changes nothing);
    staff users write (SPEC §3.4)."""

    message = "Changing error patterns needs a staff user."

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        return getattr(view, "action", None) in READ_ACTIONS or user.is_staff


@extend_schema_view(
    list=extend_schema(summary="List error patterns"),
    create=extend_schema(summary="Create a custom pattern", responses={201: PatternSerializer}),
    retrieve=extend_schema(summary="One pattern with its history", responses={200: PatternDetailSerializer}),
    update=extend_schema(summary="Replace a pattern's editable fields"),
    partial_update=extend_schema(summary="Change some of a pattern's fields"),
    destroy=extend_schema(summary="Delete a custom pattern (built-in → 409)", responses={200: None}),
)
class PatternViewSet(viewsets.ModelViewSet):
    """``/api/hermes-error-patterns``: list, create, retrieve, edit, delete,
    toggle, copy, reset and detect (SPEC §3.4)."""

    schema_tag = "Error patterns"
    queryset = HermesErrorPattern.objects.all()
    serializer_class = PatternSerializer
    permission_classes = [ReadAuthenticatedWriteStaff]
    filterset_class = PatternFilter
    lookup_value_regex = r"\d+"

    def get_serializer_class(self):
        if self.action == "retrieve":
            return PatternDetailSerializer
        return super().get_serializer_class()

    def _who(self) -> dict:
        return {"actor": self.request.user, "via": "api"}

    def _answer(self, instance, status=200):
        return Response(PatternSerializer(instance, context=self.get_serializer_context()).data, status=status)

    def perform_create(self, serializer):
        serializer.instance = changes.pattern_create(values=dict(serializer.validated_data), **self._who())

    def perform_update(self, serializer):
        serializer.instance = changes.pattern_update(
            target=serializer.instance, values=dict(serializer.validated_data), **self._who()
        )

    def destroy(self, request, *args, **kwargs):
        changes.pattern_delete(target=self.get_object(), **self._who())
        return Response(None)

    @extend_schema(
        summary="Change some of a pattern's fields (same as PATCH)",
        request=PatternSerializer,
        responses={200: PatternSerializer},
    )
    @action(detail=True, methods=["post"], url_path="edit")
    def edit(self, request, *args, **kwargs):
        kwargs["partial"] = True
        return self.update(request, *args, **kwargs)

    @extend_schema(
        summary="Delete a custom pattern (same as DELETE; built-in → 409)",
        request=None,
        responses={200: OpenApiResponse(description="Deleted; data is null.")},
    )
    @action(detail=True, methods=["post"], url_path="delete", url_name="delete")
    def delete_action(self, request, *args, **kwargs):
        return self.destroy(request, *args, **kwargs)

    @extend_schema(summary="Flip enabled", request=None, responses={200: PatternSerializer})
    @action(detail=True, methods=["post"])
    def toggle(self, request, *args, **kwargs):
        return self._answer(changes.pattern_toggle(target=self.get_object(), **self._who()))

    @extend_schema(summary="Copy into an editable custom pattern", request=None, responses={201: PatternSerializer})
    @action(detail=True, methods=["post"])
    def copy(self, request, *args, **kwargs):
        return self._answer(changes.pattern_copy(source=self.get_object(), **self._who()), status=201)

    @extend_schema(summary="Reset to defaults", request=None, responses={200: ResetResultSerializer})
    @action(detail=False, methods=["post"])
    def reset(self, request, *args, **kwargs):
        return Response(changes.patterns_reset(**self._who()).as_dict())

    @extend_schema(
        summary="Try a reply against the enabled patterns (counts no hit)",
        description=(
            'A blank text is an error: isError true, matchedBy "blank", category incomplete, no pattern. '
            "Otherwise the first enabled pattern in (priority, id) order that matches decides (matchedBy "
            '"pattern"); matches lists every enabled pattern that matches, in that order.'
        ),
        request=DetectRequestSerializer,
        responses={200: DetectResultSerializer},
    )
    @action(detail=False, methods=["post"], filterset_class=None, pagination_class=None)
    def detect(self, request, *args, **kwargs):
        body = DetectRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(detect_json(body.validated_data["text"]))
