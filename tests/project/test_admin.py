"""The admin as ops read it (issue 13): its titles and app names in their
language, and API tokens shown once and their digest never."""

import re

import pytest
from django.test import Client
from knox.models import AuthToken

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_browser():
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def test_the_admin_index_names_itself_and_every_app_in_chinese(admin_browser):
    page = admin_browser.get("/admin/").content.decode()
    assert "Hermes Ops 管理后台" in page and "Django" not in page.split("<h1")[1].split("</h1>")[0]
    for name in ("错误模式", "运行与上下文查询", "登录限流", "API 令牌"):
        assert name in page, name
    for english in ("Error patterns", "Runs and context query", ">Axes<", "Auth tokens", "Access attempts"):
        assert english not in page, english


def test_adding_an_api_token_in_the_admin_shows_it_once_and_never_the_digest(admin_browser):
    owner = UserFactory(username="engine-owner")
    done = admin_browser.post(
        "/admin/project/apitoken/add/", {"user": owner.pk, "expiry_0": "", "expiry_1": ""}, follow=True
    )
    page = done.content.decode()
    stored = AuthToken.objects.get(user=owner)
    shown = re.search(r"([0-9a-f]{64})", page)
    assert shown and shown.group(1)[:4] == stored.token_key[:4]
    assert stored.digest not in page
    listing = admin_browser.get("/admin/project/apitoken/").content.decode()
    assert stored.digest not in listing and shown.group(1) not in listing and f"{stored.token_key[:4]}…" in listing
    assert admin_browser.get(f"/admin/project/apitoken/{stored.pk}/change/").status_code in (302, 403)


def test_an_api_token_is_revoked_from_the_list_without_its_digest(admin_browser):
    _, token = AuthToken.objects.create(user=UserFactory(username="to-revoke"))
    listing = admin_browser.get("/admin/project/apitoken/").content.decode()
    action = re.search(r'action="(/admin/project/apitoken/revoke/[0-9a-f]+/)"', listing).group(1)
    assert AuthToken.objects.get().digest not in action
    done = admin_browser.post(action, follow=True)
    assert done.status_code == 200 and not AuthToken.objects.exists()


def header_texts(page: str) -> list[str]:
    """The column headers of an admin change list, as shown."""
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r'<th scope="col"[^>]*>(.*?)</th>', page, re.S)]


def test_the_api_token_app_is_titled_hermes_ops_not_project(admin_browser):
    page = admin_browser.get("/admin/").content.decode()
    assert re.search(r'<a href="/admin/project/"[^>]*>Hermes Ops</a>', page)
    assert ">Project<" not in page


def test_the_api_token_list_names_its_columns_in_chinese(admin_browser):
    AuthToken.objects.create(user=UserFactory(username="engine-owner"))
    headers = header_texts(admin_browser.get("/admin/project/apitoken/").content.decode())
    assert {"用户", "创建时间", "过期时间"} <= set(headers), headers
    assert not {"User", "Created", "Expiry"} & set(headers), headers
