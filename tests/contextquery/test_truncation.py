"""fit_json: cut JSON into a byte budget and keep it valid (SPEC §4.5)."""

import json

from contextquery.truncation import ELLIPSIS, fit_json, json_size


def compact(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_value_within_the_budget_is_returned_unchanged():
    value = {"result": "hello", "count": 10}
    fitted = fit_json(value, 512)
    assert fitted.value == value
    assert fitted.truncated is False
    assert fitted.original_bytes == len(compact(value))


def test_a_long_string_is_shortened_with_an_ellipsis_and_fits():
    value = {"text": "x" * 5000}
    fitted = fit_json(value, 600)
    assert fitted.truncated is True
    assert fitted.original_bytes == len(compact(value))
    assert len(compact(fitted.value)) <= 600
    assert fitted.value["text"].endswith(ELLIPSIS)
    assert fitted.value["text"].startswith("x" * 500)


def test_a_long_list_keeps_its_first_items():
    value = list(range(10000))
    fitted = fit_json(value, 1000)
    assert len(compact(fitted.value)) <= 1000
    assert fitted.value == list(range(len(fitted.value)))
    assert len(fitted.value) > 100


def test_chinese_text_is_cut_on_whole_characters():
    value = {"summary": "调用成功，结果如下。" * 500}
    fitted = fit_json(value, 777)
    encoded = compact(fitted.value)
    assert len(encoded) <= 777
    encoded.decode("utf-8")  # raises if a character was split
    assert set(fitted.value["summary"].rstrip(ELLIPSIS)) <= set("调用成功，结果如下。")


def test_the_byte_budget_counts_utf8_bytes_not_characters():
    value = "中" * 300  # 300 characters, 900 bytes, +2 quotes
    assert json_size(value) == 902
    fitted = fit_json(value, 600)
    assert fitted.truncated is True
    assert len(compact(fitted.value)) <= 600


def test_nested_lists_of_objects_stay_valid_json_of_the_same_shape():
    value = {"items": [{"id": i, "body": "lorem ipsum " * 50, "tags": ["a"] * 30} for i in range(200)]}
    fitted = fit_json(value, 2048)
    assert len(compact(fitted.value)) <= 2048
    reparsed = json.loads(compact(fitted.value))
    assert isinstance(reparsed["items"], list) and reparsed["items"]
    assert all(set(item) <= {"id", "body", "tags"} for item in reparsed["items"])
    assert reparsed["items"][0]["id"] == 0


def test_a_large_path_set_is_cut_to_whole_paths():
    graph = {
        "paths": [{"sequence": [f"N{i}-{j}" for j in range(30)], "hasBacktrack": False} for i in range(100)],
        "truncated": False,
    }
    fitted = fit_json(graph, 4096)
    assert len(compact(fitted.value)) <= 4096
    assert fitted.value["truncated"] is False  # scalars are never altered
    assert fitted.value["paths"][0]["sequence"][0] == "N0-0"


def test_a_value_that_cannot_fit_at_all_becomes_null():
    fitted = fit_json(int("9" * 2000), 512)
    assert fitted.value is None and fitted.truncated is True and fitted.original_bytes == 2000


def test_a_value_nested_as_deep_as_the_api_allows_is_cut_too():
    value = "leaf " * 200
    for _ in range(63):
        value = {"k": [value]} if _ % 2 else [value]
    fitted = fit_json(value, 512)
    assert fitted.truncated is True and len(compact(fitted.value)) <= 512
