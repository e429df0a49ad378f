"""The client address behind a reverse proxy (issue 14): X-Real-IP is read only
from a trusted proxy, so a caller can never choose the address the app checks."""

import ipaddress

import pytest
from axes.models import AccessAttempt
from django.test import Client, override_settings

from project.proxies import client_address
from tests.factories import UserFactory

NGINX = "127.0.0.2"
BEHIND_NGINX = override_settings(HERMES_OPS_TRUSTED_PROXY_NETWORKS=[ipaddress.ip_network(NGINX)])


def test_without_trusted_proxies_no_header_is_read():
    assert client_address(peer="127.0.0.1", real_ip="203.0.113.9") == "127.0.0.1"


@BEHIND_NGINX
def test_a_trusted_proxys_x_real_ip_is_the_client_address():
    assert client_address(peer=NGINX, real_ip="203.0.113.9") == "203.0.113.9"


@BEHIND_NGINX
def test_a_caller_that_is_not_the_proxy_cannot_choose_its_address():
    assert client_address(peer="127.0.0.1", real_ip="203.0.113.9") == "127.0.0.1"


@BEHIND_NGINX
@pytest.mark.parametrize("header", ["", "203.0.113.9, 10.0.0.1", "not-an-address", "203.0.113.9\n"])
def test_a_malformed_x_real_ip_from_the_proxy_keeps_the_proxys_address(header):
    assert client_address(peer=NGINX, real_ip=header) == ("203.0.113.9" if header.strip() == "203.0.113.9" else NGINX)


@BEHIND_NGINX
@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/internal/context/path", "/metrics"])
def test_a_remote_client_behind_the_proxy_is_refused_by_the_local_only_routes(path):
    client = Client(REMOTE_ADDR=NGINX, HTTP_X_REAL_IP="203.0.113.9")
    response = client.post(path, b"{}", content_type="application/json") if "internal" in path else client.get(path)
    assert response.status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP"])
def test_log_in_throttling_counts_the_peer_address_not_a_header(header):
    user = UserFactory()
    Client().post("/accounts/login/", {"username": user.username, "password": "wrong"}, **{header: "203.0.113.9"})
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["127.0.0.1"]


@BEHIND_NGINX
@pytest.mark.django_db
def test_log_in_throttling_behind_the_proxy_counts_the_address_the_proxy_saw():
    user = UserFactory()
    Client(REMOTE_ADDR=NGINX).post(
        "/accounts/login/", {"username": user.username, "password": "wrong"}, HTTP_X_REAL_IP="198.51.100.4"
    )
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["198.51.100.4"]
