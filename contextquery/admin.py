"""Django admin for runs, visits, logs, context tokens and reads (SPEC §4.6).

The recorded history is evidence: the engine writes it through the recording
rules, so the admin shows it read-only and deletes no visit, log, token or read
on its own; deleting a whole run is allowed, for retention (it takes its
visits, logs, tokens and reads with it, as ``purge_runs`` does).
Tokens show a hash prefix and their state, never the whole hash.

Tool bindings (SPEC §7) are edited here through ``contextquery.tool_gateway``
(with history); the admin shows a binding's ``secretRef`` and whether the
server has a value for it, never the value. Tool calls are read-only.
"""

import json

from django.contrib import admin, messages
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from contextquery import tool_gateway
from contextquery.forms import ToolBindingForm
from contextquery.models import (
    ContextRead,
    ContextToken,
    ToolBinding,
    ToolBindingChange,
    ToolCall,
    Visit,
    VisitLog,
    WorkflowRun,
)


def pretty_json(value):
    """JSON shown indented in a ``<pre>``, escaped."""
    if value is None or value == "":
        return "—"
    return format_html(
        '<pre style="white-space: pre-wrap; margin: 0">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False)
    )


def admin_link(obj, text=None):
    """A link to ``obj``'s admin change page."""
    if obj is None:
        return "—"
    meta = obj._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text if text is not None else str(obj))


class ReadOnlyMixin:
    """Nothing added or changed here; the engine records through the API."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class UndeletableMixin:
    """No delete, alone or in bulk: a visit or token goes only with its run (SPEC §4.6)."""

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(ReadOnlyMixin, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def get_readonly_fields(self, request, obj=None):
        return self.fields


# --------------------------------------------------------------------------- runs


class VisitInline(ReadOnlyInline):
    model = Visit
    fields = ["visit_link", "node_id", "node_name", "iter_seq", "status", "failure_category", "started_at", "ended_at"]
    ordering = ["sort_order"]
    verbose_name_plural = _("visits (by sort order)")

    @admin.display(description=_("visit"))
    def visit_link(self, visit):
        return admin_link(visit, f"#{visit.sort_order} {visit.visit_uuid}")


@admin.register(WorkflowRun)
class WorkflowRunAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["run_id", "workflow_name", "workflow_id", "mode", "status", "engine", "visit_total",
                    "started_at", "finished_at"]  # fmt: skip
    list_filter = ["status", "mode", "started_at"]
    search_fields = ["run_id", "workflow_id", "workflow_name"]
    date_hierarchy = "started_at"
    list_select_related = ["created_by"]
    fields = ["run_id", "workflow_id", "workflow_name", "mode", "status", "engine", "started_at",
              "finished_at", "visit_counter", "graph_pretty"]  # fmt: skip
    readonly_fields = fields
    inlines = [VisitInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(visit_total=Count("visits"))

    def get_deleted_objects(self, objs, request):
        """The run's visits and tokens go with it although their admins delete
        nothing on their own: the permission to delete runs is the one asked."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        cascaded = {str(model._meta.verbose_name) for model in (Visit, VisitLog, ContextToken, ContextRead, ToolCall)}
        return deleted, counts, {name for name in perms_needed if str(name) not in cascaded}, protected

    @admin.display(description=_("engine"), ordering="created_by__username")
    def engine(self, run):
        """The engine user who recorded the run (the run page's "Engine")."""
        return run.created_by or "—"

    @admin.display(description=_("visits"), ordering="visit_total")
    def visit_total(self, run):
        return run.visit_total

    @admin.display(description=_("graph"))
    def graph_pretty(self, run):
        return pretty_json(run.graph)


# --------------------------------------------------------------------------- visits


class VisitLogInline(ReadOnlyInline):
    model = VisitLog
    fields = ["seq", "type", "timestamp", "message", "detail_pretty"]
    ordering = ["seq"]

    @admin.display(description=_("detail"))
    def detail_pretty(self, log):
        return pretty_json(log.detail)


class ContextReadInline(ReadOnlyInline):
    model = ContextRead
    fields = ["created_at", "endpoint", "node_id", "target_visit_uuid", "field", "kind", "iter_seq", "status_code",
              "bytes_returned", "duration_ms"]  # fmt: skip
    ordering = ["created_at", "id"]
    verbose_name_plural = _("context reads made by this visit's LLM")


class TokenDisplayMixin:
    """A token shown by its hash prefix and state, never the whole hash."""

    @admin.display(description=_("hash prefix"))
    def hash_prefix(self, token):
        return f"{token.hash_prefix}…"

    @admin.display(description=_("state"))
    def state(self, token):
        return token.state()


class ContextTokenInline(TokenDisplayMixin, ReadOnlyInline):
    model = ContextToken
    fields = ["hash_prefix", "issued_at", "expires_at", "revoked_at", "state"]
    ordering = ["-issued_at"]


@admin.register(Visit)
class VisitAdmin(UndeletableMixin, ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["visit_uuid", "run_link", "node_id", "iter_seq", "sort_order", "status", "failure_category",
                    "retryable", "pattern_link", "started_at", "ended_at"]  # fmt: skip
    list_filter = ["status", "failure_category", "retryable", "run__mode", "started_at"]
    search_fields = ["visit_uuid", "node_id", "node_name", "run__run_id", "failure_reason", "matched_pattern_name"]
    list_select_related = ["run", "matched_pattern"]
    ordering = ["-started_at", "-id"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "visit_uuid",
                    "run_link",
                    "node_id",
                    "node_type",
                    "node_name",
                    "iter_seq",
                    "sort_order",
                    "parents",
                    "status",
                    "started_at",
                    "ended_at",
                ]
            },
        ),  # fmt: skip
        (_("Input and output"), {"fields": ["input_pretty", "output_pretty", "final_text"]}),
        (
            _("Failure"),
            {
                "fields": [
                    "failure_reason",
                    "failure_category",
                    "retryable",
                    "run_action",
                    "pattern_link",
                    "matched_pattern_key",
                    "matched_pattern_name",
                    "matched_pattern_text",
                ]  # fmt: skip
            },
        ),
        (_("Counters"), {"fields": ["log_counter", "query_count", "last_seen_at", "tools", "tool_call_count"]}),
    ]
    readonly_fields = [f for _name, opts in fieldsets for f in opts["fields"]]
    inlines = [VisitLogInline, ContextReadInline, ContextTokenInline]

    def get_inlines(self, request, obj):
        # After the base inlines, so their order on the page stays as it was.
        return [*super().get_inlines(request, obj), ToolCallInline]

    @admin.display(description=_("run"), ordering="run__run_id")
    def run_link(self, visit):
        return admin_link(visit.run, visit.run.run_id)

    @admin.display(description=_("matched pattern"))
    def pattern_link(self, visit):
        if visit.matched_pattern_id:
            return admin_link(visit.matched_pattern, visit.matched_pattern_name or str(visit.matched_pattern))
        return visit.matched_pattern_name or "—"

    @admin.display(description=_("parents"))
    def parents(self, visit):
        if not visit.parent_uuids:
            return _("none (a root)")
        found = {str(v.visit_uuid): v for v in Visit.objects.filter(visit_uuid__in=visit.parent_uuids)}
        links = [
            admin_link(found[u], f"{found[u].node_id}#{found[u].iter_seq}") if u in found else u
            for u in visit.parent_uuids
        ]
        return format_html(", ".join(["{}"] * len(links)), *links)

    @admin.display(description=_("input"))
    def input_pretty(self, visit):
        return pretty_json(visit.input)

    @admin.display(description=_("output"))
    def output_pretty(self, visit):
        return pretty_json(visit.output)


# --------------------------------------------------------------------------- tokens


class TokenStateFilter(admin.SimpleListFilter):
    title = _("state")
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("live", _("live")), ("expired", _("expired")), ("revoked", _("revoked"))]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "live":
            return queryset.filter(revoked_at__isnull=True, expires_at__gt=now)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "revoked":
            return queryset.filter(~Q(revoked_at=None))
        return queryset


@admin.register(ContextToken)
class ContextTokenAdmin(TokenDisplayMixin, UndeletableMixin, ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["hash_prefix", "run_shown", "visit_link", "issued_at", "expires_at", "revoked_at", "state"]
    list_filter = [TokenStateFilter, "issued_at"]
    search_fields = ["run__run_id", "visit__visit_uuid"]
    list_select_related = ["run", "visit"]
    fields = ["hash_prefix", "run_shown", "visit_link", "issued_at", "expires_at", "revoked_at", "state"]
    readonly_fields = fields

    @admin.display(description=_("run"), ordering="run__run_id")
    def run_shown(self, token):
        return admin_link(token.run)

    @admin.display(description=_("visit"))
    def visit_link(self, token):
        return admin_link(token.visit)


# --------------------------------------------------------------------------- tool gateway (SPEC §7)


class ToolCallInline(ReadOnlyInline):
    model = ToolCall
    fk_name = "visit"
    fields = ["call_link", "tool_name", "kind", "status", "http_status", "decided_by_label", "requested_at",
              "finished_at"]  # fmt: skip
    ordering = ["requested_at", "id"]
    verbose_name_plural = _("business tool calls")

    @admin.display(description=_("call"))
    def call_link(self, call):
        return admin_link(call, f"#{call.pk}")


class ToolBindingChangeInline(ReadOnlyInline):
    """The binding's history, newest first."""

    model = ToolBindingChange
    fk_name = "binding"
    fields = ["created_at", "actor_label", "via", "action", "before", "after"]
    ordering = ["-created_at", "-id"]


class SecretDisplayMixin:
    """A binding's secret by its name and whether the server has a value; never the value."""

    @admin.display(description=_("secret"))
    def secret_state(self, binding):
        if not binding.secret_ref:
            return "—"
        state = _("set") if tool_gateway.secret_is_set(binding.secret_ref) else _("not set")
        return format_html("<code>{}</code> ({}: {})", binding.secret_ref, binding.secret_env_name, state)


@admin.register(ToolBinding)
class ToolBindingAdmin(SecretDisplayMixin, admin.ModelAdmin):
    form = ToolBindingForm
    list_display = ["name", "kind", "approval", "endpoint", "secret_state", "timeout_seconds", "enabled", "updated_at"]
    list_filter = ["enabled", "kind", "approval"]
    search_fields = ["name", "description", "endpoint", "secret_ref"]
    ordering = ["name"]
    actions = ["enable_selected", "disable_selected"]
    readonly_fields = ["secret_state", "created_at", "updated_at"]
    inlines = [ToolBindingChangeInline]

    def _who(self, request) -> dict:
        return {"actor": request.user, "via": "admin"}

    def save_model(self, request, obj, form, change):
        values = form.values()
        if change:
            saved = tool_gateway.binding_update(target=obj, values=values, **self._who(request))
        else:
            saved = tool_gateway.binding_create(values=values, **self._who(request))
        obj.pk = saved.pk
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        tool_gateway.binding_delete(target=obj, **self._who(request))

    def delete_queryset(self, request, queryset):
        for binding in queryset:
            tool_gateway.binding_delete(target=binding, **self._who(request))

    @admin.action(description=_("Enable the selected tools"), permissions=["change"])
    def enable_selected(self, request, queryset):
        self._set_enabled(request, queryset, True)

    @admin.action(description=_("Disable the selected tools"), permissions=["change"])
    def disable_selected(self, request, queryset):
        self._set_enabled(request, queryset, False)

    def _set_enabled(self, request, queryset, enabled):
        count = tool_gateway.bindings_set_enabled(targets=queryset, enabled=enabled, **self._who(request))
        if enabled:
            text = ngettext("Enabled %(count)d tool.", "Enabled %(count)d tools.", count)
        else:
            text = ngettext("Disabled %(count)d tool.", "Disabled %(count)d tools.", count)
        self.message_user(request, text % {"count": count}, messages.SUCCESS)


@admin.register(ToolBindingChange)
class ToolBindingChangeAdmin(UndeletableMixin, ReadOnlyMixin, admin.ModelAdmin):
    """The history of every tool binding, read-only."""

    list_display = ["created_at", "binding_name", "action", "actor_label", "via"]
    list_filter = ["action", "via"]
    search_fields = ["binding_name", "actor_label"]
    fields = ["binding", "binding_ref", "binding_name", "actor", "actor_label", "via", "action", "before", "after",
              "created_at"]  # fmt: skip
    readonly_fields = fields


@admin.register(ToolCall)
class ToolCallAdmin(UndeletableMixin, ReadOnlyMixin, admin.ModelAdmin):
    """Business tool calls, read-only: ops decide them on /tools/approvals/ or through the API."""

    list_display = ["id", "tool_name", "kind", "status", "run_id_link", "visit_link", "http_status",
                    "decided_by_label", "requested_at", "finished_at"]  # fmt: skip
    list_filter = ["status", "kind", "tool_name", "requested_at"]
    search_fields = ["tool_name", "visit__run__run_id", "visit__visit_uuid", "idempotency_key"]
    list_select_related = ["visit", "visit__run"]
    fields = ["tool_name", "binding", "kind", "visit_link", "arguments_pretty", "idempotency_key", "status",
              "http_status", "result_pretty", "error", "decided_by_label", "decided_at", "note", "requested_at",
              "started_at", "finished_at", "duration_ms"]  # fmt: skip
    readonly_fields = fields

    @admin.display(description=_("run"), ordering="visit__run__run_id")
    def run_id_link(self, call):
        return admin_link(call.visit.run, call.visit.run.run_id)

    @admin.display(description=_("visit"))
    def visit_link(self, call):
        return admin_link(call.visit, f"{call.visit.node_id}#{call.visit.iter_seq}")

    @admin.display(description=_("arguments"))
    def arguments_pretty(self, call):
        return pretty_json(call.arguments)

    @admin.display(description=_("result"))
    def result_pretty(self, call):
        return pretty_json(call.result)
