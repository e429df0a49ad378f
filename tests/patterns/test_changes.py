"""The write rules of patterns/changes.py: history, built-in protections,
copy and reset (SPEC §3.1, §3.2)."""

import pytest
from django.utils import timezone

from contextquery.models import Visit, WorkflowRun
from patterns import changes
from patterns.builtins import BUILTINS
from patterns.detection import detect
from patterns.matching import validate_pattern
from patterns.models import HermesErrorPattern, PatternChange
from project.errors import Conflict, Invalid
from tests.factories import PatternFactory

pytestmark = pytest.mark.django_db

NEW = {
    "name": "Gateway said no",
    "pattern": "gateway refused the call",
    "category": "server_error",
    "retryable": True,
    "priority": 40,
    "description": "From our proxy.",
}


def test_creating_a_pattern_stores_it_with_a_create_history_row(staff_user):
    created = changes.pattern_create(values=NEW, actor=staff_user, via="api")
    row = PatternChange.objects.get(pattern=created)
    assert (row.action, row.via, row.actor, row.actor_label) == ("create", "api", staff_user, staff_user.username)
    assert row.before is None
    assert row.after == {**NEW, "enabled": True, "scope": "error"}


def test_creating_a_regex_that_does_not_compile_is_refused_on_the_pattern_field():
    with pytest.raises(Invalid) as caught:
        changes.pattern_create(values={**NEW, "pattern": "regex:(unclosed"}, via="api")
    assert "pattern" in caught.value.errors
    assert not HermesErrorPattern.objects.filter(name=NEW["name"]).exists()


def test_creating_a_regex_with_a_backreference_is_refused():
    with pytest.raises(Invalid) as caught:
        changes.pattern_create(values={**NEW, "pattern": r"regex:(a)\1"}, via="api")
    assert list(caught.value.errors) == ["pattern"]


def test_creating_a_too_costly_regex_is_refused():
    with pytest.raises(Invalid) as caught:
        changes.pattern_create(values={**NEW, "pattern": "regex:(?:a{1,100}){1,100}b"}, via="api")
    assert "costly" in caught.value.errors["pattern"][0]


@pytest.mark.parametrize("field, value", [("name", ""), ("name", "n" * 101), ("pattern", ""), ("pattern", "p" * 501)])
def test_an_empty_or_over_long_name_or_pattern_is_refused(field, value):
    history = PatternChange.objects.count()
    with pytest.raises(Invalid) as caught:
        changes.pattern_create(values={**NEW, field: value}, via="api")
    assert field in caught.value.errors
    assert PatternChange.objects.count() == history


def test_a_duplicate_name_is_refused(custom):
    with pytest.raises(Invalid) as caught:
        changes.pattern_create(values={**NEW, "name": custom.name}, via="api")
    assert "name" in caught.value.errors


def test_updating_a_pattern_records_before_and_after(custom, staff_user):
    old_pattern = custom.pattern
    changes.pattern_update(target=custom, values={"pattern": "a new marker"}, actor=staff_user, via="page")
    row = PatternChange.objects.get(pattern=custom, action="update")
    assert (row.before["pattern"], row.after["pattern"], row.via) == (old_pattern, "a new marker", "page")


def test_an_update_that_changes_nothing_writes_no_history(custom):
    changes.pattern_update(target=custom, values={"name": custom.name}, via="api")
    assert not PatternChange.objects.filter(pattern=custom).exists()


@pytest.mark.parametrize("field", ["name", "pattern"])
def test_changing_a_built_in_name_or_pattern_is_a_conflict_that_says_to_copy_it(built_in, field):
    with pytest.raises(Conflict) as caught:
        changes.pattern_update(target=built_in, values={field: "something else"}, via="api")
    assert "copy" in caught.value.message.lower()
    built_in.refresh_from_db()
    assert getattr(built_in, field) != "something else"


def test_a_built_in_keeps_its_other_fields_editable(built_in):
    changes.pattern_update(target=built_in, values={"description": "Ours now", "priority": 5}, via="admin")
    built_in.refresh_from_db()
    assert (built_in.description, built_in.priority) == ("Ours now", 5)


def test_deleting_a_custom_pattern_keeps_its_history(custom, staff_user):
    pattern_id, name = custom.pk, custom.name
    changes.pattern_delete(target=custom, actor=staff_user, via="api")
    assert not HermesErrorPattern.objects.filter(pk=pattern_id).exists()
    row = PatternChange.objects.get(pattern_ref=pattern_id, action="delete")
    assert (row.pattern, row.pattern_name, row.after) == (None, name, None)


def test_deleting_a_built_in_pattern_is_refused(built_in):
    with pytest.raises(Conflict):
        changes.pattern_delete(target=built_in, via="api")
    assert HermesErrorPattern.objects.filter(pk=built_in.pk).exists()


def test_toggling_flips_enabled_and_records_disable_then_enable(built_in):
    changes.pattern_toggle(target=built_in, via="page")
    changes.pattern_toggle(target=built_in, via="page")
    built_in.refresh_from_db()
    assert built_in.enabled is True
    assert list(PatternChange.objects.filter(pattern=built_in).order_by("id").values_list("action", flat=True)) == [
        "disable",
        "enable",
    ]


def test_a_disabled_pattern_stops_matching_at_the_next_detection(custom):
    assert detect(f"{custom.pattern} happened").pattern_id == custom.pk
    changes.pattern_toggle(target=custom, via="api")
    found = detect(f"{custom.pattern} happened")
    assert found is None or found.pattern_id != custom.pk


def test_setting_enabled_in_bulk_writes_one_row_per_changed_pattern(staff_user):
    on, off = PatternFactory(enabled=True), PatternFactory(enabled=False)
    changed = changes.pattern_set_enabled(targets=[on, off], enabled=False, actor=staff_user, via="admin")
    assert changed == 1
    rows = PatternChange.objects.filter(pattern_ref__in=[on.pk, off.pk])
    assert list(rows.values_list("pattern_id", "action", "via")) == [(on.pk, "disable", "admin")]


def test_copying_makes_an_editable_custom_pattern_named_copy(built_in):
    built_in.hit_count = 7
    built_in.save()
    copy = changes.pattern_copy(source=built_in, via="api")
    assert (copy.name, copy.pattern, copy.is_built_in, copy.key, copy.hit_count) == (
        f"{built_in.name} (copy)",
        built_in.pattern,
        False,
        None,
        0,
    )
    assert PatternChange.objects.get(pattern=copy).action == "copy"


def test_copying_twice_makes_the_name_unique(custom):
    changes.pattern_copy(source=custom, via="api")
    second = changes.pattern_copy(source=custom, via="api")
    assert second.name == f"{custom.name} (copy 2)"


def test_copying_a_pattern_with_a_long_name_stays_within_the_limit():
    long = PatternFactory(name="x" * 100)
    copy = changes.pattern_copy(source=long, via="api")
    assert len(copy.name) == 100 and copy.name.endswith(" (copy)")


def _shipped(key):
    return next(d for d in BUILTINS if d["key"] == key)


def test_reset_deletes_custom_patterns_and_restores_built_ins(custom, staff_user):
    first = HermesErrorPattern.objects.get(key=BUILTINS[0]["key"])
    changes.pattern_update(target=first, values={"enabled": False, "description": "edited", "priority": 1}, via="api")
    result = changes.patterns_reset(actor=staff_user, via="page")
    first.refresh_from_db()
    shipped = _shipped(first.key)
    assert not HermesErrorPattern.objects.filter(is_built_in=False).exists()
    assert (first.enabled, first.description, first.priority) == (True, shipped["description"], shipped["priority"])
    assert result.deleted == 1 and result.restored >= 1
    assert PatternChange.objects.filter(action="reset", pattern_ref=custom.pk).exists()


def test_reset_reinserts_a_missing_built_in():
    HermesErrorPattern.objects.filter(key=BUILTINS[0]["key"]).delete()
    result = changes.patterns_reset(via="command")
    assert result.inserted == 1
    assert HermesErrorPattern.objects.get(key=BUILTINS[0]["key"]).name == BUILTINS[0]["name"]
    assert HermesErrorPattern.objects.filter(is_built_in=True).count() >= len(BUILTINS)


def test_reset_restores_a_built_in_name_that_was_suffixed():
    first = HermesErrorPattern.objects.get(key=BUILTINS[0]["key"])
    HermesErrorPattern.objects.filter(pk=first.pk).update(name=f"{first.name} (2)")
    changes.patterns_reset(via="command")
    first.refresh_from_db()
    assert first.name == BUILTINS[0]["name"]


def test_reset_is_one_transaction(custom, monkeypatch):
    first = HermesErrorPattern.objects.get(key=BUILTINS[0]["key"])
    HermesErrorPattern.objects.filter(pk=first.pk).update(enabled=False)
    real_record = changes._record

    def failing_record(**kwargs):
        if kwargs["target"].pk == first.pk:
            raise RuntimeError("disk full")
        return real_record(**kwargs)

    monkeypatch.setattr(changes, "_record", failing_record)
    with pytest.raises(RuntimeError):
        changes.patterns_reset(via="command")
    first.refresh_from_db()
    assert HermesErrorPattern.objects.filter(pk=custom.pk).exists()
    assert first.enabled is False


def test_reset_leaves_visits_their_copy_of_the_matched_pattern(custom):
    run = WorkflowRun.objects.create(started_at=timezone.now())
    visit = Visit.objects.create(
        run=run,
        node_id="A",
        iter_seq=1,
        sort_order=1,
        started_at=timezone.now(),
        matched_pattern=custom,
        matched_pattern_name=custom.name,
        matched_pattern_text=custom.pattern,
    )
    changes.patterns_reset(via="command")
    visit.refresh_from_db()
    assert (visit.matched_pattern, visit.matched_pattern_name, visit.matched_pattern_text) == (
        None,
        custom.name,
        custom.pattern,
    )


def test_a_name_taken_after_validation_is_still_a_422(custom, monkeypatch):
    monkeypatch.setattr(changes, "_validate", lambda candidate: None)
    with pytest.raises(Invalid) as caught:
        changes.pattern_create(values={**NEW, "name": custom.name}, via="api")
    assert list(caught.value.errors) == ["name"]


@pytest.mark.parametrize(
    ("pattern", "answer"),
    [
        ("regex:.", "OK"),
        ("regex:\\b", "OK"),
        ("regex:[\\s\\S]", "OK"),
        ("the", "The report is ready"),
        ("已完成", "好的"),
    ],
)
def test_a_pattern_that_matches_an_ordinary_answer_is_refused_naming_it(pattern, answer):
    before = HermesErrorPattern.objects.count()
    with pytest.raises(Invalid) as caught:
        changes.pattern_create(values={**NEW, "pattern": pattern}, via="api")
    assert "ordinary answer" in caught.value.errors["pattern"][0] and answer in caught.value.errors["pattern"][0]
    assert HermesErrorPattern.objects.count() == before


def test_every_shipped_built_in_passes_the_ordinary_answers_check():
    for builtin in BUILTINS:
        validate_pattern(builtin["pattern"])
