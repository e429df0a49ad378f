"""Shared pieces of the headless-Chromium tests (Playwright driving Debian's
/usr/bin/chromium): the browser fixture, a logged-in page, screenshots.

Import this module before anything that touches the ORM: Playwright's sync
API runs an event loop in the test thread, and the ORM calls the tests make
themselves stay synchronous and safe.
"""

import os
import re
from pathlib import Path

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.factories import UserFactory

SCREENSHOTS = Path(__file__).resolve().parents[1] / "test-output" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PASSWORD = "pass-word-123"  # UserFactory's password


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def new_page(browser, *, locale="en-US"):
    """A fresh browser context (no cookies) and its page, 1400×900."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale=locale)
    context.set_default_timeout(15_000)
    return context, context.new_page()


def log_in(page, *, base_url: str, path: str):
    """Open ``path`` as a new staff user: expect the login redirect, log in
    through the form and land back on ``path``. Returns the user."""
    staff = UserFactory(is_staff=True)
    page.goto(f"{base_url}{path}")
    expect(page).to_have_url(re.compile(rf"/accounts/login/\?next={re.escape(path)}$"))
    page.fill("#id_username", staff.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit].primary")
    expect(page).to_have_url(f"{base_url}{path}")
    return staff


def shot(page, name, *, full_page=False):
    """Save a screenshot as test-output/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)
