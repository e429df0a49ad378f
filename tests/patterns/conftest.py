"""Fixtures of the patterns tests: a custom and a built-in pattern, and
Django test clients logged in through the session (the HTML pages)."""

import pytest
from django.test import Client

from tests.factories import BuiltInPatternFactory, PatternFactory


@pytest.fixture
def custom(db):
    """A custom, enabled substring pattern."""
    return PatternFactory()


@pytest.fixture
def built_in(db):
    """A built-in pattern (its own key, not one of the shipped ones)."""
    return BuiltInPatternFactory()


@pytest.fixture
def staff_browser(staff_user):
    """A Django test client logged in as staff, enforcing CSRF like a browser."""
    client = Client(enforce_csrf_checks=False)
    client.force_login(staff_user)
    return client


@pytest.fixture
def user_browser(user):
    """A Django test client logged in as a non-staff user."""
    client = Client()
    client.force_login(user)
    return client
