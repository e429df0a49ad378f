import io

import pytest
from django.core.management import call_command
from django.db import connection


@pytest.mark.django_db
def test_healthz_answers_ok_without_auth(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


@pytest.mark.django_db
def test_healthz_answers_503_when_the_database_is_unreachable(client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise connection.Database.OperationalError("could not connect")

    monkeypatch.setattr(connection, "cursor", broken_cursor)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == "unavailable"


@pytest.mark.django_db
def test_an_unknown_api_path_answers_404_in_the_envelope(client):
    response = client.get("/api/no-such-thing")
    assert response.status_code == 404
    body = response.json()
    assert body["code"] == 404 and body["data"] is None and "/api/no-such-thing" in body["message"]


@pytest.mark.django_db
def test_create_api_token_prints_a_working_token_on_the_last_line(user, client):
    out = io.StringIO()
    call_command("create_api_token", user.username, stdout=out)
    token = out.getvalue().strip().splitlines()[-1]
    response = client.get("/api/schema/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200
    from knox.models import AuthToken

    stored = AuthToken.objects.get(user=user)
    assert token not in (stored.digest, stored.token_key)


@pytest.mark.django_db
def test_ensure_admin_creates_one_admin_once(monkeypatch):
    from django.contrib.auth import get_user_model

    monkeypatch.setenv("HERMES_OPS_ADMIN_PASSWORD", "s3cret-pass-word")
    call_command("ensure_admin", stdout=io.StringIO())
    call_command("ensure_admin", stdout=io.StringIO())
    admins = get_user_model().objects.filter(is_superuser=True)
    assert admins.count() == 1
    assert admins.get().check_password("s3cret-pass-word")


@pytest.mark.django_db
def test_ensure_admin_names_the_existing_admin_and_how_to_set_a_new_password(monkeypatch):
    monkeypatch.setenv("HERMES_OPS_ADMIN_PASSWORD", "s3cret-pass-word")
    call_command("ensure_admin", stdout=io.StringIO())
    said = io.StringIO()
    call_command("ensure_admin", stdout=said)
    assert "/accounts/login/ as admin." in said.getvalue()
    assert "manage.py changepassword admin" in said.getvalue()
