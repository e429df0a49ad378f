"""Filters shared by the apps' FilterSets (SPEC §2: a bad value is a 4xx naming
the parameter, never silently ignored)."""

import django_filters
from django import forms
from django.utils.translation import gettext_lazy as _

_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


class StrictBooleanField(forms.Field):
    """``true`` / ``false`` (also ``1`` / ``0``, any case); empty means "not
    given" (``None``). Anything else is invalid, where Django's
    ``NullBooleanField`` would read it as "not given" and filter nothing."""

    widget = forms.TextInput  # the raw text: NullBooleanSelect maps unknown values to None
    default_error_messages = {"invalid": _("Use true or false (or 1 or 0), not “%(value)s”.")}

    def to_python(self, value):
        if value is None or isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text == "":
            return None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise forms.ValidationError(self.error_messages["invalid"], code="invalid", params={"value": value})


class StrictBooleanFilter(django_filters.BooleanFilter):
    """A ``BooleanFilter`` that refuses a value other than true/false/1/0
    (422 naming the parameter in the API, a form error on a page)."""

    field_class = StrictBooleanField
