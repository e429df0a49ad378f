"""The HTML error pages (404, 403, 500) and the favicon: styled, translated,
and the 500 page rendered without the database or a request context."""

from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.db import connection
from django.test import Client, RequestFactory
from django.utils import translation

from project.views import handler500


@pytest.fixture
def logged_in(user):
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_an_unknown_page_is_a_styled_404_in_the_layout(client):
    response = client.get("/no-such-page/")
    page = response.content.decode()
    assert response.status_code == 404
    assert 'id="error-404"' in page and "Page not found" in page and "<code>/no-such-page/</code>" in page
    assert 'href="/patterns/"' in page and "hermes/app.css" in page


@pytest.mark.django_db
def test_the_404_page_shows_markup_in_the_path_percent_encoded(client):
    page = client.get("/<script>x</script>/").content.decode()
    assert "<script>x" not in page and "<code>/%3Cscript%3Ex%3C/script%3E/</code>" in page


@pytest.mark.django_db
def test_the_404_page_is_shown_in_chinese(client):
    page = client.get("/no-such-page/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "页面没有找到" in page and "处没有内容" in page and 'lang="zh-hans"' in page


def test_a_refused_page_is_a_styled_403_that_says_why(logged_in):
    response = logged_in.get("/patterns/")
    page = response.content.decode()
    assert response.status_code == 403
    assert 'id="error-403"' in page and "Access denied" in page and "The pattern pages are for staff users." in page


def test_the_403_page_is_shown_in_chinese(logged_in):
    page = logged_in.get("/runs/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "无权访问" in page


def test_the_500_page_renders_without_the_database_or_a_context():
    # No django_db mark: any query here would fail the test.
    response = handler500(RequestFactory().get("/patterns/"))
    page = response.content.decode()
    assert response.status_code == 500
    assert 'id="error-500"' in page and "Server error" in page and "hermes/favicon.svg" in page


def test_a_page_is_a_500_page_when_the_database_is_down(logged_in, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise connection.Database.OperationalError("could not connect")

    with monkeypatch.context() as patch:
        patch.setattr(connection, "cursor", broken_cursor)
        response = logged_in.get("/patterns/")
    assert response.status_code == 500 and 'id="error-500"' in response.content.decode()


@pytest.mark.django_db
def test_every_page_links_the_favicon(client):
    assert 'rel="icon" href="/static/hermes/favicon.svg"' in client.get("/accounts/login/").content.decode()


@pytest.mark.django_db
def test_favicon_ico_redirects_to_the_svg_static_file(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"] == "/static/hermes/favicon.svg"
    found = finders.find("hermes/favicon.svg")
    assert found and Path(found).read_text(encoding="utf-8").startswith("<svg")


def test_the_500_page_is_shown_in_chinese():
    with translation.override("zh-hans"):
        page = handler500(RequestFactory().get("/runs/")).content.decode()
    assert "服务器错误" in page and 'lang="zh-hans"' in page
