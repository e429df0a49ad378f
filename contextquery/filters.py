"""The run, visit, log and tool-gateway filters, shared by the API lists and the
HTML lists (SPEC §4.3, §4.6, §7.3, §8).

Query parameters are camelCase. Runs: ``status``, ``mode``, ``workflowId``,
``startedAfter`` / ``startedBefore`` (ISO-8601, inclusive), ``search`` (runId,
workflow id or name, case-insensitive substring), ``stale`` and
``hasFailedVisits`` (true/false). Visits: ``status``, ``nodeId``,
``category`` (a failure category, or ``none``), ``patternId``,
``falsePositive`` (true/false), ``workflowId``, ``endedAfter`` (inclusive) /
``endedBefore`` (exclusive, so time buckets ``[start, end)`` do not
overlap). An unknown choice is refused (422 in the API, a form error on the
page). The overview's numbers link to lists filtered with these (SPEC §8).
"""

import datetime

import django_filters
from django import forms
from django.db.models import Exists, OuterRef, Q
from django.utils.translation import gettext_lazy as _

from contextquery import liveness
from contextquery.models import (
    LogType,
    RunMode,
    RunStatus,
    ToolBinding,
    ToolCall,
    ToolCallStatus,
    ToolKind,
    Visit,
    VisitLog,
    VisitStatus,
    WorkflowRun,
)
from patterns.models import Category, JudgedReply
from project.filters import StrictBooleanFilter

#: The ``category`` value of failed visits with no category, and its label.
NO_CATEGORY = "none"
NO_CATEGORY_LABEL = _("No category")


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


class IdFilter(django_filters.NumberFilter):
    """A database id: a whole number from 1 to 2⁶³−1. A fraction, an exponent
    or a number beyond what the database holds is refused (422 in the API, a
    form error on a page), never handed to the database."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", 2**63 - 1)
        super().__init__(*args, **kwargs)


class RunFilter(django_filters.FilterSet):
    """Filters of the run lists."""

    status = django_filters.ChoiceFilter(choices=RunStatus.choices, label=_("Status"))
    mode = django_filters.ChoiceFilter(choices=RunMode.choices, label=_("Mode"))
    workflowId = django_filters.CharFilter(field_name="workflow_id", label=_("Workflow id"))
    startedAfter = UtcIsoDateTimeFilter(field_name="started_at", lookup_expr="gte", label=_("Started at or after"))
    startedBefore = UtcIsoDateTimeFilter(field_name="started_at", lookup_expr="lte", label=_("Started at or before"))
    search = django_filters.CharFilter(method="filter_search", label=_("Search (run id, workflow)"))
    stale = StrictBooleanFilter(method="filter_stale", label=_("Stale (no sign of life)"))
    hasFailedVisits = StrictBooleanFilter(method="filter_failed_visits", label=_("Has failed visits"))
    sort = django_filters.OrderingFilter(
        fields=(
            ("started_at", "started"),
            ("finished_at", "finished"),
            ("duration", "duration"),
            ("visit_count", "visits"),
            ("failure_count", "failed"),
            ("run_id", "runId"),
        ),
        label=_("Sort by (started, finished, duration, visits, failed, runId; a leading - sorts descending)"),
    )

    class Meta:
        model = WorkflowRun
        fields = []

    def filter_stale(self, queryset, name, value):
        stale = liveness.run_stale_q()
        return queryset.filter(stale) if value else queryset.exclude(stale)

    def filter_failed_visits(self, queryset, name, value):
        failed = Exists(Visit.objects.filter(run=OuterRef("pk"), status=VisitStatus.FAILED))
        return queryset.filter(failed) if value else queryset.exclude(failed)

    def filter_search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(run_id__icontains=value) | Q(workflow_name__icontains=value) | Q(workflow_id__icontains=value)
        )


class LogFilter(django_filters.FilterSet):
    """Filters of a visit's log list: ``type``."""

    type = django_filters.ChoiceFilter(choices=LogType.choices, label=_("Type"))

    class Meta:
        model = VisitLog
        fields = []


class VisitFilter(django_filters.FilterSet):
    """Filters of the visit lists (a run's, and /visits/ across runs)."""

    status = django_filters.ChoiceFilter(choices=VisitStatus.choices, label=_("Status"))
    nodeId = django_filters.CharFilter(field_name="node_id", label=_("Node id"))
    category = django_filters.ChoiceFilter(
        choices=[*Category.choices, (NO_CATEGORY, NO_CATEGORY_LABEL)],
        method="filter_category",
        label=_("Failure category"),
    )
    patternId = IdFilter(field_name="matched_pattern_id", label=_("Matched pattern id"))
    falsePositive = StrictBooleanFilter(method="filter_false_positive", label=_("Marked as a false positive"))
    workflowId = django_filters.CharFilter(field_name="run__workflow_id", label=_("Workflow id"))
    endedAfter = UtcIsoDateTimeFilter(field_name="ended_at", lookup_expr="gte", label=_("Ended at or after"))
    endedBefore = UtcIsoDateTimeFilter(field_name="ended_at", lookup_expr="lt", label=_("Ended before"))

    class Meta:
        model = Visit
        fields = []

    def filter_category(self, queryset, name, value):
        return queryset.filter(failure_category="" if value == NO_CATEGORY else value)

    def filter_false_positive(self, queryset, name, value):
        marked = Exists(
            JudgedReply.objects.filter(subject=OuterRef("visit_uuid"), mark=JudgedReply.Mark.FALSE_POSITIVE)
        )
        return queryset.filter(marked) if value else queryset.exclude(marked)


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
