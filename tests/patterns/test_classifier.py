"""The learned second signal: training, plain weights, pure inference (SPEC §3.3a)."""

import json

import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from patterns import training
from patterns.classifier import ModelVerdict, _features, _prepare, char_wb_ngrams, model_judge, model_text
from patterns.corpus import corpus_rows_load, extra_rows_load, training_fold_rows_load
from patterns.detector import DEFAULT_WEIGHTS_PATH, default_weights_load
from patterns.training import (
    detector_fit,
    detector_train,
    rows_digest,
    sklearn_probabilities,
    threshold_choose,
    weights_dump,
    weights_export,
)

LONG_REPLY = ("The deployment finished and every check passed. " * 20)[:1200] + " Error code: 429 - rate limited"


@pytest.fixture(scope="module")
def fitted():
    folds, _heldout = corpus_rows_load()
    return detector_fit(folds + extra_rows_load())


@pytest.fixture(scope="module")
def weights(fitted):
    return json.loads(weights_dump(weights_export(fitted, threshold=0.6, version="test")))


def test_the_pure_n_grams_are_scikit_learns_char_wb_n_grams():
    analyzer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), lowercase=True).build_analyzer()
    for text in ["Error code: 429 -  {'error':\n\t'Rate'}", "当前分组上游负载已饱和，请稍后再试", "a b", ""]:
        assert char_wb_ngrams(text) == analyzer(text)


def test_the_hashed_features_are_scikit_learns_tf_idf_row(fitted, weights):
    vectorizer = fitted[0]
    for text in [
        LONG_REPLY,
        "Error code: 429 - {'error': {'message': '当前分组上游负载已饱和，请稍后再试'}}",
        "a",
        "  ",
    ]:
        indices, values = _features(_prepare(weights), text)
        row = vectorizer.transform([model_text(text)]).tocsr()
        order = row.indices.argsort()
        assert list(indices) == list(row.indices[order])
        assert max(abs(values - row.data[order]), default=0) < 1e-6


def test_model_judge_reproduces_scikit_learns_probability_to_a_millionth(fitted, weights):
    folds, heldout = corpus_rows_load()
    texts = [row["text"] for row in folds[:60]] + ["", "   ", "ok", LONG_REPLY]
    expected = sklearn_probabilities(fitted, texts)
    for text, want in zip(texts, expected, strict=True):
        assert abs(model_judge(weights, text).probability - want) < 1e-6, text


def test_model_judge_names_scikit_learns_category_and_its_retryable_flag(fitted, weights):
    vectorizer, _error, category_model = fitted
    texts = ["HTTP 429: Rate limit exceeded. Please try again later.", "402 Insufficient Balance", "invalid x-api-key"]
    predicted = category_model.predict(vectorizer.transform(texts))
    for text, category in zip(texts, predicted, strict=True):
        verdict = model_judge(weights, text)
        assert verdict.category == category
        assert verdict.retryable == (category in {"rate_limit", "overloaded", "server_error", "timeout", "network"})


def test_a_long_reply_is_read_as_its_head_and_tail():
    text = "x" * 2000
    assert model_text(text) == "x" * 500 + "\n" + "x" * 800
    assert model_text("short") == "short"


def test_a_provider_error_scores_high_and_a_glossary_line_low(weights):
    assert model_judge(weights, "Error code: 429 - {'error': {'message': 'Rate limit reached'}}").probability > 0.9
    assert model_judge(weights, "The capital of France is Paris.").probability < 0.5


def test_the_threshold_is_the_highest_recall_at_the_precision_asked():
    error, ok = {"isError": True}, {"isError": False}
    judged = [(error, 0.95, "x"), (ok, 0.9, ""), (error, 0.8, "x"), (error, 0.7, "x"), (ok, 0.6, ""), (error, 0.4, "x")]
    assert threshold_choose(judged, min_precision=0.75) == 0.7
    assert threshold_choose(judged, min_precision=0.98) == 0.95


def test_the_threshold_flags_at_most_the_allowed_share_of_ordinary_answers():
    error, ok, ordinary = {"isError": True}, {"isError": False}, {"isError": False, "ordinary": True}
    judged = [(error, 0.95, "x"), (error, 0.9, "x"), (ordinary, 0.85, ""), (error, 0.8, "x"), (ok, 0.1, "")]
    judged += [(ordinary, 0.05, "")] * 99
    assert threshold_choose(judged, min_precision=0.7, max_ordinary_fp_rate=0.0) == 0.9
    assert threshold_choose(judged, min_precision=0.7, max_ordinary_fp_rate=0.01) == 0.5


def test_ordinary_answers_weigh_ordinary_weight_in_training(monkeypatch):
    monkeypatch.setattr(training, "ORDINARY_WEIGHT", 0.5)
    rows = [
        {"text": "quota reached, try later", "isError": True, "category": "quota"},
        {"text": "Quota reached: 92% of target", "isError": False, "category": None},
        {"text": "Quota reached: 92% of target", "isError": False, "category": None, "ordinary": True},
    ]
    plain = sklearn_probabilities(detector_fit(rows[:2]), ["Quota reached: 92% of target"])[0]
    lighter = sklearn_probabilities(detector_fit([rows[0], rows[2]]), ["Quota reached: 92% of target"])[0]
    assert lighter > plain


def test_the_same_rows_trained_with_other_settings_get_another_version(monkeypatch):
    rows = [{"text": "quota reached, try later", "isError": True, "category": "quota"}]
    before = rows_digest(rows)
    monkeypatch.setitem(training.TRAINING_SETTINGS, "errorC", 1.0)
    assert rows_digest(rows) != before


def test_the_weights_are_plain_json_never_a_pickle():
    text = DEFAULT_WEIGHTS_PATH.read_text(encoding="utf-8")
    weights = json.loads(text)
    assert {"vocabulary", "idf", "errorCoef", "errorIntercept", "categories", "threshold", "version"} <= set(weights)
    assert isinstance(model_judge(weights, "HTTP 500: Internal Server Error"), ModelVerdict)


@pytest.mark.slow
def test_retraining_on_the_shipped_corpus_gives_the_shipped_default_byte_for_byte():
    weights, _report = detector_train(
        fold_rows=training_fold_rows_load(), extra_rows=extra_rows_load(), version_prefix="default"
    )
    assert weights_dump(weights) == DEFAULT_WEIGHTS_PATH.read_text(encoding="utf-8")


def test_the_shipped_default_has_a_threshold_chosen_for_precision():
    weights = default_weights_load()
    assert 0.5 <= weights["threshold"] < 1.0
    assert weights["version"].startswith("default-")


def test_the_threshold_is_chosen_over_several_fold_draws_pooled():
    rows = [{"text": f"quota gone {i}", "isError": True, "category": "quota", "family": f"e{i}"} for i in range(10)]
    rows += [{"text": f"report {i} done", "isError": False, "category": None, "family": f"o{i}"} for i in range(10)]
    one = training.pooled_out_of_fold_probabilities(rows, extra=[], k=2, seeds=(7,))
    three = training.pooled_out_of_fold_probabilities(rows, extra=[], k=2, seeds=(7, 11, 13))
    assert len(three) == 3 * len(one) == 3 * len(rows)
    assert rows_digest(rows, seeds=(7,)) != rows_digest(rows, seeds=(7, 11, 13))


def test_a_model_trained_on_one_category_names_it():
    rows = [
        {"text": "quota gone, buy more credits", "isError": True, "category": "quota"},
        {"text": "quota exhausted for this key", "isError": True, "category": "quota"},
        {"text": "the report is done", "isError": False, "category": None},
    ]
    weights = weights_export(detector_fit(rows), threshold=0.5, version="one")
    assert model_judge(weights, "quota gone again").category == "quota"
