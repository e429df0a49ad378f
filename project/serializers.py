"""Shared serializer pieces: a base serializer that runs the model's ``full_clean()``
(NetBox style), so the rules written once on the model hold for the API, the pages
and the admin; and strict JSON field types (SPEC §2: a wrong type is a 422)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers


class ValidatedModelSerializer(serializers.ModelSerializer):
    """A ModelSerializer whose ``validate`` builds the instance and calls
    ``full_clean()``; model errors come back under the serializer's field names
    (camelCase), e.g. ``{"name": ["…"]}`` → ``{"name": [...]}``.

    Serializers map model fields to camelCase with ``source=``; the reverse map
    below turns model field names in errors back into API names.
    """

    def _api_name(self, model_field: str) -> str:
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
            errors = {}
            for field, messages in exc.message_dict.items():
                key = "nonFieldErrors" if field == "__all__" else self._api_name(field)
                errors[key] = messages
            raise serializers.ValidationError(errors) from None
        finally:
            if self.instance is not None:
                for key, value in originals.items():
                    setattr(instance, key, value)
        return attrs


class StrictCharField(serializers.CharField):
    """A CharField that accepts only JSON strings (DRF would turn ``5`` into ``"5"``)."""

    default_error_messages = {"invalid": _("Must be a string.")}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A BooleanField that accepts only ``true`` and ``false``."""

    default_error_messages = {"invalid": _("Must be true or false.")}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictIntegerField(serializers.IntegerField):
    """An IntegerField that accepts only JSON integers (not ``"5"``, ``5.5`` or ``true``)."""

    default_error_messages = {"invalid": _("Must be an integer.")}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)
