"""The address the server hands out and prints (SPEC §4.5, issue 13): unset
BASE_URL follows the address the server was started on."""

import io
import socket

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from project import serving


@pytest.mark.parametrize(
    "host, port, url",
    [
        ("127.0.0.1", 8611, "http://127.0.0.1:8611"),
        ("0.0.0.0", 9000, "http://127.0.0.1:9000"),
        ("::", 9000, "http://[::1]:9000"),
        ("::1", 9000, "http://[::1]:9000"),
        ("localhost", 8000, "http://localhost:8000"),
    ],
)
def test_a_bound_address_is_named_as_the_agent_side_reaches_it(host, port, url):
    assert serving.listen_url(host, port) == url


def test_a_request_names_the_port_its_server_listens_on_not_the_host_header():
    meta = {"SERVER_NAME": "0.0.0.0", "SERVER_PORT": "8611", "HTTP_HOST": "evil.example:80", "wsgi.url_scheme": "http"}
    assert serving.base_url(meta) == "http://127.0.0.1:8611"


def test_base_url_set_in_the_environment_wins(settings):
    settings.HERMES_CONTEXT_QUERY = {**settings.HERMES_CONTEXT_QUERY, "BASE_URL": "http://127.0.0.1:7000"}
    assert serving.base_url({"SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8611"}) == "http://127.0.0.1:7000"
    assert serving.base_url() == "http://127.0.0.1:7000"


def test_outside_a_request_the_address_make_run_recorded_is_used():
    assert serving.base_url() == serving.FALLBACK_URL
    serving.record_base_url("http://127.0.0.1:8611")
    assert serving.base_url() == "http://127.0.0.1:8611"


def test_check_port_refuses_a_port_in_use_with_one_clear_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError, match=f"Port {port} on 127.0.0.1 is in use already.*PORT={port + 1} make run"):
            call_command("check_port", "127.0.0.1", str(port))
    assert serving.recorded_base_url() is None


def test_check_port_records_a_free_address():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    call_command("check_port", "0.0.0.0", str(port))
    assert serving.recorded_base_url() == f"http://127.0.0.1:{port}"


@pytest.mark.django_db
def test_ensure_admin_prints_the_password_last_and_framed_with_the_served_address(monkeypatch):
    monkeypatch.delenv("HERMES_OPS_ADMIN_PASSWORD", raising=False)
    serving.record_base_url("http://127.0.0.1:8611")
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[0].startswith("+-") and lines[-1].startswith("+-")
    assert "http://127.0.0.1:8611/accounts/login/" in lines[2]
    password = lines[-2].strip("| ").rsplit(": ", 1)[1]
    assert get_user_model().objects.get(username="admin").check_password(password)


@pytest.mark.django_db
def test_ensure_admin_refuses_a_weak_password_from_the_environment(monkeypatch):
    monkeypatch.setenv("HERMES_OPS_ADMIN_PASSWORD", "12345")
    with pytest.raises(CommandError, match="HERMES_OPS_ADMIN_PASSWORD is not accepted"):
        call_command("ensure_admin", stdout=io.StringIO())
    assert not get_user_model().objects.exists()
