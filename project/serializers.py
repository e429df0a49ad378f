"""Shared serializer pieces (SPEC §2).

* :class:`StrictSerializer` — refuses unknown keys (422 naming them, with the
  camelCase name when a snake_case one was sent), so a typo never passes
  silently; every request serializer derives from it.
* :class:`ValidatedModelSerializer` — NetBox style: ``validate`` builds the
  instance and runs the model's ``full_clean()``, so the rules written once
  on the model hold for the API, the pages and the admin.
* Strict JSON types: a number is not a string, ``"true"`` is not a boolean.
* :func:`choice_field` — a choice whose refusal lists what is allowed.
* :func:`validation_error_invalid` — DRF's nested errors as a domain
  ``Invalid`` for rule modules that validate with a serializer.
"""

import difflib

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from project.api import camel_case, flatten_errors
from project.errors import Invalid


def _suggestion(key: str, allowed: list[str]) -> str:
    """``; did you mean 'isBuiltIn'?`` for a snake_case or misspelt key, else ""."""
    camel = camel_case(key)
    if camel != key and camel in allowed:
        return camel
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.75)
    return close[0] if close else ""


class StrictSerializer(serializers.Serializer):
    """A serializer that refuses keys it does not know (SPEC §2: 422 naming them).

    Read-only fields are known: a client may send back what it read. The
    error is keyed by the unknown key and says what is allowed, with the
    camelCase name when the snake_case one was sent (``is_built_in`` →
    ``isBuiltIn``) or a close spelling.
    """

    def to_internal_value(self, data):
        if isinstance(data, dict):
            allowed = list(self.fields)
            unknown = [key for key in data if key not in self.fields]
            if unknown:
                errors = {}
                for key in unknown:
                    guess = _suggestion(str(key), allowed)
                    if guess:
                        errors[str(key)] = [_("Unknown field; did you mean '%(name)s'?") % {"name": guess}]
                    else:
                        errors[str(key)] = [
                            _("Unknown field; the fields are: %(fields)s.") % {"fields": ", ".join(allowed)}
                        ]
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class StrictModelSerializer(StrictSerializer, serializers.ModelSerializer):
    """A ModelSerializer that refuses unknown keys (see :class:`StrictSerializer`)."""


class ValidatedModelSerializer(StrictModelSerializer):
    """A strict ModelSerializer whose ``validate`` builds the instance and calls
    ``full_clean()``; model errors come back under the serializer's field names
    (camelCase), e.g. ``is_built_in`` → ``isBuiltIn``.

    Use it where no rule module validates the write again.
    """

    def api_name(self, model_field: str) -> str:
        """The serializer field whose ``source`` is ``model_field`` (else the name itself)."""
        for name, field in self.fields.items():
            if field.source == model_field:
                return name
        return model_field

    def validate(self, attrs):
        attrs = super().validate(attrs)
        model = self.Meta.model
        instance = self.instance if self.instance is not None else model()
        originals = {}
        for key, value in attrs.items():
            if hasattr(instance, key):
                originals[key] = getattr(instance, key)
                setattr(instance, key, value)
        try:
            instance.full_clean(validate_unique=True)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(Invalid.from_django(exc, names=self.api_name).errors) from None
        finally:
            if self.instance is not None:
                for key, value in originals.items():
                    setattr(instance, key, value)
        return attrs


class StrictCharField(serializers.CharField):
    """A CharField that accepts only JSON strings (DRF would turn ``5`` into ``"5"``)."""

    default_error_messages = {"invalid": gettext_lazy("Must be a string.")}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A BooleanField that accepts only ``true`` and ``false``."""

    default_error_messages = {"invalid": gettext_lazy("Must be true or false.")}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictIntegerField(serializers.IntegerField):
    """An IntegerField that accepts only JSON integers (not ``"5"``, ``5.5`` or ``true``)."""

    default_error_messages = {"invalid": gettext_lazy("Must be an integer.")}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


def choice_field(values, **kwargs) -> serializers.ChoiceField:
    """A ChoiceField whose refusal lists the allowed values (SPEC §2)."""
    values = [str(v) for v in values]
    # DRF fills {input}; the allowed values are filled in here, lazily, so the
    # sentence is translated in the language of each request.
    message = format_lazy(gettext_lazy('"{{input}}" is not allowed; use one of {allowed}.'), allowed=", ".join(values))
    return serializers.ChoiceField(
        choices=[(v, v) for v in values], error_messages={"invalid_choice": message}, **kwargs
    )


def validation_error_invalid(detail, *, prefix: str = "") -> Invalid:
    """DRF's nested error ``detail`` as ``Invalid`` with dotted field paths,
    each under ``prefix`` (``graph`` → ``graph.nodes[0].id``)."""
    flat = flatten_errors(detail)
    errors = {}
    for field, messages in flat.items():
        if prefix:
            field = (
                prefix
                if field == "nonFieldErrors"
                else (f"{prefix}{field}" if field.startswith("[") else f"{prefix}.{field}")
            )
        errors[field] = messages
    first_field, first = next(iter(errors.items()))
    return Invalid(f"{first_field}: {first[0]}", errors=errors)
