"""Training of the second signal with scikit-learn, exported as plain weights (SPEC §3.3a).

:func:`detector_fit` fits the character n-gram TF-IDF and the two logistic
regressions described in :mod:`patterns.classifier`; :func:`weights_export`
turns them into a JSON-able dict that :func:`patterns.classifier.model_judge`
reads without scikit-learn. :func:`out_of_fold_probabilities` and
:func:`threshold_choose` choose the threshold leave-source-out. Deterministic:
rows are sorted and de-duplicated, solvers are deterministic. Pure: no Django.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from patterns.classifier import (
    CATEGORY_C,
    CATEGORY_CLASS_WEIGHT,
    DIGITS,
    ERROR_C,
    HEAD_CHARS,
    MAX_FEATURES,
    MIN_DF,
    NGRAM_RANGE,
    ORDINARY_WEIGHT,
    TAIL_CHARS,
    WEIGHTS_FORMAT,
    model_judge,
    model_text,
)
from patterns.corpus import family_folds
from patterns.matching import model_may_judge


def _rows_sorted(rows: list[dict]) -> list[dict]:
    """Rows in a stable order (text, then label), duplicates of (text, label) dropped."""
    seen = set()
    out = []
    for row in sorted(
        rows, key=lambda r: (r["text"], bool(r["isError"]), r.get("category") or "", bool(r.get("ordinary")))
    ):
        key = (row["text"], bool(row["isError"]), row.get("category") or "")
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def detector_fit(rows: list[dict]):
    """Fit the vectorizer and both models on ``rows`` (``text``, ``isError``, ``category``; rows
    marked ``ordinary`` weigh ORDINARY_WEIGHT in the error model, the others 1).

    Returns ``(vectorizer, error_model, category_model)`` (scikit-learn objects).
    Raises ValueError when ``rows`` lack either errors or non-errors.
    """
    with threadpool_limits(limits=1):  # BLAS threads fight over a shared machine: one is fastest here
        return _fit(rows)


def _fit(rows: list[dict]):

    rows = _rows_sorted(rows)
    labels = [bool(r["isError"]) for r in rows]
    if all(labels) or not any(labels):
        raise ValueError("training needs both failed calls and ordinary answers")
    vectorizer = TfidfVectorizer(
        analyzer="char_wb",
        ngram_range=NGRAM_RANGE,
        lowercase=True,
        sublinear_tf=True,
        min_df=MIN_DF,
        max_features=MAX_FEATURES,
        dtype=np.float64,
    )
    matrix = vectorizer.fit_transform([model_text(r["text"]) for r in rows])
    error_model = LogisticRegression(C=ERROR_C, max_iter=2000, class_weight="balanced")
    weights = np.array([ORDINARY_WEIGHT if row.get("ordinary") else 1.0 for row in rows])
    error_model.fit(matrix, labels, sample_weight=weights)
    error_rows = [i for i, label in enumerate(labels) if label]
    categories = [rows[i]["category"] or "other" for i in error_rows]
    category_model = None
    if len(set(categories)) > 1:
        category_model = LogisticRegression(C=CATEGORY_C, max_iter=2000, class_weight=CATEGORY_CLASS_WEIGHT)
        category_model.fit(matrix[error_rows], categories)
    else:
        category_model = categories[0]
    return vectorizer, error_model, category_model


def _round(value: float) -> float:
    return float(f"{value:.{DIGITS}g}")


def weights_export(fitted, *, threshold: float, version: str) -> dict:
    """Plain weights of a :func:`detector_fit` result: vocabulary (n-gram → index), idf, the
    error model's coefficients and intercept, the category model's classes, coefficients and
    intercepts, the threshold and a version label. JSON-able; floats kept to DIGITS digits."""
    vectorizer, error_model, category_model = fitted
    vocabulary = {gram: int(index) for gram, index in sorted(vectorizer.vocabulary_.items())}
    weights = {
        "format": WEIGHTS_FORMAT,
        "version": version,
        "threshold": _round(threshold),
        "ngramRange": list(NGRAM_RANGE),
        "headChars": HEAD_CHARS,
        "tailChars": TAIL_CHARS,
        "vocabulary": vocabulary,
        "idf": [_round(v) for v in vectorizer.idf_],
        "errorCoef": [_round(v) for v in error_model.coef_[0]],
        "errorIntercept": _round(error_model.intercept_[0]),
    }
    if isinstance(category_model, str):
        weights.update(categories=[category_model], categoryCoef=[], categoryIntercept=[])
    else:
        weights.update(
            categories=[str(c) for c in category_model.classes_],
            categoryCoef=[[_round(v) for v in row] for row in category_model.coef_],
            categoryIntercept=[_round(v) for v in category_model.intercept_],
        )
    return weights


def sklearn_probabilities(fitted, texts: list[str]) -> list[float]:
    """scikit-learn's own probability of a failed call for each text (the reference for tests)."""
    vectorizer, error_model, _category = fitted
    matrix = vectorizer.transform([model_text(t) for t in texts])
    positive = list(error_model.classes_).index(True)
    return [float(p[positive]) for p in error_model.predict_proba(matrix)]


#: The head window the model's gate reads when training and measuring (the default ``PATTERNS_SCAN_CHARS``).
GATE_HEAD_CHARS = 500


def gated_probability(text: str, probability: float, *, head_chars: int = GATE_HEAD_CHARS) -> float:
    """``probability`` (0 to 1) where production lets the model judge ``text``
    (:func:`patterns.matching.model_may_judge`), else 0.0: a threshold is chosen on the replies
    the model's verdict can decide, not on short answers or answers about errors it never judges."""
    return probability if model_may_judge(text, head_chars=head_chars, probability=probability) else 0.0


def fold_weights_fit(folds: list[list[dict]], *, extra: list[dict]) -> list[dict]:
    """Leave-source-out: for each fold, the weights (:func:`weights_export`, threshold 0.5) fitted on
    the other folds plus ``extra``, in the folds' order."""
    return [
        weights_export(
            detector_fit([row for other, rows in enumerate(folds) if other != index for row in rows] + extra),
            threshold=0.5,
            version="fold",
        )
        for index in range(len(folds))
    ]


def out_of_fold_probabilities(
    folds: list[list[dict]], *, extra: list[dict], fold_weights: list[dict] | None = None
) -> list[tuple[dict, float, str]]:
    """Leave-source-out: each fold judged by the weights fitted without it (``fold_weights`` when the
    caller has them, else :func:`fold_weights_fit`). Returns ``(row, probability, category)`` for every
    row of every fold, the probability 0.0 where the model may not judge the row (:func:`gated_probability`)."""
    judged = []
    for fold, weights in zip(folds, fold_weights or fold_weights_fit(folds, extra=extra), strict=True):
        for row in fold:
            verdict = model_judge(weights, row["text"])
            judged.append((row, gated_probability(row["text"], verdict.probability), verdict.category))
    return judged


#: The highest out-of-fold false-positive rate on ordinary answers a threshold may have: nearly
#: every production reply is an ordinary answer, so this rate is the share of runs misjudged. Half of
#: the 0.5 % a deployment can bear, because answers from sources nobody has seen are flagged more
#: often than the folds show out of fold: ordinary batch 6's folds, judged before anything was tuned
#: on them, had 5 of 224 flagged at 0.6461 (the threshold a 0.5 % cap chose) and 2 at 0.7413 (this
#: cap's), while batch 18's folds lost no failed reply between the two (138 of 144 found at both).
MAX_ORDINARY_FP_RATE = 0.0025


def threshold_choose(
    judged: list[tuple[dict, float, str]],
    *,
    min_precision: float = 0.98,
    max_ordinary_fp_rate: float = MAX_ORDINARY_FP_RATE,
) -> float:
    """The lowest threshold (so the highest recall) at which the pooled out-of-fold precision is
    at least ``min_precision`` and at most ``max_ordinary_fp_rate`` of the rows marked
    ``ordinary`` score at or above it (checked only when there are such rows). Falls back to
    0.99 when no threshold meets both."""
    candidates = sorted({round(p, 4) for _row, p, _c in judged} | {0.5}, reverse=True)
    scored = sorted(((p, bool(row["isError"]), bool(row.get("ordinary"))) for row, p, _c in judged), reverse=True)
    ordinary_total = sum(1 for _p, _error, ordinary in scored if ordinary)
    best = None
    flagged = true_pos = ordinary_fp = 0
    for threshold in candidates:  # one sweep down the scores: the rows at or above each candidate
        while flagged < len(scored) and scored[flagged][0] >= threshold:
            true_pos += scored[flagged][1]
            ordinary_fp += scored[flagged][2]
            flagged += 1
        if not flagged:
            continue
        if ordinary_total and ordinary_fp > max_ordinary_fp_rate * ordinary_total:
            break
        if true_pos / flagged >= min_precision:
            best = threshold
    return best if best is not None else 0.99


#: The seeds of the k-fold draws by family over which the threshold is chosen, pooled. One draw's cap
#: counts a handful of ordinary answers, and which answers land out of fold at which score depends on the
#: draw: on the folds of batches 1-21 one draw chose 0.7323, another 0.8480, the shipped one 0.8591
#: (recall 0.929, 0.910, 0.910); three pooled give 0.8424, each draw's recall at it within 0.003.
THRESHOLD_SEEDS = (7, 11, 13)

#: What, beside the rows, decides the weights: a change to any of these gives a new version.
TRAINING_SETTINGS = {
    "ngramRange": list(NGRAM_RANGE),
    "minDf": MIN_DF,
    "maxFeatures": MAX_FEATURES,
    "errorC": ERROR_C,
    "categoryC": CATEGORY_C,
    "categoryClassWeight": CATEGORY_CLASS_WEIGHT,
    "ordinaryWeight": ORDINARY_WEIGHT,
    "maxOrdinaryFpRate": MAX_ORDINARY_FP_RATE,
}


def rows_digest(rows: list[dict], *, seeds=None) -> str:
    """A short digest of training rows (text and labels), of TRAINING_SETTINGS and of the threshold's
    fold draws (``seeds``, THRESHOLD_SEEDS when None), to name a model's version: the same rows trained
    with other settings get another version."""
    settings = dict(TRAINING_SETTINGS, thresholdSeeds=list(THRESHOLD_SEEDS if seeds is None else seeds))
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for row in _rows_sorted(rows):
        digest.update(json.dumps([row["text"], bool(row["isError"]), row.get("category")]).encode())
    return digest.hexdigest()[:12]


@dataclass
class TrainingReport:
    """What :func:`detector_train` did: rows used (``ordinary_rows`` of them ordinary answers), the
    chosen threshold, the pooled out-of-fold precision and recall at it and the out-of-fold
    false-positive rate on ordinary answers (leave-source-out on the folds)."""

    fold_rows: int
    extra_rows: int
    threshold: float
    precision: float
    recall: float
    ordinary_rows: int = 0
    ordinary_fp_rate: float = 0.0


def pooled_out_of_fold_probabilities(
    fold_rows: list[dict], *, extra: list[dict], k: int = 5, seeds=None, fold_weights: dict | None = None
) -> list[tuple[dict, float, str]]:
    """:func:`out_of_fold_probabilities` for each k-fold draw of ``fold_rows`` by family
    (:func:`patterns.corpus.family_folds` with each of ``seeds``, THRESHOLD_SEEDS when None), concatenated:
    every row judged once per draw. ``fold_weights`` maps a seed to the weights the caller already
    fitted for that draw (:func:`fold_weights_fit`)."""
    judged = []
    for seed in THRESHOLD_SEEDS if seeds is None else seeds:
        folds = family_folds(fold_rows, k=k, seed=seed)
        judged += out_of_fold_probabilities(folds, extra=extra, fold_weights=(fold_weights or {}).get(seed))
    return judged


def detector_train(
    *, fold_rows: list[dict], extra_rows: list[dict], version_prefix: str, k: int = 5, seeds=None
) -> tuple[dict, TrainingReport]:
    """Train the shipped kind of model (SPEC §3.3a): choose the threshold leave-source-out on
    ``fold_rows`` (the corpus folds and the ordinary answers' folds, split together into ``k``
    family folds once per seed of ``seeds`` (THRESHOLD_SEEDS when None), the draws pooled: :func:`pooled_out_of_fold_probabilities`;
    ``extra_rows`` always in training), then fit on all rows and export. The version is
    ``<prefix>-<digest of the rows and settings>``, so the same rows give byte-identical weights.
    The report's figures are pooled over the draws. Raises ValueError when the rows lack errors or
    non-errors."""
    judged = pooled_out_of_fold_probabilities(fold_rows, extra=extra_rows, k=k, seeds=seeds)
    threshold = threshold_choose(judged)
    flagged = [row for row, probability, _c in judged if probability >= threshold]
    errors = sum(1 for row, _p, _c in judged if row["isError"])
    true_pos = sum(1 for row in flagged if row["isError"])
    ordinary = [probability for row, probability, _c in judged if row.get("ordinary")]
    rows = fold_rows + extra_rows
    weights = weights_export(
        detector_fit(rows), threshold=threshold, version=f"{version_prefix}-{rows_digest(rows, seeds=seeds)}"
    )
    report = TrainingReport(
        fold_rows=len(fold_rows),
        extra_rows=len(extra_rows),
        threshold=weights["threshold"],
        precision=true_pos / len(flagged) if flagged else 1.0,
        recall=true_pos / errors if errors else 1.0,
        ordinary_rows=sum(1 for row in fold_rows if row.get("ordinary")),
        ordinary_fp_rate=sum(1 for p in ordinary if p >= threshold) / len(ordinary) if ordinary else 0.0,
    )
    return weights, report


def weights_dump(weights: dict) -> str:
    """The canonical JSON text of ``weights`` (compact, keys in a fixed order, newline-terminated)."""
    return json.dumps(weights, ensure_ascii=False, separators=(",", ":")) + "\n"
