"""The Django admin of error patterns (SPEC §3.5): history for every change,
bulk actions included; built-ins undeletable with a read-only name and pattern."""

import pytest
from django.test import Client

from patterns.models import HermesErrorPattern, PatternChange
from tests.factories import BuiltInPatternFactory, PatternFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/patterns/hermeserrorpattern/"


@pytest.fixture
def admin_browser(superuser):
    client = Client()
    client.force_login(superuser)
    return client


def form_data(target, **changes):
    data = {
        "name": target.name,
        "pattern": target.pattern,
        "description": target.description,
        "category": target.category,
        "priority": target.priority,
        "scope": target.scope,
        "changes-TOTAL_FORMS": "0",
        "changes-INITIAL_FORMS": "0",
        "changes-MIN_NUM_FORMS": "0",
        "changes-MAX_NUM_FORMS": "1000",
    }
    if target.enabled:
        data["enabled"] = "on"
    if target.retryable:
        data["retryable"] = "on"
    data.update(changes)
    return data


def test_the_changelist_lists_filters_and_searches(admin_browser, custom):
    response = admin_browser.get(CHANGELIST, {"q": custom.name, "is_built_in__exact": "0"})
    assert response.status_code == 200
    assert custom.name in response.content.decode()


def test_adding_a_pattern_in_the_admin_writes_history(admin_browser, superuser):
    new = PatternFactory.build(name="Admin made", pattern="admin marker")
    response = admin_browser.post(f"{CHANGELIST}add/", form_data(new))
    assert response.status_code == 302
    created = HermesErrorPattern.objects.get(name="Admin made")
    row = PatternChange.objects.get(pattern=created)
    assert (row.action, row.via, row.actor) == ("create", "admin", superuser)


def test_editing_in_the_admin_writes_history(admin_browser, custom):
    response = admin_browser.post(f"{CHANGELIST}{custom.pk}/change/", form_data(custom, priority=3))
    assert response.status_code == 302
    row = PatternChange.objects.get(pattern=custom, action="update")
    assert (row.before["priority"], row.after["priority"], row.via) == (100, 3, "admin")


def test_a_regex_that_does_not_compile_is_an_error_on_the_field(admin_browser, custom):
    response = admin_browser.post(f"{CHANGELIST}{custom.pk}/change/", form_data(custom, pattern="regex:(oops"))
    assert response.status_code == 200
    assert "pattern" in response.context["adminform"].form.errors
    custom.refresh_from_db()
    assert custom.pattern != "regex:(oops"


def test_a_built_in_name_and_pattern_are_read_only(admin_browser, built_in):
    response = admin_browser.get(f"{CHANGELIST}{built_in.pk}/change/")
    form = response.context["adminform"].form
    assert "name" not in form.fields and "pattern" not in form.fields
    admin_browser.post(f"{CHANGELIST}{built_in.pk}/change/", form_data(built_in, name="Renamed", pattern="x"))
    built_in.refresh_from_db()
    assert built_in.name != "Renamed" and built_in.pattern != "x"


def refusal(response) -> list[str]:
    return [str(m) for m in response.context["messages"] if m.level_tag == "error"]


def test_a_built_in_cannot_be_deleted_in_the_admin(admin_browser, built_in):
    response = admin_browser.post(f"{CHANGELIST}{built_in.pk}/delete/", {"post": "yes"}, follow=True)
    assert response.redirect_chain == [(f"{CHANGELIST}{built_in.pk}/change/", 302)]
    assert refusal(response) == [f"Built-in patterns cannot be deleted; disable it instead: “{built_in.name}”."]
    assert HermesErrorPattern.objects.filter(pk=built_in.pk).exists()


@pytest.mark.parametrize("confirmed", [{}, {"post": "yes"}])
def test_bulk_delete_with_a_built_in_selected_names_it_and_deletes_nothing(admin_browser, built_in, custom, confirmed):
    response = admin_browser.post(
        CHANGELIST,
        {"action": "delete_selected", "_selected_action": [built_in.pk, custom.pk], **confirmed},
        follow=True,
    )
    assert response.status_code == 200 and response.redirect_chain == [(CHANGELIST, 302)]
    assert refusal(response) == [f"Built-in patterns cannot be deleted; disable it instead: “{built_in.name}”."]
    assert "related objects" not in response.content.decode()
    assert HermesErrorPattern.objects.filter(pk__in=[built_in.pk, custom.pk]).count() == 2


def test_bulk_delete_of_two_built_ins_names_both_in_chinese(admin_browser, built_in):
    other = BuiltInPatternFactory(name="Zz second")
    response = admin_browser.post(
        CHANGELIST,
        {"action": "delete_selected", "_selected_action": [built_in.pk, other.pk], "post": "yes"},
        follow=True,
        HTTP_ACCEPT_LANGUAGE="zh-Hans",
    )
    assert refusal(response) == [f"内置模式不能删除，请改为停用：“{built_in.name}”, “Zz second”。"]


def test_bulk_delete_of_custom_patterns_asks_first(admin_browser, custom):
    response = admin_browser.post(CHANGELIST, {"action": "delete_selected", "_selected_action": [custom.pk]})
    assert response.status_code == 200 and "Are you sure you want to delete" in response.content.decode()
    assert HermesErrorPattern.objects.filter(pk=custom.pk).exists()


def test_bulk_delete_of_custom_patterns_keeps_their_history(admin_browser):
    doomed = PatternFactory()
    admin_browser.post(CHANGELIST, {"action": "delete_selected", "_selected_action": [doomed.pk], "post": "yes"})
    assert not HermesErrorPattern.objects.filter(pk=doomed.pk).exists()
    assert PatternChange.objects.get(pattern_ref=doomed.pk, action="delete").via == "admin"


def test_the_disable_action_writes_one_history_row_per_pattern(admin_browser, built_in, custom):
    response = admin_browser.post(
        CHANGELIST, {"action": "disable_selected", "_selected_action": [built_in.pk, custom.pk]}
    )
    assert response.status_code == 302
    assert not HermesErrorPattern.objects.filter(pk__in=[built_in.pk, custom.pk], enabled=True).exists()
    rows = PatternChange.objects.filter(pattern_ref__in=[built_in.pk, custom.pk], action="disable", via="admin")
    assert rows.count() == 2


def test_the_enable_action_enables_and_records(admin_browser):
    off = PatternFactory(enabled=False)
    admin_browser.post(CHANGELIST, {"action": "enable_selected", "_selected_action": [off.pk]})
    off.refresh_from_db()
    assert off.enabled and PatternChange.objects.filter(pattern=off, action="enable").exists()


def test_the_history_is_shown_read_only_in_the_admin(admin_browser, custom):
    admin_browser.post(CHANGELIST, {"action": "disable_selected", "_selected_action": [custom.pk]})
    response = admin_browser.get("/admin/patterns/patternchange/")
    assert response.status_code == 200 and custom.name in response.content.decode()
    assert admin_browser.get("/admin/patterns/patternchange/add/").status_code == 403


def test_the_admin_refuses_a_pattern_that_makes_the_enabled_set_too_costly(admin_browser, superuser):
    from tests.patterns.test_scope import COSTLY, _fill_up_to_the_limit

    _fill_up_to_the_limit()
    new = PatternFactory.build(name="One too many", pattern=COSTLY.format(999))
    response = admin_browser.post(f"{CHANGELIST}add/", form_data(new))
    assert response.status_code == 200 and "too costly to compile" in response.content.decode()
    assert not HermesErrorPattern.objects.filter(name="One too many").exists()


def test_a_pattern_page_in_the_admin_labels_every_field_in_chinese(admin_browser, built_in):
    seed_history = admin_browser.get(
        f"/admin/patterns/hermeserrorpattern/{built_in.pk}/change/", HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()
    for english in ("Key:", "Created at:", "Updated at:", ">Before<", ">After<"):
        assert english not in seed_history, english
    for chinese in ("键", "已创建", "更新于"):
        assert chinese in seed_history, chinese


def test_a_pattern_page_in_the_admin_shows_its_history_as_json_and_says_how_each_change_was_made(admin_browser):
    seeded = HermesErrorPattern.objects.get(key="rate-limit")
    page = admin_browser.get(
        f"/admin/patterns/hermeserrorpattern/{seeded.pk}/change/", HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()
    assert "&quot;key&quot;: &quot;rate-limit&quot;" in page and "&#x27;key&#x27;:" not in page
    assert ">迁移<" in page and ">migration<" not in page
    assert "+00:00" not in page  # times as the admin shows its own, not a raw timestamp
