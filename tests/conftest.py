"""Shared fixtures (cookiecutter-django style): users, API clients, factories.

hermes-agent reads HERMES_HOME at import time; it points at a throw-away
folder for the whole session (removed at exit) so no test touches a real ~/.hermes.
"""

import atexit
import os
import shutil
import tempfile

if not os.environ.get("HERMES_HOME"):  # xdist workers inherit the controller's folder
    os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="hermes-home-")
    atexit.register(shutil.rmtree, os.environ["HERMES_HOME"], ignore_errors=True)

import pytest
from django.utils import translation
from knox.models import AuthToken
from rest_framework.test import APIClient

from tests.browser import browser  # the headless Chromium fixture of every app's browser tests
from tests.factories import UserFactory


def pytest_collection_modifyitems(config, items):
    """Deselect ``postgresql_only`` tests when the suite runs on SQLite: they
    cannot run there, and a skip would read as a test that passed."""
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        return
    kept = [item for item in items if item.get_closest_marker("postgresql_only") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """A cheap hasher for test users: PBKDF2 costs about a second per user here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _default_language():
    """A request in another language leaves it active in the thread; the next test starts in English."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _own_var_dir(settings, tmp_path_factory):
    """Each test reads and writes its own var/ (the address make run records there, …),
    never the checkout's."""
    settings.VAR_DIR = tmp_path_factory.mktemp("var")


@pytest.fixture
def user(db):
    """An authenticated, non-staff user."""
    return UserFactory()


@pytest.fixture
def staff_user(db):
    """A staff user (may write patterns, read runs)."""
    return UserFactory(is_staff=True)


@pytest.fixture
def superuser(db):
    return UserFactory(is_staff=True, is_superuser=True)


def token_client(user) -> APIClient:
    """An APIClient authenticating with a fresh knox token of ``user``."""
    _, token = AuthToken.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    client.token = token
    return client


@pytest.fixture
def anon_client():
    return APIClient()


@pytest.fixture
def user_client(user):
    return token_client(user)


@pytest.fixture
def staff_client(staff_user):
    return token_client(staff_user)
