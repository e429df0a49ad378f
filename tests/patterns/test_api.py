"""Every route of /api/hermes-error-patterns with its success and error codes (SPEC §3.4)."""

import pytest

from patterns.builtins import BUILTINS
from patterns.models import HermesErrorPattern, PatternChange
from tests.factories import PatternFactory
from tests.support import envelope_body

pytestmark = pytest.mark.django_db

URL = "/api/hermes-error-patterns"
NEW = {"name": "Proxy refused", "pattern": "regex:^proxy refused", "category": "network", "retryable": True}


def snapshot():
    """Everything stored about patterns, to prove a refused request changed nothing."""
    return (list(HermesErrorPattern.objects.order_by("pk").values()), PatternChange.objects.count())


# --- list -----------------------------------------------------------------------------


def test_listing_paginates_and_uses_camel_case(user_client):
    data = envelope_body(user_client.get(URL, {"pageSize": 2}))["data"]
    assert data["count"] == HermesErrorPattern.objects.count()
    assert len(data["results"]) == 2 and data["next"]
    assert {"isBuiltIn", "hitCount", "lastHitAt", "createdAt", "updatedAt", "key"} <= set(data["results"][0])


def test_listing_filters_by_built_in_enabled_and_category(user_client, custom):
    PatternFactory(enabled=False, category="quota")
    assert {r["id"] for r in envelope_body(user_client.get(URL, {"isBuiltIn": "false"}))["data"]["results"]} >= {
        custom.pk
    }
    built_ins = envelope_body(user_client.get(URL, {"isBuiltIn": "true", "pageSize": 500}))["data"]["results"]
    assert built_ins and all(r["isBuiltIn"] for r in built_ins)
    disabled = envelope_body(user_client.get(URL, {"enabled": "false", "category": "quota"}))["data"]["results"]
    assert [r["category"] for r in disabled] == ["quota"] and not disabled[0]["enabled"]


def test_listing_searches_name_pattern_and_description(user_client):
    by_name = PatternFactory(name="Zebra gateway")
    by_text = PatternFactory(pattern="zebra says no")
    by_description = PatternFactory(description="Seen on ZEBRA proxies")
    results = envelope_body(user_client.get(URL, {"search": "zebra"}))["data"]["results"]
    assert {r["id"] for r in results} == {by_name.pk, by_text.pk, by_description.pk}


def test_a_bad_filter_value_is_a_422_naming_the_filter(user_client):
    response = user_client.get(URL, {"category": "sunshine"})
    assert response.status_code == 422
    assert "category" in envelope_body(response)["data"]["errors"]


@pytest.mark.parametrize("param", ["enabled", "isBuiltIn"])
@pytest.mark.parametrize("value", ["maybe", "2", "truee"])
def test_a_boolean_filter_that_is_not_true_or_false_is_a_422_naming_it(user_client, param, value):
    response = user_client.get(URL, {param: value})
    assert response.status_code == 422
    assert list(envelope_body(response)["data"]["errors"]) == [param] and param in envelope_body(response)["message"]


@pytest.mark.parametrize("on, off", [("true", "false"), ("1", "0"), ("TRUE", "False")])
def test_a_boolean_filter_reads_true_false_and_1_0(user_client, on, off):
    PatternFactory(enabled=False)
    enabled = envelope_body(user_client.get(URL, {"enabled": on, "pageSize": 500}))["data"]["results"]
    disabled = envelope_body(user_client.get(URL, {"enabled": off, "pageSize": 500}))["data"]["results"]
    assert enabled and all(r["enabled"] for r in enabled)
    assert disabled and not any(r["enabled"] for r in disabled)


def test_an_empty_boolean_filter_filters_nothing(user_client):
    PatternFactory(enabled=False)
    everything = envelope_body(user_client.get(URL, {"enabled": "", "pageSize": 500}))["data"]["count"]
    assert everything == HermesErrorPattern.objects.count()


# --- create ---------------------------------------------------------------------------


def test_creating_answers_201_with_the_pattern(staff_client):
    response = staff_client.post(URL, NEW, format="json")
    assert response.status_code == 201
    data = envelope_body(response)["data"]
    assert (data["name"], data["isBuiltIn"], data["key"], data["hitCount"], data["enabled"]) == (
        "Proxy refused",
        False,
        None,
        0,
        True,
    )
    assert PatternChange.objects.get(pattern_ref=data["id"]).via == "api"


def test_read_only_fields_sent_on_create_are_ignored(staff_client):
    response = staff_client.post(URL, {**NEW, "isBuiltIn": True, "hitCount": 99, "key": "sneaky"}, format="json")
    data = envelope_body(response)["data"]
    assert (data["isBuiltIn"], data["hitCount"], data["key"]) == (False, 0, None)


@pytest.mark.parametrize(
    "change, field",
    [
        ({"name": ""}, "name"),
        ({"name": "n" * 101}, "name"),
        ({"pattern": ""}, "pattern"),
        ({"pattern": "p" * 501}, "pattern"),
        ({"pattern": "regex:(unclosed"}, "pattern"),
        ({"pattern": "regex:(?:a{1,100}){1,100}b"}, "pattern"),
        ({"name": 5}, "name"),
        ({"enabled": "yes"}, "enabled"),
        ({"priority": "5"}, "priority"),
        ({"retryable": 1}, "retryable"),
        ({"category": "weather"}, "category"),
        ({"description": "nul\u0000here"}, None),
    ],
)
def test_bad_fields_on_create_are_a_422_naming_the_field_and_store_nothing(staff_client, change, field):
    before = snapshot()
    response = staff_client.post(URL, {**NEW, **change}, format="json")
    assert response.status_code == 422
    data = envelope_body(response)
    if field:
        assert field in data["data"]["errors"] and field in data["message"]
    assert snapshot() == before


def test_a_missing_name_is_a_422(staff_client):
    response = staff_client.post(URL, {"pattern": "x"}, format="json")
    assert response.status_code == 422 and "name" in envelope_body(response)["data"]["errors"]


def test_a_duplicate_name_is_a_422(staff_client, custom):
    response = staff_client.post(URL, {**NEW, "name": custom.name}, format="json")
    assert response.status_code == 422 and "name" in envelope_body(response)["data"]["errors"]


# --- retrieve ---------------------------------------------------------------------------


def test_retrieving_a_pattern_includes_its_history(staff_client, staff_user):
    created = envelope_body(staff_client.post(URL, NEW, format="json"))["data"]
    staff_client.post(f"{URL}/{created['id']}/toggle", format="json")
    data = envelope_body(staff_client.get(f"{URL}/{created['id']}"))["data"]
    assert [h["action"] for h in data["history"]] == ["disable", "create"]
    assert data["history"][0]["before"]["enabled"] is True and data["history"][0]["after"]["enabled"] is False
    assert data["history"][0]["actorLabel"] == staff_user.username


def test_an_unknown_id_is_a_404_in_the_envelope(user_client):
    response = user_client.get(f"{URL}/999999")
    assert response.status_code == 404 and envelope_body(response)["data"] is None


@pytest.mark.parametrize("route", ["edit", "delete", "toggle", "copy"])
def test_an_unknown_id_is_a_404_on_every_write_route(staff_client, route):
    assert staff_client.post(f"{URL}/999999/{route}", {}, format="json").status_code == 404


@pytest.mark.parametrize("method, suffix", [("get", ""), ("post", "/toggle"), ("delete", "")])
def test_a_deleted_pattern_is_a_404_that_names_the_pattern_and_its_id(staff_client, custom, method, suffix):
    gone = custom.pk
    custom.delete()
    response = getattr(staff_client, method)(f"{URL}/{gone}{suffix}")
    assert response.status_code == 404
    assert envelope_body(response)["message"] == f"No error pattern with id {gone}."


# --- edit -------------------------------------------------------------------------------


def test_post_edit_changes_only_the_fields_sent(staff_client, custom):
    response = staff_client.post(f"{URL}/{custom.pk}/edit", {"priority": 7}, format="json")
    assert response.status_code == 200
    custom.refresh_from_db()
    assert (custom.priority, envelope_body(response)["data"]["name"]) == (7, custom.name)


def test_patch_changes_a_field(staff_client, custom):
    response = staff_client.patch(f"{URL}/{custom.pk}", {"description": "new words"}, format="json")
    assert response.status_code == 200 and envelope_body(response)["data"]["description"] == "new words"


def test_put_replaces_the_editable_fields(staff_client, custom):
    response = staff_client.put(f"{URL}/{custom.pk}", {**NEW, "enabled": False}, format="json")
    assert response.status_code == 200
    custom.refresh_from_db()
    assert (custom.name, custom.pattern, custom.enabled) == (NEW["name"], NEW["pattern"], False)


@pytest.mark.parametrize("field", ["name", "pattern"])
def test_changing_a_built_in_name_or_pattern_is_a_409_that_says_to_copy_it(staff_client, built_in, field):
    before = snapshot()
    response = staff_client.post(f"{URL}/{built_in.pk}/edit", {field: "changed"}, format="json")
    assert response.status_code == 409
    assert "copy" in envelope_body(response)["message"].lower()
    assert snapshot() == before


def test_a_built_in_can_be_edited_in_its_other_fields(staff_client, built_in):
    response = staff_client.post(f"{URL}/{built_in.pk}/edit", {"name": built_in.name, "priority": 3}, format="json")
    assert response.status_code == 200 and envelope_body(response)["data"]["priority"] == 3


def test_an_invalid_regex_on_edit_is_a_422_and_changes_nothing(staff_client, custom):
    before = snapshot()
    response = staff_client.post(f"{URL}/{custom.pk}/edit", {"pattern": "regex:[z-a]"}, format="json")
    assert response.status_code == 422 and "pattern" in envelope_body(response)["data"]["errors"]
    assert snapshot() == before


# --- delete -----------------------------------------------------------------------------


def test_post_delete_removes_a_custom_pattern(staff_client, custom):
    response = staff_client.post(f"{URL}/{custom.pk}/delete")
    assert response.status_code == 200 and envelope_body(response)["data"] is None
    assert not HermesErrorPattern.objects.filter(pk=custom.pk).exists()


def test_http_delete_removes_a_custom_pattern(staff_client, custom):
    assert staff_client.delete(f"{URL}/{custom.pk}").status_code == 200
    assert not HermesErrorPattern.objects.filter(pk=custom.pk).exists()


@pytest.mark.parametrize("how", ["post", "delete"])
def test_deleting_a_built_in_pattern_is_a_409(staff_client, built_in, how):
    before = snapshot()
    if how == "post":
        response = staff_client.post(f"{URL}/{built_in.pk}/delete")
    else:
        response = staff_client.delete(f"{URL}/{built_in.pk}")
    assert response.status_code == 409
    assert built_in.name in envelope_body(response)["message"]
    assert snapshot() == before


# --- toggle, copy, reset ------------------------------------------------------------------


def test_toggle_flips_enabled_and_returns_the_pattern(staff_client, built_in):
    data = envelope_body(staff_client.post(f"{URL}/{built_in.pk}/toggle"))["data"]
    assert (data["id"], data["enabled"]) == (built_in.pk, False)
    assert envelope_body(staff_client.post(f"{URL}/{built_in.pk}/toggle"))["data"]["enabled"] is True


def test_copy_answers_201_with_an_editable_copy(staff_client, built_in):
    response = staff_client.post(f"{URL}/{built_in.pk}/copy")
    assert response.status_code == 201
    data = envelope_body(response)["data"]
    assert (data["name"], data["isBuiltIn"], data["pattern"]) == (f"{built_in.name} (copy)", False, built_in.pattern)
    second = envelope_body(staff_client.post(f"{URL}/{built_in.pk}/copy"))["data"]
    assert second["name"] == f"{built_in.name} (copy 2)"


def test_reset_restores_the_defaults(staff_client, custom):
    shipped = HermesErrorPattern.objects.get(key=BUILTINS[0]["key"])
    staff_client.post(f"{URL}/{shipped.pk}/toggle")
    response = staff_client.post(f"{URL}/reset")
    assert response.status_code == 200
    assert envelope_body(response)["data"]["deleted"] == 1
    shipped.refresh_from_db()
    assert shipped.enabled and not HermesErrorPattern.objects.filter(pk=custom.pk).exists()


# --- detect -----------------------------------------------------------------------------


def test_detect_reports_the_matching_pattern_and_its_span(user_client):
    custom = PatternFactory(pattern="upstream exploded", category="server_error", retryable=True, priority=1)
    text = "Sorry: UPSTREAM exploded today"
    data = envelope_body(user_client.post(f"{URL}/detect", {"text": text}, format="json"))["data"]
    assert 0 <= data.pop("modelScore") <= 1
    assert data == {
        "isError": True,
        "matchedBy": "pattern",
        "matchedPatternId": custom.pk,
        "matchedPatternKey": None,
        "matchedPatternName": custom.name,
        "category": "server_error",
        "retryable": True,
        "span": [7, 24],
        "matches": [
            {
                "id": custom.pk,
                "key": None,
                "name": custom.name,
                "category": "server_error",
                "retryable": True,
                "span": [7, 24],
            }
        ],
    }


def test_detect_names_the_model_when_no_pattern_matched_but_the_model_did(user_client):
    HermesErrorPattern.objects.all().delete()
    text = "Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests'}}"
    data = envelope_body(user_client.post(f"{URL}/detect", {"text": text}, format="json"))["data"]
    assert (data["isError"], data["matchedBy"], data["matchedPatternId"]) == (True, "model", None)
    assert data["category"] == "rate_limit" and data["retryable"] is True and data["modelScore"] >= 0.9


def test_detect_with_the_model_switched_off_has_no_model_score(user_client, settings):
    settings.HERMES_DETECTION_MODEL = False
    HermesErrorPattern.objects.all().delete()
    text = "Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests'}}"
    data = envelope_body(user_client.post(f"{URL}/detect", {"text": text}, format="json"))["data"]
    assert (data["isError"], data["matchedBy"], data["modelScore"]) == (False, None, None)


def test_detect_calls_a_blank_reply_an_error(user_client):
    data = envelope_body(user_client.post(f"{URL}/detect", {"text": "  "}, format="json"))["data"]
    assert (data["isError"], data["matchedBy"], data["category"]) == (True, "blank", "incomplete")


def test_detect_on_a_normal_reply_is_not_an_error(user_client):
    data = envelope_body(user_client.post(f"{URL}/detect", {"text": "The report is ready."}, format="json"))["data"]
    assert data["isError"] is False and data["matchedPatternId"] is None and data["span"] is None


def test_detect_counts_no_hit(user_client):
    custom = PatternFactory(pattern="upstream exploded", priority=1)
    user_client.post(f"{URL}/detect", {"text": "upstream exploded"}, format="json")
    custom.refresh_from_db()
    assert (custom.hit_count, custom.last_hit_at) == (0, None)


@pytest.mark.parametrize("payload", [{}, {"text": None}, {"text": 42}, ["text"]])
def test_detect_without_a_text_string_is_a_422(user_client, payload):
    response = user_client.post(f"{URL}/detect", payload, format="json")
    assert response.status_code == 422


# --- who may do what ------------------------------------------------------------------------


def test_reading_needs_authentication(anon_client):
    response = anon_client.get(URL)
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Token")


@pytest.mark.parametrize(
    "method, path",
    [
        ("post", ""),
        ("post", "/{id}/edit"),
        ("patch", "/{id}"),
        ("put", "/{id}"),
        ("delete", "/{id}"),
        ("post", "/{id}/delete"),
        ("post", "/{id}/toggle"),
        ("post", "/{id}/copy"),
        ("post", "/reset"),
    ],
)
def test_a_non_staff_user_cannot_write(user_client, custom, method, path):
    before = snapshot()
    response = getattr(user_client, method)(URL + path.format(id=custom.pk), NEW, format="json")
    assert response.status_code == 403 and envelope_body(response)["data"] is None
    assert snapshot() == before


def test_a_non_staff_user_may_try_detect(user_client):
    assert user_client.post(f"{URL}/detect", {"text": "hi"}, format="json").status_code == 200


def test_a_bad_token_is_a_401(anon_client):
    anon_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert anon_client.get(URL).status_code == 401
