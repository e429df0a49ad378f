"""The pattern pages under /patterns/ (SPEC §3.5): access, the table, forms,
built-in protections, copy, reset with confirmation, Try a reply, CSRF and escaping."""

import pytest
from django.test import Client
from django.utils.html import escape

from patterns.builtins import BUILTINS
from patterns.models import HermesErrorPattern, PatternChange
from tests.factories import PatternFactory

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def form(target=None, **changes):
    data = {
        "name": "Page made",
        "pattern": "page marker",
        "description": "",
        "category": "other",
        "priority": 100,
        "enabled": "on",
        "scope": "error",
    }
    if target is not None:
        data.update(
            name=target.name,
            pattern=target.pattern,
            description=target.description,
            category=target.category,
            priority=target.priority,
            scope=target.scope,
        )
        if not target.enabled:
            data.pop("enabled")
        if target.retryable:
            data["retryable"] = "on"
    data.update(changes)
    return data


# --- access ---------------------------------------------------------------------------


def test_an_anonymous_visitor_is_sent_to_the_login_page(client):
    response = client.get("/patterns/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/patterns/"


def test_the_login_page_logs_in_and_returns_to_the_patterns(client, staff_user):
    page = client.get("/accounts/login/?next=/patterns/")
    assert page.status_code == 200 and 'name="next" value="/patterns/"' in page.content.decode()
    response = client.post(
        "/accounts/login/", {"username": staff_user.username, "password": "pass-word-123", "next": "/patterns/"}
    )
    assert response.status_code == 302 and response["Location"] == "/patterns/"


def test_a_non_staff_user_is_refused(user_browser):
    assert user_browser.get("/patterns/").status_code == 403


def test_a_non_staff_user_cannot_toggle(user_browser, custom):
    assert user_browser.post(f"/patterns/{custom.pk}/toggle/").status_code == 403
    custom.refresh_from_db()
    assert custom.enabled


# --- the table ------------------------------------------------------------------------


def test_the_list_shows_built_ins_with_their_tag_and_a_disabled_delete(staff_browser):
    page = staff_browser.get("/patterns/").content.decode()
    shipped = HermesErrorPattern.objects.get(key=BUILTINS[0]["key"])
    row = page[page.index(f'id="pattern-{shipped.pk}"') :]
    row = row[: row.index("</tr>")]
    assert 'class="tag builtin"' in row and "disabled" in row and 'role="switch"' in row
    assert f"/patterns/{shipped.pk}/delete/" not in row


def list_row(page: str, pattern) -> str:
    row = page[page.index(f'id="pattern-{pattern.pk}"') :]
    return row[: row.index("</tr>")]


def test_the_list_shows_the_first_sentence_of_each_description_under_the_name(staff_browser):
    pattern = PatternFactory(priority=1, description='Says "Slow down." to a client. Seen on the gateway since May.')
    row = list_row(staff_browser.get("/patterns/").content.decode(), pattern)
    summary = row.split('class="muted pattern-summary"')[1].split("</div>")[0]
    assert summary.split(">", 1)[1] == "Says &quot;Slow down.&quot; to a client."


LONG_REGEX = "regex:(?:upstream|gateway) (?:said|answered) (?:no capacity|too busy|try later) for (?:model|engine) \\S+"


def test_the_list_folds_a_long_regex_behind_its_length_with_the_full_text_inside(staff_browser):
    shipped = PatternFactory(pattern=LONG_REGEX, priority=1)
    row = list_row(staff_browser.get("/patterns/").content.decode(), shipped)
    summary = row.split("<summary")[1].split("</summary>")[0]
    assert f"<code>regex</code> · {len(shipped.pattern)} characters" in summary
    full = escape(shipped.pattern)
    assert f'title="{full}"' in summary and f'<code class="pattern-text">{full}</code></details>' in row


def test_the_list_shows_a_short_pattern_whole(staff_browser):
    custom = PatternFactory(priority=1)
    row = list_row(staff_browser.get("/patterns/").content.decode(), custom)
    assert f'<code class="pattern-text">{escape(custom.pattern)}</code>' in row and "<details" not in row


def test_the_folded_pattern_length_is_shown_in_chinese(staff_browser):
    shipped = PatternFactory(pattern=LONG_REGEX, priority=1)
    page = staff_browser.get("/patterns/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert f"<code>regex</code> · {len(shipped.pattern)} 个字符" in list_row(page, shipped)


def test_the_pattern_page_shows_the_full_pattern_text(staff_browser):
    shipped = HermesErrorPattern.objects.get(key="http-429")
    page = staff_browser.get(f"/patterns/{shipped.pk}/").content.decode()
    assert f'<code class="pattern-text">{escape(shipped.pattern)}</code>' in page


def test_the_first_page_lists_every_shipped_built_in_and_the_custom_patterns(staff_browser, custom):
    page = staff_browser.get("/patterns/")
    shown = {p.pk for p in page.context["page_obj"]}
    assert set(HermesErrorPattern.objects.values_list("pk", flat=True)) == shown
    assert len(shown) == len(BUILTINS) + 1


def test_the_list_links_delete_for_a_custom_pattern(staff_browser, custom):
    page = staff_browser.get("/patterns/", {"search": custom.name}).content.decode()
    assert f'href="/patterns/{custom.pk}/delete/"' in page


def test_the_list_filters_with_the_shared_filterset(staff_browser, custom):
    other = PatternFactory(name="Somewhere else", category="quota")
    page = staff_browser.get("/patterns/", {"search": custom.name, "isBuiltIn": "false"})
    names = [p.name for p in page.context["page_obj"]]
    assert names == [custom.name] and other.name not in names


def test_a_bad_filter_value_shows_an_error_not_a_crash(staff_browser):
    response = staff_browser.get("/patterns/", {"category": "weather"})
    assert response.status_code == 200 and response.context["filter"].errors


# --- forms ------------------------------------------------------------------------------


def test_creating_on_the_page_stores_it_with_history(staff_browser, staff_user):
    response = staff_browser.post("/patterns/new/", form())
    created = HermesErrorPattern.objects.get(name="Page made")
    assert response.status_code == 302 and response["Location"] == f"/patterns/{created.pk}/"
    row = PatternChange.objects.get(pattern=created)
    assert (row.via, row.actor) == ("page", staff_user)


def test_a_regex_that_does_not_compile_shows_the_error_on_the_field(staff_browser):
    response = staff_browser.post("/patterns/new/", form(pattern="regex:(unclosed"))
    assert response.status_code == 200
    assert "pattern" in response.context["form"].errors
    assert not HermesErrorPattern.objects.filter(name="Page made").exists()


def test_a_duplicate_name_shows_the_error_on_the_field(staff_browser, custom):
    response = staff_browser.post("/patterns/new/", form(name=custom.name))
    assert "name" in response.context["form"].errors


def test_editing_on_the_page_records_the_change(staff_browser, custom):
    response = staff_browser.post(f"/patterns/{custom.pk}/edit/", form(custom, priority=9))
    assert response.status_code == 302
    row = PatternChange.objects.get(pattern=custom, action="update")
    assert (row.before["priority"], row.after["priority"]) == (100, 9)


def test_a_built_in_name_and_pattern_cannot_be_changed_on_the_page(staff_browser, built_in):
    staff_browser.post(f"/patterns/{built_in.pk}/edit/", form(built_in, name="Renamed", pattern="zzz", priority=4))
    built_in.refresh_from_db()
    assert built_in.priority == 4 and built_in.name != "Renamed" and built_in.pattern != "zzz"


def test_the_pattern_page_shows_its_history(staff_browser, custom):
    staff_browser.post(f"/patterns/{custom.pk}/toggle/")
    page = staff_browser.get(f"/patterns/{custom.pk}/")
    assert [row["change"].action for row in page.context["history"]] == ["disable"]
    assert 'id="history"' in page.content.decode()


# --- delete, toggle, copy, reset ------------------------------------------------------------


def test_deleting_asks_first_then_deletes(staff_browser, custom):
    assert staff_browser.get(f"/patterns/{custom.pk}/delete/").status_code == 200
    assert HermesErrorPattern.objects.filter(pk=custom.pk).exists()
    response = staff_browser.post(f"/patterns/{custom.pk}/delete/")
    assert response.status_code == 302 and not HermesErrorPattern.objects.filter(pk=custom.pk).exists()


def test_deleting_a_built_in_pattern_is_refused_on_the_page(staff_browser, built_in):
    response = staff_browser.post(f"/patterns/{built_in.pk}/delete/")
    assert response.status_code == 409
    assert 'id="delete-refused"' in response.content.decode()
    assert HermesErrorPattern.objects.filter(pk=built_in.pk).exists()


def test_the_switch_toggles_and_returns_to_the_page_it_came_from(staff_browser, built_in):
    response = staff_browser.post(f"/patterns/{built_in.pk}/toggle/", {"next": "/patterns/?enabled=true"})
    assert response["Location"] == "/patterns/?enabled=true"
    built_in.refresh_from_db()
    assert built_in.enabled is False


def test_the_switch_ignores_a_next_on_another_site(staff_browser, custom):
    response = staff_browser.post(f"/patterns/{custom.pk}/toggle/", {"next": "https://evil.example/"})
    assert response["Location"] == "/patterns/"


def test_toggle_needs_post(staff_browser, custom):
    assert staff_browser.get(f"/patterns/{custom.pk}/toggle/").status_code == 405


def test_copy_opens_the_edit_form_of_the_new_pattern(staff_browser, built_in):
    response = staff_browser.post(f"/patterns/{built_in.pk}/copy/")
    copy = HermesErrorPattern.objects.get(name=f"{built_in.name} (copy)")
    assert response["Location"] == f"/patterns/{copy.pk}/edit/" and not copy.is_built_in


def test_reset_shows_a_confirmation_and_changes_nothing_until_confirmed(staff_browser, custom):
    page = staff_browser.get("/patterns/reset/")
    assert page.status_code == 200 and 'id="confirm-reset"' in page.content.decode()
    assert HermesErrorPattern.objects.filter(pk=custom.pk).exists()


def test_the_reset_confirmation_names_the_custom_patterns_it_deletes(staff_browser, custom):
    page = staff_browser.get("/patterns/reset/").content.decode()
    assert "This deletes the 1 custom pattern" in page


def test_the_reset_confirmation_says_when_there_is_no_custom_pattern(staff_browser):
    page = staff_browser.get("/patterns/reset/").content.decode()
    assert "There are no custom patterns to delete." in page and "all 0" not in page


def test_confirmed_reset_restores_the_defaults(staff_browser, custom):
    response = staff_browser.post("/patterns/reset/")
    assert response.status_code == 302
    assert not HermesErrorPattern.objects.filter(is_built_in=False).exists()
    assert set(HermesErrorPattern.objects.values_list("key", flat=True)) >= {d["key"] for d in BUILTINS}


def test_the_reset_banner_uses_the_singular_for_one_of_each(staff_browser, custom):
    HermesErrorPattern.objects.filter(key=BUILTINS[0]["key"]).update(enabled=False)
    HermesErrorPattern.objects.filter(key=BUILTINS[1]["key"]).delete()
    page = staff_browser.post("/patterns/reset/", follow=True).content.decode()
    assert "Reset to defaults: 1 custom pattern deleted, 1 built-in restored, 1 missing built-in re-installed." in page


def test_the_reset_banner_uses_the_plural_for_none(staff_browser):
    page = staff_browser.post("/patterns/reset/", follow=True).content.decode()
    assert (
        "Reset to defaults: 0 custom patterns deleted, 0 built-ins restored, 0 missing built-ins re-installed." in page
    )


def test_the_reset_banner_is_shown_in_chinese(staff_browser, custom):
    page = staff_browser.post("/patterns/reset/", follow=True, HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "已恢复默认：删除 1 个自定义模式，恢复 0 个内置模式，重新安装 0 个缺失的内置模式。" in page


# --- Try a reply ----------------------------------------------------------------------------


def test_try_a_reply_marks_the_match(staff_browser):
    pattern = PatternFactory(name="Boom", pattern="kaboom", priority=1)
    response = staff_browser.post("/patterns/try/", {"text": "Well: KABOOM, sorry"})
    page = response.content.decode()
    assert response.context["result"]["found"].pattern_id == pattern.pk
    assert "Well: <mark>KABOOM</mark>, sorry" in page


def test_try_a_reply_says_when_nothing_matches(staff_browser):
    response = staff_browser.post("/patterns/try/", {"text": "The summary is attached."})
    assert response.context["result"]["found"] is None
    assert "<mark>" not in response.content.decode()


@pytest.mark.parametrize("blank", ["   \n\t ", ""])
def test_try_a_blank_reply_says_it_is_a_failure_not_a_success(staff_browser, blank):
    response = staff_browser.post("/patterns/try/", {"text": blank})
    page = response.content.decode()
    assert response.status_code == 200 and response.context["result"]["blank"]
    assert "counts as a success" not in page and "This reply is an error." in page
    assert "empty agent reply" in page and "Category: Incomplete" in page and 'class="result is-error"' in page


def test_try_a_blank_reply_is_explained_in_chinese(staff_browser):
    page = staff_browser.post("/patterns/try/", {"text": " "}, HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "空白的智能体回复" in page and "未完成" in page


def test_try_a_reply_escapes_the_reply(staff_browser):
    PatternFactory(pattern="kaboom", priority=1)
    page = staff_browser.post("/patterns/try/", {"text": f"{SCRIPT} kaboom {SCRIPT}"}).content.decode()
    assert SCRIPT not in page and f"{ESCAPED} <mark>kaboom</mark> {ESCAPED}" in page


def test_try_a_reply_counts_no_hit(staff_browser):
    pattern = PatternFactory(pattern="kaboom", priority=1)
    staff_browser.post("/patterns/try/", {"text": "kaboom"})
    pattern.refresh_from_db()
    assert pattern.hit_count == 0


# --- CSRF and escaping -----------------------------------------------------------------------


def test_a_post_without_a_csrf_token_is_refused(staff_user, custom):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(staff_user)
    assert browser.post(f"/patterns/{custom.pk}/toggle/").status_code == 403
    custom.refresh_from_db()
    assert custom.enabled


@pytest.mark.parametrize("url", ["/patterns/", "/patterns/{id}/", "/patterns/{id}/edit/", "/patterns/{id}/delete/"])
def test_every_user_supplied_field_is_escaped(staff_browser, url):
    hostile = PatternFactory(name=f"N{SCRIPT}", pattern=f"P{SCRIPT}", description=f"D{SCRIPT}")
    page = staff_browser.get(url.format(id=hostile.pk), {"search": SCRIPT} if url == "/patterns/" else {})
    text = page.content.decode()
    assert SCRIPT not in text and ESCAPED in text


def test_the_history_escapes_what_it_shows(staff_browser, staff_user):
    staff_user.username = f"u{SCRIPT}"[:150]
    staff_user.save()
    hostile = PatternFactory(description="plain")
    staff_browser.force_login(staff_user)
    staff_browser.post(f"/patterns/{hostile.pk}/edit/", form(hostile, description=f"D{SCRIPT}"))
    text = staff_browser.get(f"/patterns/{hostile.pk}/").content.decode()
    assert SCRIPT not in text and ESCAPED in text


# --- Simplified Chinese ---------------------------------------------------------------------


def test_the_pattern_list_is_shown_in_chinese(staff_browser):
    page = staff_browser.get("/patterns/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "新建模式" in page and "恢复默认" in page and "试一条回复" in page and 'lang="zh-hans"' in page


def test_the_login_page_is_shown_in_chinese(client):
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "用户名" in page and "密码" in page and "登录" in page


def test_the_language_switch_keeps_chinese_for_the_session(staff_browser):
    response = staff_browser.post("/i18n/setlang/", {"language": "zh-hans", "next": "/patterns/"})
    assert response.status_code == 302
    assert "新建模式" in staff_browser.get("/patterns/").content.decode()


def test_try_a_reply_escapes_the_matched_pattern_name(staff_browser):
    PatternFactory(name=f"N{SCRIPT}", pattern="kaboom", priority=1)
    page = staff_browser.post("/patterns/try/", {"text": "kaboom"}).content.decode()
    assert SCRIPT not in page and f"N{ESCAPED}" in page


def test_try_a_reply_shows_the_models_verdict_and_score_when_no_pattern_matches(staff_browser):
    HermesErrorPattern.objects.all().delete()
    text = "Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests'}}"
    response = staff_browser.post("/patterns/try/", {"text": text})
    page = response.content.decode()
    assert response.context["result"]["model"].category == "rate_limit"
    assert "detection model calls it a failed LLM call" in page and 'id="try-model-score"' in page


def test_try_a_reply_shows_the_model_score_of_an_ordinary_answer(staff_browser):
    response = staff_browser.post("/patterns/try/", {"text": "The summary is attached."})
    assert response.context["result"]["model_score"] < 0.5 and "counts as a success" in response.content.decode()


def test_try_a_reply_says_the_model_leaves_a_short_reply_to_the_patterns(staff_browser):
    response = staff_browser.post("/patterns/try/", {"text": "工作流、访问、令牌"})
    page = response.content.decode()
    assert response.context["result"]["model_score"] is not None and 'id="try-model-left-out"' in page
    assert "counts as a success" in page


def test_try_a_reply_says_nothing_of_the_model_s_reach_for_a_sentence_it_judged(staff_browser):
    response = staff_browser.post(
        "/patterns/try/", {"text": "The summary is attached and the figures are in the table."}
    )
    assert 'id="try-model-left-out"' not in response.content.decode()


def test_the_history_says_how_a_change_was_made_in_chinese(staff_browser):
    seeded = HermesErrorPattern.objects.get(key="http-429")
    page = staff_browser.get(f"/patterns/{seeded.pk}/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    history = page.split('id="history"')[1]
    assert "<td>迁移</td>" in history and "<td>migration</td>" not in history


def test_try_a_reply_says_in_chinese_that_the_model_leaves_a_short_reply_to_the_patterns(staff_browser):
    response = staff_browser.post("/patterns/try/", {"text": "工作流、访问、令牌"}, HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert "检测模型不评判这条回复" in response.content.decode()
