"""``manage.py reset_patterns`` (SPEC §3.2)."""

import io

import pytest
from django.core.management import call_command

from patterns.builtins import BUILTINS
from patterns.models import HermesErrorPattern, PatternChange

pytestmark = pytest.mark.django_db


def test_reset_patterns_resets_to_defaults_and_records_it(custom):
    shipped = HermesErrorPattern.objects.get(key=BUILTINS[0]["key"])
    HermesErrorPattern.objects.filter(pk=shipped.pk).update(enabled=False)
    out = io.StringIO()
    call_command("reset_patterns", stdout=out)
    shipped.refresh_from_db()
    assert shipped.enabled and not HermesErrorPattern.objects.filter(pk=custom.pk).exists()
    assert "1 custom patterns deleted" in out.getvalue()
    row = PatternChange.objects.get(pattern=shipped, action="reset")
    assert row.via == "command" and "reset_patterns" in row.actor_label
