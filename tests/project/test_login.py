"""Log-in throttling and password rules (issue 12): django-axes locks a user out
from an address after HERMES_OPS_LOGIN_FAILURE_LIMIT wrong passwords; Django's
standard password validators hold."""

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "pass-word-123"  # UserFactory's


def log_in(client: Client, username: str, password: str, address: str = "127.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_fifteen_wrong_passwords_lock_the_user_out_even_with_the_right_one(settings):
    user = UserFactory(is_staff=True)
    client = Client()
    answers = [log_in(client, user.username, f"guess-{n}").status_code for n in range(15)]
    assert answers[: settings.AXES_FAILURE_LIMIT - 1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)
    assert set(answers[settings.AXES_FAILURE_LIMIT :]) == {429}
    locked = log_in(client, user.username, PASSWORD)
    assert locked.status_code == 429 and "_auth_user_id" not in client.session
    assert "Too many failed log-ins" in locked.content.decode()


def test_a_lock_out_holds_for_that_user_from_that_address_only(settings):
    victim, other = UserFactory(), UserFactory()
    for n in range(settings.AXES_FAILURE_LIMIT):
        log_in(Client(), victim.username, f"guess-{n}")
    assert log_in(Client(), other.username, PASSWORD).status_code == 302
    assert log_in(Client(), victim.username, PASSWORD, address="10.1.2.3").status_code == 302


def test_the_admin_log_in_is_throttled_too(settings):
    admin = UserFactory(is_staff=True, is_superuser=True)
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        client.post("/admin/login/", {"username": admin.username, "password": f"guess-{n}"})
    response = client.post("/admin/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 429


def test_the_lock_out_page_is_in_chinese_for_a_chinese_browser(settings):
    user = UserFactory()
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    for n in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, user.username, f"guess-{n}")
    assert "登录失败次数过多" in log_in(client, user.username, PASSWORD).content.decode()


@pytest.mark.parametrize("password", ["short1", "password123", "12345678901", "user-name-x"])
def test_weak_passwords_are_refused_by_the_standard_validators(password):
    with pytest.raises(ValidationError):
        validate_password(password, user=UserFactory.build(username="user-name-x"))
