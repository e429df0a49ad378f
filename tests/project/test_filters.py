"""The shared strict boolean filter field (SPEC §2: a bad value is refused, naming it)."""

import pytest
from django import forms
from django.utils import translation

from project.filters import StrictBooleanFormField as StrictBooleanField


@pytest.mark.parametrize(
    "raw, value", [("true", True), ("1", True), ("False", False), ("0", False), ("", None), (None, None)]
)
def test_the_strict_boolean_field_reads_true_false_1_0_and_empty(raw, value):
    assert StrictBooleanField(required=False).clean(raw) is value


def test_the_strict_boolean_field_refuses_anything_else_quoting_it():
    with pytest.raises(forms.ValidationError) as error:
        StrictBooleanField(required=False).clean("maybe")
    assert "maybe" in error.value.messages[0] and "true or false" in error.value.messages[0]


def test_the_strict_boolean_error_is_translated():
    with translation.override("zh-hans"):
        with pytest.raises(forms.ValidationError) as error:
            StrictBooleanField(required=False).clean("maybe")
        assert "请使用 true 或 false" in error.value.messages[0]
