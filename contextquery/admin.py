"""Django admin for runs, visits, logs, context tokens and reads (SPEC §4.6).

The recorded history is evidence: the engine writes it through the recording
rules, so the admin shows it read-only and deletes no visit, log, token or read
on its own; deleting a whole run is allowed, for retention (it takes its
visits, logs, tokens and reads with it, as ``purge_runs`` does).
Tokens show a hash prefix and their state, never the whole hash.
"""

import json

from django.contrib import admin
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from contextquery.models import ContextRead, ContextToken, Visit, VisitLog, WorkflowRun


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
    list_display = ["run_id", "workflow_name", "workflow_id", "mode", "status", "created_by", "visit_total",
                    "started_at", "finished_at"]  # fmt: skip
    list_filter = ["status", "mode", "started_at"]
    search_fields = ["run_id", "workflow_id", "workflow_name"]
    date_hierarchy = "started_at"
    list_select_related = ["created_by"]
    fields = ["run_id", "workflow_id", "workflow_name", "mode", "status", "created_by", "started_at",
              "finished_at", "visit_counter", "graph_pretty"]  # fmt: skip
    readonly_fields = fields
    inlines = [VisitInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(visit_total=Count("visits"))

    def get_deleted_objects(self, objs, request):
        """The run's visits and tokens go with it although their admins delete
        nothing on their own: the permission to delete runs is the one asked."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        cascaded = {str(model._meta.verbose_name) for model in (Visit, VisitLog, ContextToken, ContextRead)}
        return deleted, counts, {name for name in perms_needed if str(name) not in cascaded}, protected

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
        (_("Counters"), {"fields": ["log_counter", "query_count", "last_seen_at"]}),
    ]
    readonly_fields = [f for _name, opts in fieldsets for f in opts["fields"]]
    inlines = [VisitLogInline, ContextReadInline, ContextTokenInline]

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
    list_display = ["hash_prefix", "run", "visit_link", "issued_at", "expires_at", "revoked_at", "state"]
    list_filter = [TokenStateFilter, "issued_at"]
    search_fields = ["run__run_id", "visit__visit_uuid"]
    list_select_related = ["run", "visit"]
    fields = ["hash_prefix", "run", "visit_link", "issued_at", "expires_at", "revoked_at", "state"]
    readonly_fields = fields

    @admin.display(description=_("visit"))
    def visit_link(self, token):
        return admin_link(token.visit)
