"""The pattern pages in headless Chromium against a live server (SPEC §3.5):
log in, toggle, create, edit, copy, try a reply, delete refused for a
built-in, reset with confirmation, and the Chinese UI."""

import pytest
from playwright.sync_api import expect

from patterns.builtins import BUILTINS
from patterns.models import HermesErrorPattern, PatternChange
from patterns.seeding import seed_builtins
from tests.browser import log_in, new_page, shot
from tests.factories import PatternFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(browser):
    context, tab = new_page(browser)
    yield tab
    context.close()


@pytest.fixture
def ops(live_server, page):
    """Built-ins seeded, a staff user logged in through the login page, on /patterns/."""
    seed_builtins()
    log_in(page, base_url=live_server.url, path="/patterns/")
    return page


def row_of(page, pattern):
    return page.locator(f"#pattern-{pattern.pk}")


def shipped(index=0):
    return HermesErrorPattern.objects.get(key=BUILTINS[index]["key"])


def test_logging_in_shows_the_built_in_patterns(ops):
    expect(ops.locator("h1")).to_have_text("Error patterns")
    for definition in BUILTINS:
        expect(ops.locator("#pattern-table")).to_contain_text(definition["name"])
    expect(ops.locator("#pattern-table .tag.builtin").first).to_be_visible()
    shot(ops, "patterns-list")


def test_toggling_a_built_in_disables_and_enables_it(ops):
    built_in = shipped()
    switch = row_of(ops, built_in).locator("button.switch")
    switch.click()
    expect(row_of(ops, built_in).locator("button.switch")).to_have_attribute("aria-checked", "false")
    assert HermesErrorPattern.objects.get(pk=built_in.pk).enabled is False
    row_of(ops, built_in).locator("button.switch").click()
    expect(row_of(ops, built_in).locator("button.switch")).to_have_attribute("aria-checked", "true")
    assert list(
        PatternChange.objects.filter(pattern=built_in, via="page").values_list("action", flat=True).order_by("id")
    ) == ["disable", "enable"]


def test_creating_a_pattern_in_the_form(ops):
    ops.click("#new-pattern")
    ops.fill("#id_name", "Gateway refused")
    ops.fill("#id_pattern", "regex:^gateway refused")
    ops.select_option("#id_category", "network")
    ops.check("#id_retryable")
    ops.click("#pattern-form button[type=submit]")
    expect(ops.locator("h1")).to_contain_text("Gateway refused")
    expect(ops.locator("#history")).to_contain_text("created")
    created = HermesErrorPattern.objects.get(name="Gateway refused")
    assert (created.category, created.retryable, created.is_built_in) == ("network", True, False)


def test_a_regex_that_does_not_compile_shows_its_error_in_the_form(ops):
    ops.click("#new-pattern")
    ops.fill("#id_name", "Broken")
    ops.fill("#id_pattern", "regex:(unclosed")
    ops.click("#pattern-form button[type=submit]")
    expect(ops.locator(".field-pattern .errorlist")).to_contain_text("does not compile")
    shot(ops, "pattern-form-error")
    assert not HermesErrorPattern.objects.filter(name="Broken").exists()


def test_editing_a_pattern_records_the_change(ops, live_server):
    custom = PatternFactory(name="Editable", priority=100)
    ops.goto(f"{live_server.url}/patterns/{custom.pk}/edit/")
    ops.fill("#id_priority", "12")
    ops.click("#pattern-form button[type=submit]")
    expect(ops.locator("#history")).to_contain_text("updated")
    expect(ops.locator("#history")).to_contain_text("12")
    assert HermesErrorPattern.objects.get(pk=custom.pk).priority == 12
    shot(ops, "pattern-detail-history")


def test_a_built_in_edit_form_shows_name_and_pattern_read_only(ops, live_server):
    built_in = shipped()
    ops.goto(f"{live_server.url}/patterns/{built_in.pk}/edit/")
    expect(ops.locator("#id_name")).to_be_disabled()
    expect(ops.locator("#id_pattern")).to_be_disabled()


def test_copying_a_built_in_opens_an_editable_copy(ops):
    built_in = shipped()
    row_of(ops, built_in).get_by_role("button", name="Copy").click()
    expect(ops.locator("#id_name")).to_have_value(f"{built_in.name} (copy)")
    expect(ops.locator("#id_pattern")).to_be_enabled()
    assert HermesErrorPattern.objects.filter(name=f"{built_in.name} (copy)", is_built_in=False).exists()


def test_trying_a_reply_highlights_the_match(ops):
    PatternFactory(name="Upstream exploded", pattern="upstream exploded", priority=1)
    ops.fill("#try-form textarea", "Sorry, UPSTREAM EXPLODED while answering.")
    ops.click("#try-form button[type=submit]")
    expect(ops.locator("#try-result")).to_contain_text("This reply is an error.")
    expect(ops.locator("#matched-pattern")).to_have_text("Upstream exploded")
    expect(ops.locator("#try-reply mark")).to_have_text("UPSTREAM EXPLODED")
    shot(ops, "try-a-reply")


def test_trying_a_normal_reply_says_it_is_a_success(ops):
    ops.fill("#try-form textarea", "The quarterly summary is attached.")
    ops.click("#try-form button[type=submit]")
    expect(ops.locator("#try-result")).to_contain_text("counts as a success")
    expect(ops.locator("#try-reply mark")).to_have_count(0)


def test_deleting_a_built_in_is_refused(ops, live_server):
    built_in = shipped()
    expect(row_of(ops, built_in).get_by_role("button", name="Delete")).to_be_disabled()
    ops.goto(f"{live_server.url}/patterns/{built_in.pk}/delete/")
    expect(ops.locator("main")).to_contain_text("Built-in patterns cannot be deleted")
    expect(ops.locator("#confirm-delete")).to_have_count(0)
    assert HermesErrorPattern.objects.filter(pk=built_in.pk).exists()


def test_deleting_a_custom_pattern_asks_first(ops, live_server):
    custom = PatternFactory(name="Doomed")
    ops.goto(f"{live_server.url}/patterns/")
    row_of(ops, custom).get_by_role("link", name="Delete").click()
    expect(ops.locator("h1")).to_contain_text("Delete “Doomed”?")
    ops.click("#confirm-delete")
    expect(ops.locator(".messages")).to_contain_text("Deleted “Doomed”.")
    assert not HermesErrorPattern.objects.filter(pk=custom.pk).exists()


def test_reset_to_defaults_asks_for_confirmation(ops, live_server):
    custom = PatternFactory(name="Ours")
    built_in = shipped()
    HermesErrorPattern.objects.filter(pk=built_in.pk).update(enabled=False)
    ops.goto(f"{live_server.url}/patterns/")
    ops.click("#reset-patterns")
    expect(ops.locator("h1")).to_have_text("Reset to defaults?")
    shot(ops, "reset-confirmation")
    ops.get_by_role("link", name="Cancel").click()
    assert HermesErrorPattern.objects.filter(pk=custom.pk).exists()
    ops.click("#reset-patterns")
    ops.click("#confirm-reset")
    expect(ops.locator(".messages")).to_contain_text("Reset to defaults")
    assert not HermesErrorPattern.objects.filter(pk=custom.pk).exists()
    assert HermesErrorPattern.objects.get(pk=built_in.pk).enabled is True


def test_the_interface_switches_to_chinese(ops):
    ops.select_option("#language-form select", "zh-hans")
    ops.click("#language-form button[type=submit]")
    expect(ops.locator("h1")).to_have_text("错误模式")
    expect(ops.locator("#new-pattern")).to_have_text("新建模式")
    expect(ops.locator("#reset-patterns")).to_have_text("恢复默认")
    shot(ops, "patterns-list-zh")


def test_ops_add_a_provider_message_as_one_plain_line_and_it_catches_the_error_not_the_prose(ops, live_server):
    """The issue's story (SPEC §3.2, §3.3): a new provider message, typed as one plain
    line with the default scope, catches the error reply and not an answer that
    mentions the phrase."""
    ops.click("#new-pattern")
    ops.fill("#id_name", "Wallet empty")
    ops.fill("#id_pattern", "workspace wallet is empty")
    expect(ops.locator("#id_scope")).to_have_value("error")
    ops.select_option("#id_category", "quota")
    ops.click("#pattern-form button[type=submit]")
    expect(ops.locator("h1")).to_contain_text("Wallet empty")
    created = HermesErrorPattern.objects.get(name="Wallet empty")
    assert created.scope == "error"

    ops.goto(f"{live_server.url}/patterns/try/")
    ops.fill("#try-form textarea", "Error: Workspace wallet is empty. Top up to continue.")
    ops.click("#try-form button[type=submit]")
    expect(ops.locator("#try-result")).to_contain_text("This reply is an error.")
    expect(ops.locator("#matched-pattern")).to_have_text("Wallet empty")
    expect(ops.locator("#try-matches")).to_contain_text("Wallet empty")

    ops.fill(
        "#try-form textarea", "When the workspace wallet is empty, the console shows a banner; top up from Billing."
    )
    ops.click("#try-form button[type=submit]")
    expect(ops.locator("#try-result")).to_contain_text("No enabled pattern matches")
    shot(ops, "try-a-reply-prose")


def test_the_history_keeps_who_how_and_what_on_one_line_beside_a_long_regex(ops, live_server):
    ops.select_option("#language-form select", "zh-hans")
    ops.click("#language-form button[type=submit]")
    rate_limit = HermesErrorPattern.objects.get(key="rate-limit")  # a regex of 400 characters
    ops.goto(f"{live_server.url}/patterns/{rate_limit.pk}/")
    lines = ops.locator("#history tbody tr:first-child td:nth-child(-n+4)").evaluate_all(
        """els => els.map(e => { const r = document.createRange(); r.selectNodeContents(e);
          return [e.textContent.trim(), new Set(Array.from(r.getClientRects()).filter(b => b.width > 0)
            .map(b => Math.round(b.top))).size]; })"""
    )
    assert [text for text, count in lines if count > 1] == [], lines
    shot(ops, "pattern-history-zh")
