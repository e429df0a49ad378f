"""Filters shared by the apps' FilterSets (SPEC §2: a bad value is a 4xx naming
the parameter, never silently ignored)."""

import django_filters
from django import forms
from django.utils.translation import gettext_lazy as _

from project.booleans import parse_bool


class StrictBooleanFormField(forms.Field):
    """``true`` / ``false`` (the vocabulary of :mod:`project.booleans`, any
    case); empty means "not given" (``None``). Anything else is invalid, where
    Django's ``NullBooleanField`` would read it as "not given" and filter nothing."""

    widget = forms.TextInput  # the raw text: NullBooleanSelect maps unknown values to None
    default_error_messages = {"invalid": _("Use true or false (or 1 or 0), not “%(value)s”.")}

    def to_python(self, value):
        if value is None or isinstance(value, bool):
            return value
        if str(value).strip() == "":
            return None
        parsed = parse_bool(str(value))
        if parsed is None:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid", params={"value": value})
        return parsed


class StrictBooleanFilter(django_filters.BooleanFilter):
    """A ``BooleanFilter`` that refuses a value other than true/false/1/0
    (422 naming the parameter in the API, a form error on a page)."""

    field_class = StrictBooleanFormField
