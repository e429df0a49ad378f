"""The one FilterSet of error patterns, used by the API list and the HTML list
(SPEC §3.4, §3.5): ``enabled``, ``isBuiltIn``, ``category`` and ``search``
(case-insensitive, over name, pattern and description)."""

import django_filters
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django_filters.rest_framework import FilterSet

from patterns.models import Category, HermesErrorPattern
from project.filters import StrictBooleanFilter


class PatternFilter(FilterSet):
    """Query parameters: ``enabled`` and ``isBuiltIn`` (``true``/``false`` or ``1``/``0``),
    ``category`` (one of ``Category``), ``search`` (text, at most 200 characters).
    A bad value is a 422 on the API and a form error on the page."""

    enabled = StrictBooleanFilter(label=_("Enabled"))
    isBuiltIn = StrictBooleanFilter(field_name="is_built_in", label=_("Built-in"))
    category = django_filters.ChoiceFilter(choices=Category.choices, label=_("Category"))
    search = django_filters.CharFilter(method="filter_search", max_length=200, label=_("Search"))

    class Meta:
        model = HermesErrorPattern
        fields = ["enabled", "isBuiltIn", "category", "search"]

    def filter_search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(Q(name__icontains=value) | Q(pattern__icontains=value) | Q(description__icontains=value))
