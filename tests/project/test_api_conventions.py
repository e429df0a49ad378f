"""SPEC §2 conventions, proved through the error-pattern endpoints: envelope,
status codes, body rules, trailing slash, pagination, auth order, CSRF, OpenAPI."""

import json
import re

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from rest_framework.test import APIClient

from patterns.models import HermesErrorPattern
from project.api import parse_json_bytes
from tests.support import envelope_body

pytestmark = pytest.mark.django_db

URL = "/api/hermes-error-patterns"
VALID = {"name": "Convention check", "pattern": "convention marker"}


def raw_post(client, path, payload: bytes):
    return client.generic("POST", path, payload, content_type="application/json")


def test_a_success_is_wrapped_in_the_envelope(user_client):
    body = envelope_body(user_client.get(URL))
    assert body["message"] == "success" and "results" in body["data"]


def test_an_error_is_wrapped_in_the_envelope_with_a_sentence(staff_client):
    body = envelope_body(staff_client.get(f"{URL}/987654"))
    assert body["data"] is None and body["message"] != "success"


def test_a_validation_error_is_422_with_errors_per_field(staff_client):
    response = staff_client.post(URL, {"name": "", "pattern": "regex:("}, format="json")
    assert response.status_code == 422
    errors = envelope_body(response)["data"]["errors"]
    assert set(errors) >= {"name"} and all(isinstance(m, list) and m for m in errors.values())


def test_malformed_json_is_400(staff_client):
    response = raw_post(staff_client, URL, b'{"name": "x",')
    assert response.status_code == 400 and "JSON" in envelope_body(response)["message"]


def test_invalid_utf8_is_400(staff_client):
    response = raw_post(staff_client, URL, b'{"name": "\xff\xfe", "pattern": "x"}')
    assert response.status_code == 400 and "UTF-8" in envelope_body(response)["message"]


def test_a_nul_character_is_422_and_stores_nothing(staff_client):
    count = HermesErrorPattern.objects.count()
    response = raw_post(staff_client, URL, b'{"name": "a\\u0000b", "pattern": "x"}')
    assert response.status_code == 422 and "NUL" in envelope_body(response)["message"]
    assert HermesErrorPattern.objects.count() == count


@pytest.mark.parametrize(
    "payload, field",
    [
        (b'{"text": "a\\u0000b"}', "text"),
        (b'{"text": "ok", "logs": [{"type": "TEXT", "message": "a\\u0000b"}]}', "logs[0].message"),
        (b'{"text": "ok", "extra": {"a\\u0000b": 1}}', "extra"),
        (b'"a\\u0000b"', "nonFieldErrors"),
    ],
)
def test_a_nul_character_is_a_422_whose_errors_name_the_field_path(staff_client, payload, field):
    body = envelope_body(raw_post(staff_client, f"{URL}/detect", payload))
    assert body["code"] == 422 and "NUL" in body["message"]
    assert list(body["data"]["errors"]) == [field] and "NUL" in body["data"]["errors"][field][0]


def test_nesting_deeper_than_64_is_422(staff_client):
    deep = "[" * 65 + "]" * 65
    response = raw_post(staff_client, URL, f'{{"name": "x", "pattern": "y", "extra": {deep}}}'.encode())
    assert response.status_code == 422 and "64" in envelope_body(response)["message"]


@pytest.mark.parametrize("depth", [65, 100_000])
def test_nesting_too_deep_is_a_422_with_a_non_field_error(staff_client, depth):
    body = envelope_body(raw_post(staff_client, f"{URL}/detect", ("[" * depth + "]" * depth).encode()))
    assert body["code"] == 422 and list(body["data"]["errors"]) == ["nonFieldErrors"]
    assert "64" in body["data"]["errors"]["nonFieldErrors"][0]


def test_nesting_of_64_is_accepted_by_the_parser():
    deep = "[" * 63 + "]" * 63
    assert parse_json_bytes(f'{{"text": "hello", "extra": {deep}}}'.encode())["text"] == "hello"


@override_settings(MAX_BODY_BYTES=1024)
def test_a_body_over_the_limit_is_413(staff_client):
    response = raw_post(staff_client, f"{URL}/detect", json.dumps({"text": "x" * 2000}).encode())
    assert response.status_code == 413 and "1024" in envelope_body(response)["message"]


@pytest.mark.parametrize("suffix", ["", "/"])
def test_get_accepts_an_optional_trailing_slash(user_client, suffix):
    assert user_client.get(URL + suffix).status_code == 200


@pytest.mark.parametrize("suffix", ["", "/"])
def test_post_accepts_an_optional_trailing_slash(staff_client, suffix):
    response = staff_client.post(f"{URL}/detect{suffix}", {"text": "hi"}, format="json")
    assert response.status_code == 200
    created = staff_client.post(URL + suffix, {**VALID, "name": f"Slash {suffix!r}"}, format="json")
    assert created.status_code == 201


def test_pagination_reads_page_and_page_size(user_client):
    total = HermesErrorPattern.objects.count()
    first = envelope_body(user_client.get(URL, {"pageSize": 1}))["data"]
    second = envelope_body(user_client.get(URL, {"pageSize": 1, "page": 2}))["data"]
    assert first["count"] == total and len(first["results"]) == 1
    assert first["results"][0]["id"] != second["results"][0]["id"]
    assert first["previous"] is None and second["previous"]


def test_the_default_page_size_is_50(user_client):
    from tests.factories import PatternFactory

    PatternFactory.create_batch(max(0, 51 - HermesErrorPattern.objects.count()))
    assert len(envelope_body(user_client.get(URL))["data"]["results"]) == 50


@pytest.mark.parametrize("size", ["0", "501", "ten", "-1"])
def test_a_bad_page_size_is_422(user_client, size):
    response = user_client.get(URL, {"pageSize": size})
    body = envelope_body(response, 422)
    assert body["message"] == f"pageSize: must be an integer from 1 to 500, not {size!r}."
    assert body["data"]["errors"] == {"pageSize": [f"must be an integer from 1 to 500, not {size!r}."]}


def test_a_page_beyond_the_end_is_404(user_client):
    assert user_client.get(URL, {"page": 9999}).status_code == 404


def test_no_auth_is_401_with_www_authenticate(anon_client):
    response = anon_client.get(URL)
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Token")
    envelope_body(response)


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "Basic"])
def test_a_valid_token_sent_with_another_scheme_is_told_the_scheme_is_token(user_client, scheme):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {user_client.token}")
    body = envelope_body(client.get(URL), 401)
    assert body["message"] == f"The Authorization scheme is Token: send 'Authorization: Token <token>', not {scheme}."


def test_no_auth_on_a_write_is_401_not_403(anon_client):
    response = anon_client.post(URL, VALID, format="json")
    assert response.status_code == 401


def test_a_non_staff_write_is_403(user_client):
    response = user_client.post(URL, VALID, format="json")
    assert response.status_code == 403
    envelope_body(response)
    assert not HermesErrorPattern.objects.filter(name=VALID["name"]).exists()


def test_a_session_post_without_a_csrf_token_is_403(staff_user):
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(staff_user)
    assert browser.get(URL).status_code == 200
    response = browser.post(URL, VALID, format="json")
    assert response.status_code == 403 and "CSRF" in envelope_body(response)["message"]
    assert not HermesErrorPattern.objects.filter(name=VALID["name"]).exists()


def test_a_token_post_needs_no_csrf_token(staff_client):
    staff_client.enforce_csrf_checks = True
    assert staff_client.post(URL, VALID, format="json").status_code == 201


def test_an_unsupported_method_is_405(staff_client):
    assert staff_client.delete(URL).status_code == 405


def test_the_openapi_schema_lists_the_pattern_operations_with_the_envelope(user_client):
    response = user_client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = json.loads(response.content)
    paths = schema["paths"]
    expected = {
        ("/api/hermes-error-patterns/", "get"),
        ("/api/hermes-error-patterns/", "post"),
        ("/api/hermes-error-patterns/{id}/", "get"),
        ("/api/hermes-error-patterns/{id}/", "put"),
        ("/api/hermes-error-patterns/{id}/", "patch"),
        ("/api/hermes-error-patterns/{id}/", "delete"),
        ("/api/hermes-error-patterns/{id}/edit/", "post"),
        ("/api/hermes-error-patterns/{id}/delete/", "post"),
        ("/api/hermes-error-patterns/{id}/toggle/", "post"),
        ("/api/hermes-error-patterns/{id}/copy/", "post"),
        ("/api/hermes-error-patterns/reset/", "post"),
        ("/api/hermes-error-patterns/detect/", "post"),
    }
    assert {(p, m) for p, ops in paths.items() for m in ops} >= expected
    create = paths["/api/hermes-error-patterns/"]["post"]["responses"]
    body = create["201"]["content"]["application/json"]["schema"]
    assert body["required"] == ["code", "message", "data"] and body["properties"]["code"]["enum"] == [201]
    conflict = paths["/api/hermes-error-patterns/{id}/delete/"]["post"]["responses"]["409"]
    assert conflict["content"]["application/json"]["schema"]["properties"]["code"]["enum"] == [409]
    detect = paths["/api/hermes-error-patterns/detect/"]["post"]["responses"]["200"]
    assert detect["content"]["application/json"]["schema"]["properties"]["data"]


def test_the_swagger_ui_loads(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200 and b"swagger" in response.content.lower()


@pytest.mark.slow
def test_the_swagger_ui_and_its_assets_are_served_locally_after_collectstatic(client, tmp_path):
    page = client.get("/api/docs/").content.decode()
    assert not re.search(r"(?:https?:)?//[\w.-]+\.\w", page), "the docs page names an external host"
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    scripts = [url for url in assets if url.endswith(".js")]
    assert scripts and all(url.startswith("/static/") for url in assets)
    with override_settings(STATIC_ROOT=tmp_path):
        call_command("collectstatic", "--no-input", verbosity=0)
        fresh = Client()  # whitenoise indexes STATIC_ROOT when its middleware is built
        for url in scripts:
            response = fresh.get(url)
            assert response.status_code == 200, url
            assert b"".join(response.streaming_content if response.streaming else [response.content])


def test_swagger_groups_operations_by_resource():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    tags = {path: {tag for op in ops.values() for tag in op.get("tags", [])} for path, ops in schema["paths"].items()}
    assert tags["/api/runs/"] == {"Runs"}
    assert tags["/api/runs/{run_id}/visits/"] == {"Visits"}
    assert tags["/api/runs/{run_id}/visits/{visit_uuid}/logs/"] == {"Logs"}
    assert tags["/api/runs/{run_id}/visits/{visit_uuid}/tokens/"] == {"Context tokens"}
    assert tags["/api/hermes-error-patterns/"] == {"Error patterns"}
