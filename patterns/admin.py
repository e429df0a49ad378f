"""Django admin for error patterns (SPEC §3.5): list, filters, search,
enable/disable actions with history, built-ins undeletable with a read-only
name and pattern. Every save and delete goes through ``patterns.changes``."""

import json

from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as django_delete_selected
from django.contrib.admin.utils import unquote
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from patterns import changes
from patterns.forms import PatternForm
from patterns.models import HermesErrorPattern, PatternChange
from project.errors import Conflict, Invalid
from project.templatetags.hermes import via_label


def json_shown(value) -> str:
    """A change's before/after as JSON (``—`` for none), as the JSON field itself would show it."""
    return "—" if value is None else json.dumps(value, ensure_ascii=False)


def moment_shown(value) -> str:
    """A time as the admin shows its own date fields (local time, the language's format)."""
    return formats.localize(timezone.template_localtime(value)) if value else "—"


class PatternChangeInline(admin.TabularInline):
    """The pattern's history, read-only, newest first."""

    model = PatternChange
    fk_name = "pattern"
    fields = ["created_at", "actor_label", "via_shown", "action", "before_shown", "after_shown"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-created_at", "-id"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    # The JSON fields have no verbose name of their own: named here so the admin speaks the page's language.
    @admin.display(description=_("before"))
    def before_shown(self, change):
        return json_shown(change.before)

    @admin.display(description=_("after"))
    def after_shown(self, change):
        return json_shown(change.after)

    @admin.display(description=_("via"))
    def via_shown(self, change):
        return via_label(change.via)


@admin.register(HermesErrorPattern)
class HermesErrorPatternAdmin(admin.ModelAdmin):
    form = PatternForm
    list_display = [
        "name",
        "pattern",
        "enabled",
        "is_built_in",
        "category",
        "retryable",
        "priority",
        "scope",
        "hit_count",
        "last_hit_at",
    ]
    list_filter = ["enabled", "is_built_in", "category", "retryable", "scope"]
    search_fields = ["name", "pattern", "description", "key"]
    ordering = ["priority", "id"]
    actions = ["delete_selected", "enable_selected", "disable_selected"]
    inlines = [PatternChangeInline]
    readonly_fields = ["pattern_key", "is_built_in", "hit_count", "last_hit_at", "created", "updated"]

    # key, created_at and updated_at have no verbose name (a new one would be a migration): named here.
    @admin.display(description=_("key"))
    def pattern_key(self, pattern):
        return pattern.key or "—"

    @admin.display(description=_("Created"))
    def created(self, pattern):
        return moment_shown(pattern.created_at)

    @admin.display(description=_("Updated"))
    def updated(self, pattern):
        return moment_shown(pattern.updated_at)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.is_built_in:
            fields += list(changes.BUILT_IN_READ_ONLY)
        return fields

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.is_built_in:
            return False
        return super().has_delete_permission(request, obj)

    def _who(self, request) -> dict:
        return {"actor": request.user, "via": "admin"}

    def _refuse_built_ins(self, request, names: list[str]) -> None:
        # Without this, Django's confirmation page reports a missing permission
        # "to delete related objects", which even a superuser cannot act on.
        text = ngettext(
            "Built-in patterns cannot be deleted; disable it instead: %(names)s.",
            "Built-in patterns cannot be deleted; disable them instead: %(names)s.",
            len(names),
        )
        self.message_user(request, text % {"names": ", ".join(f"“{name}”" for name in names)}, messages.ERROR)

    @admin.action(description=_("Delete selected patterns"), permissions=["delete"])
    def delete_selected(self, request, queryset):
        """Django's delete action (confirmation page included), refused with a
        message naming them when the selection holds a built-in (SPEC §3.2)."""
        built_ins = list(queryset.filter(is_built_in=True).order_by("name").values_list("name", flat=True))
        if built_ins:
            self._refuse_built_ins(request, built_ins)
            return None
        return django_delete_selected(self, request, queryset)

    def delete_view(self, request, object_id, extra_context=None):
        target = self.get_object(request, unquote(object_id))
        if target is not None and target.is_built_in:
            self._refuse_built_ins(request, [target.name])
            return redirect(reverse("admin:patterns_hermeserrorpattern_change", args=[target.pk]))
        return super().delete_view(request, object_id, extra_context)

    def save_model(self, request, obj, form, change):
        values = {name: form.cleaned_data[name] for name in changes.EDITABLE_FIELDS if name in form.cleaned_data}
        if change:
            values = {name: value for name, value in values.items() if name in form.changed_data}
            saved = changes.pattern_update(target=obj, values=values, **self._who(request))
        else:
            saved = changes.pattern_create(values=values, **self._who(request))
        obj.pk = saved.pk
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        changes.pattern_delete(target=obj, **self._who(request))

    def delete_queryset(self, request, queryset):
        # The confirmation page already refuses a selection with a built-in
        # (has_delete_permission); this keeps the rule even if it is bypassed.
        for pattern in queryset:
            try:
                changes.pattern_delete(target=pattern, **self._who(request))
            except Conflict as refusal:
                self.message_user(request, refusal.message, messages.ERROR)

    @admin.action(description=_("Enable the selected patterns"), permissions=["change"])
    def enable_selected(self, request, queryset):
        self._set_enabled(request, queryset, True)

    @admin.action(description=_("Disable the selected patterns"), permissions=["change"])
    def disable_selected(self, request, queryset):
        self._set_enabled(request, queryset, False)

    def _set_enabled(self, request, queryset, enabled):
        try:
            count = changes.pattern_set_enabled(targets=queryset, enabled=enabled, **self._who(request))
        except Invalid as error:
            self.message_user(request, error.message, messages.ERROR)
            return
        if enabled:
            text = ngettext("Enabled %(count)d pattern.", "Enabled %(count)d patterns.", count)
        else:
            text = ngettext("Disabled %(count)d pattern.", "Disabled %(count)d patterns.", count)
        self.message_user(request, text % {"count": count}, messages.SUCCESS)


@admin.register(PatternChange)
class PatternChangeAdmin(admin.ModelAdmin):
    """The history of every pattern, read-only."""

    list_display = ["created_at", "pattern_name", "action", "actor_label", "via"]
    list_filter = ["action", "via"]
    search_fields = ["pattern_name", "actor_label"]
    readonly_fields = [
        "pattern",
        "pattern_ref",
        "pattern_name",
        "actor",
        "actor_label",
        "via",
        "action",
        "before",
        "after",
        "created_at",
    ]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
