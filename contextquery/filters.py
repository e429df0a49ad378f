"""The run, visit and tool-gateway filters, shared by the API lists and the
HTML lists (SPEC §4.3, §4.6, §7.3).

Query parameters are camelCase: ``status``, ``mode``, ``workflowId``,
``startedAfter`` / ``startedBefore`` (ISO-8601, inclusive), ``search`` (runId,
workflow id or name, case-insensitive substring). An unknown choice is refused
(422 in the API, a form error on the page).
"""

import datetime

import django_filters
from django import forms
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from contextquery.models import (
    RunMode,
    RunStatus,
    ToolBinding,
    ToolCall,
    ToolCallStatus,
    ToolKind,
    Visit,
    VisitStatus,
    WorkflowRun,
)
from project.filters import StrictBooleanFilter


class UtcIsoDateTimeField(django_filters.fields.IsoDateTimeField):
    """An ISO-8601 date-time normalised to UTC. Python accepts offsets up to
    ±23:59 and PostgreSQL only up to ±15:59, and a date at the very edge of
    the calendar cannot be moved to UTC: both are refused as invalid here
    rather than failing in the database."""

    def to_python(self, value):
        value = super().to_python(value)
        if value is None:
            return None
        try:
            return value.astimezone(datetime.UTC)
        except OverflowError:
            raise forms.ValidationError(
                _("Enter a date-time between the years 1 and 9999 in UTC."), code="invalid"
            ) from None


class UtcIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcIsoDateTimeField


class RunFilter(django_filters.FilterSet):
    """Filters of the run lists."""

    status = django_filters.ChoiceFilter(choices=RunStatus.choices, label=_("Status"))
    mode = django_filters.ChoiceFilter(choices=RunMode.choices, label=_("Mode"))
    workflowId = django_filters.CharFilter(field_name="workflow_id", label=_("Workflow id"))
    startedAfter = UtcIsoDateTimeFilter(field_name="started_at", lookup_expr="gte", label=_("Started at or after"))
    startedBefore = UtcIsoDateTimeFilter(field_name="started_at", lookup_expr="lte", label=_("Started at or before"))
    search = django_filters.CharFilter(method="filter_search", label=_("Search (run id, workflow)"))

    class Meta:
        model = WorkflowRun
        fields = []

    def filter_search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(run_id__icontains=value) | Q(workflow_name__icontains=value) | Q(workflow_id__icontains=value)
        )


class VisitFilter(django_filters.FilterSet):
    """Filters of a run's visit list: ``status``, ``nodeId``."""

    status = django_filters.ChoiceFilter(choices=VisitStatus.choices, label=_("Status"))
    nodeId = django_filters.CharFilter(field_name="node_id", label=_("Node id"))

    class Meta:
        model = Visit
        fields = []


class ToolBindingFilter(django_filters.FilterSet):
    """Filters of the tool bindings: ``enabled``, ``kind``, ``search`` (name, description, endpoint)."""

    enabled = StrictBooleanFilter(label=_("Enabled"))
    kind = django_filters.ChoiceFilter(choices=ToolKind.choices, label=_("Kind"))
    search = django_filters.CharFilter(method="filter_search", max_length=200, label=_("Search"))

    class Meta:
        model = ToolBinding
        fields = []

    def filter_search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(name__icontains=value) | Q(description__icontains=value) | Q(endpoint__icontains=value)
        )


class ToolCallFilter(django_filters.FilterSet):
    """Filters of the tool calls: ``status``, ``runId``, ``tool`` (SPEC §7.3)."""

    status = django_filters.ChoiceFilter(choices=ToolCallStatus.choices, label=_("Status"))
    runId = django_filters.CharFilter(field_name="visit__run__run_id", max_length=64, label=_("Run id"))
    tool = django_filters.CharFilter(field_name="tool_name", max_length=64, label=_("Tool"))

    class Meta:
        model = ToolCall
        fields = []
