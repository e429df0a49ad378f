"""The tool-gateway API (SPEC §7.3): ``/api/tool-bindings`` and ``/api/tool-calls``.

Thin adapters: serializers check types, :mod:`contextquery.tool_gateway`
applies the rules (and keeps the bindings' history), ``project.api`` maps
errors to the envelope.

* bindings: reading needs an authenticated user, writing a staff user (as
  error patterns, SPEC §3.4);
* calls: reading needs staff or ``contextquery.view_toolcall``; approving and
  rejecting need ``contextquery.approve_toolcall``.
"""

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from contextquery import tool_gateway
from contextquery.api import tool_serializers as s
from contextquery.filters import ToolBindingFilter, ToolCallFilter
from contextquery.models import ToolBinding, ToolCall

#: Binding actions any authenticated user may call; everything else needs staff.
READ_ACTIONS = frozenset({"list", "retrieve"})


class BindingPermission(permissions.BasePermission):
    """Authenticated users read bindings; staff users change them."""

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        self.message = _("Changing tool bindings needs a staff user.")
        return getattr(view, "action", None) in READ_ACTIONS or user.is_staff


class CallPermission(permissions.BasePermission):
    """Reading calls: staff or ``view_toolcall``; deciding: ``approve_toolcall`` (SPEC §7.3)."""

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if getattr(view, "action", None) in ("approve", "reject"):
            self.message = _("Deciding tool calls needs the contextquery.approve_toolcall permission.")
            return tool_gateway.toolcall_can_decide(user)
        self.message = _("Reading tool calls needs a staff user or the contextquery.view_toolcall permission.")
        return user.is_staff or user.has_perm("contextquery.view_toolcall")


@extend_schema_view(
    list=extend_schema(summary="List tool bindings"),
    create=extend_schema(
        summary="Create a tool binding",
        description="approval left out: required for a write, none for a read. The endpoint's host must be in "
        "HERMES_TOOL_ALLOWED_HOSTS (422 otherwise); inputSchema must be a JSON Schema of an object.",
        responses={201: s.ToolBindingSerializer},
    ),
    retrieve=extend_schema(summary="One tool binding with its history", responses={200: s.ToolBindingDetailSerializer}),
    update=extend_schema(summary="Replace a tool binding's fields"),
    partial_update=extend_schema(summary="Change some of a tool binding's fields"),
    destroy=extend_schema(summary="Delete a tool binding (its calls and history stay)", responses={200: None}),
)
class ToolBindingViewSet(viewsets.ModelViewSet):
    """``/api/tool-bindings``: list, create, retrieve, edit, delete, toggle (SPEC §7.3)."""

    queryset = ToolBinding.objects.all().order_by("name")
    serializer_class = s.ToolBindingSerializer
    permission_classes = [BindingPermission]
    filterset_class = ToolBindingFilter
    lookup_value_regex = r"\d+"

    def get_serializer_class(self):
        if self.action == "retrieve":
            return s.ToolBindingDetailSerializer
        return super().get_serializer_class()

    def _who(self) -> dict:
        return {"actor": self.request.user, "via": "api"}

    def perform_create(self, serializer):
        serializer.instance = tool_gateway.binding_create(values=dict(serializer.validated_data), **self._who())

    def perform_update(self, serializer):
        serializer.instance = tool_gateway.binding_update(
            target=serializer.instance, values=dict(serializer.validated_data), **self._who()
        )

    def destroy(self, request, *args, **kwargs):
        tool_gateway.binding_delete(target=self.get_object(), **self._who())
        return Response(None)

    @extend_schema(
        summary="Change some of a tool binding's fields (same as PATCH)",
        request=s.ToolBindingSerializer,
        responses={200: s.ToolBindingSerializer},
    )
    @action(detail=True, methods=["post"], url_path="edit")
    def edit(self, request, *args, **kwargs):
        kwargs["partial"] = True
        return self.update(request, *args, **kwargs)

    @extend_schema(
        summary="Delete a tool binding (same as DELETE)",
        request=None,
        responses={200: OpenApiResponse(description="Deleted; data is null.")},
    )
    @action(detail=True, methods=["post"], url_path="delete", url_name="delete")
    def delete_action(self, request, *args, **kwargs):
        return self.destroy(request, *args, **kwargs)

    @extend_schema(summary="Flip enabled", request=None, responses={200: s.ToolBindingSerializer})
    @action(detail=True, methods=["post"])
    def toggle(self, request, *args, **kwargs):
        binding = tool_gateway.binding_toggle(target=self.get_object(), **self._who())
        return Response(s.ToolBindingSerializer(binding, context=self.get_serializer_context()).data)


@extend_schema_view(
    list=extend_schema(summary="List business tool calls (filters status, runId, tool)"),
    retrieve=extend_schema(summary="One business tool call"),
)
class ToolCallViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """``/api/tool-calls``: list, retrieve, approve, reject (SPEC §7.3). Expiry is
    applied before every read and decision."""

    serializer_class = s.ToolCallSerializer
    permission_classes = [CallPermission]
    filterset_class = ToolCallFilter
    lookup_value_regex = r"\d+"
    queryset = ToolCall.objects.none()

    def get_queryset(self):
        return tool_gateway.toolcall_list()

    def list(self, request, *args, **kwargs):
        tool_gateway.toolcalls_expire()
        return super().list(request, *args, **kwargs)

    def get_object(self):
        return tool_gateway.toolcall_get(call_id=self.kwargs["pk"])

    @extend_schema(
        summary="Approve a pending call: it is executed now",
        description="Answers the call as it ended (SUCCEEDED or FAILED). 409 when it no longer waits: "
        "already decided, expired (after HERMES_TOOL_APPROVAL_TTL_SECONDS, or its visit or run ended), or "
        "claimed by a concurrent approval — a call is executed once.",
        request=s.ToolCallApproveSerializer,
        responses={200: s.ToolCallSerializer},
    )
    @action(detail=True, methods=["post"], filterset_class=None, pagination_class=None)
    def approve(self, request, *args, **kwargs):
        body = s.ToolCallApproveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        call = tool_gateway.toolcall_approve(
            call=self.get_object(), user=request.user, note=body.validated_data["note"]
        )
        return Response(s.ToolCallSerializer(tool_gateway.toolcall_get(call_id=call.pk)).data)

    @extend_schema(
        summary="Reject a pending call with a note: it is never executed",
        description="409 when it no longer waits (decided or expired).",
        request=s.ToolCallRejectSerializer,
        responses={200: s.ToolCallSerializer},
    )
    @action(detail=True, methods=["post"], filterset_class=None, pagination_class=None)
    def reject(self, request, *args, **kwargs):
        body = s.ToolCallRejectSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        call = tool_gateway.toolcall_reject(call=self.get_object(), user=request.user, note=body.validated_data["note"])
        return Response(s.ToolCallSerializer(tool_gateway.toolcall_get(call_id=call.pk)).data)
