"""The run and visit filters, shared by the API lists and the HTML /runs/ list (SPEC §4.3, §4.6).

Query parameters are camelCase: ``status``, ``mode``, ``workflowId``,
``startedAfter`` / ``startedBefore`` (ISO-8601, inclusive), ``search`` (runId,
workflow id or name, case-insensitive substring). An unknown choice is refused
(422 in the API, a form error on the page).
"""

import django_filters
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from contextquery.models import RunMode, RunStatus, Visit, VisitStatus, WorkflowRun


class RunFilter(django_filters.FilterSet):
    """Filters of the run lists."""

    status = django_filters.ChoiceFilter(choices=RunStatus.choices, label=_("Status"))
    mode = django_filters.ChoiceFilter(choices=RunMode.choices, label=_("Mode"))
    workflowId = django_filters.CharFilter(field_name="workflow_id", label=_("Workflow id"))  # noqa: N815
    startedAfter = django_filters.IsoDateTimeFilter(  # noqa: N815
        field_name="started_at", lookup_expr="gte", label=_("Started at or after")
    )
    startedBefore = django_filters.IsoDateTimeFilter(  # noqa: N815
        field_name="started_at", lookup_expr="lte", label=_("Started at or before")
    )
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
    nodeId = django_filters.CharFilter(field_name="node_id", label=_("Node id"))  # noqa: N815

    class Meta:
        model = Visit
        fields = []
