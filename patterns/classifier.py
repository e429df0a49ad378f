"""The learned second signal: is a reply a failed LLM call, and of which category (SPEC §3.3a).

Training uses scikit-learn: a character n-gram TF-IDF
(``char_wb``, 2–5, lowercase, sublinear tf) feeding a logistic regression for
"is a failed call" (classes balanced; ordinary answers weighted ORDINARY_WEIGHT), and a multinomial logistic regression over the same
features for the category (classes balanced), fitted on error rows only. Inputs are sorted and the
solvers are deterministic, so the same rows give the same weights.

Training lives in :mod:`patterns.training` (scikit-learn), which exports plain
weights (a JSON-able dict; never a pickle). This module is inference only and
does not import scikit-learn (numpy only): :func:`model_judge` rebuilds the n-grams, the
TF-IDF row and the two linear models from those weights and reproduces
scikit-learn's probabilities (to 1e-6; a test compares). Pure: no Django, no
database.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from patterns.models import RETRYABLE_CATEGORIES

#: Version of the weights format written by :func:`weights_export`.
WEIGHTS_FORMAT = 1
NGRAM_RANGE = (2, 5)
#: Vectorizer and solver settings (fixed: they are part of what a test reproduces).
#: 15,000 n-grams (was 10,000): with the second batch of the corpus the rarer Chinese
#: n-grams fell out of a 10,000 vocabulary and a three-word Chinese answer scored as a
#: failure; chosen on the folds (pooled "both": recall 0.951 → 0.959, category 0.907 →
#: 0.915, ordinary answers flagged 1 → 0 of 247), never on a held-out part.
MAX_FEATURES = 15000
MIN_DF = 2
ERROR_C = 100.0
CATEGORY_C = 10.0
#: Class weights of the category model: "balanced" lets a rare category (content_filter, incomplete,
#: model_not_found) count as much as rate_limit. Chosen on the folds, leave-source-out (model-alone
#: category accuracy 0.767 -> 0.795 with C 10; C 3 to 100 changed less).
CATEGORY_CLASS_WEIGHT = "balanced"
#: Sample weight of an ordinary answer (a row of the ordinary-answers set) in the error model. It was
#: 0.5 (they are many and mostly easy); with batches 20 and 21, whose failed replies include many short
#: app strings ("配额已超限", "API 密钥无效 (401)。"), short ordinary answers out of fold scored higher
#: ("Inventory turnover for Q1: 4.6 …" 0.97) and the 0.25 % cap lifted the threshold to 0.9160. At full
#: weight: threshold 0.8591, folds "both" recall 0.942 -> 0.954, category 0.903 -> 0.911, the same 4
#: ordinary answers of 1,502 flagged (2.0 gave the same figures; ERROR_C 30 or 300 no better). With
#: the eighth ordinary batch (other systems' error words: "{"code":5012,"message":"Insufficient funds."}")
#: the cap lifted the threshold to 0.9658 (folds "both" recall 0.926, category 0.888); weighing ordinary
#: answers 2.0: 0.9394 (0.939, 0.899); 3.0: 0.9286 (0.947, 0.906), 6 of 1,729 flagged. Chosen on the
#: folds, leave-source-out, three draws pooled.
ORDINARY_WEIGHT = 3.0
#: Significant digits kept in exported floats (the probability stays within 1e-6 of scikit-learn's).
DIGITS = 8
#: Long replies are judged on their head and tail, as patterns are (SPEC §3.3): the model sees
#: the first HEAD and the last TAIL characters, in training and at run time alike.
HEAD_CHARS = 500
TAIL_CHARS = 800

_WHITE_SPACES = re.compile(r"\s\s+")


@dataclass(frozen=True)
class ModelVerdict:
    """The model's judgement of one reply: ``probability`` in [0, 1] that it is a failed call,
    the most likely ``category`` (a §3.1 slug) and that category's ``retryable`` flag."""

    probability: float
    category: str
    retryable: bool


def model_text(text: str) -> str:
    """What the model reads of a reply: all of it up to HEAD+TAIL characters, else the head and
    the tail joined by a newline."""
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]


def char_wb_ngrams(text: str) -> list[str]:
    """scikit-learn's ``char_wb`` analyzer for NGRAM_RANGE after lowercasing (same n-grams, same order)."""
    text = _WHITE_SPACES.sub(" ", text.lower())
    min_n, max_n = NGRAM_RANGE
    grams: list[str] = []
    extend = grams.extend
    for word in text.split():
        word = " " + word + " "
        length = len(word)
        for n in range(min_n, max_n + 1):
            if length <= n:  # a short word counts once, whole
                grams.append(word)
                break
            extend([word[i : i + n] for i in range(length - n + 1)])
    return grams


#: Multiplier and length salt of the 64-bit polynomial n-gram hash (arithmetic modulo 2**64).
_HASH_BASE = np.uint64(0x100000001B3)
_HASH_SALT = 0x9E3779B97F4A7C15


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def _window_hashes(codes: np.ndarray) -> np.ndarray:
    """The hash of every window of 2 to 5 code points of ``codes`` (any window, crossing words or
    not), as one uint64 array. A window's hash depends only on its characters and its length."""
    parts = []
    rolling = codes
    with np.errstate(over="ignore"):
        for n in range(2, NGRAM_RANGE[1] + 1):
            rolling = rolling[:-1] * _HASH_BASE + codes[n - 1 :]
            if n >= NGRAM_RANGE[0]:
                parts.append(rolling + np.uint64((n * _HASH_SALT) % 2**64))
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)


class _Prepared:
    """Weights as arrays, built once per weights dict (numpy only; no scikit-learn): the
    vocabulary as sorted n-gram hashes with their feature indices."""

    __slots__ = (
        "category_coef",
        "category_intercept",
        "error_coef",
        "error_intercept",
        "gram_hashes",
        "gram_indices",
        "idf",
        "weights",
    )

    def __init__(self, weights: dict):
        if list(weights["ngramRange"]) != list(NGRAM_RANGE):
            raise KeyError("ngramRange")
        self.weights = weights
        grams = list(weights["vocabulary"].items())
        hashes = np.fromiter((_gram_hash(gram) for gram, _index in grams), dtype=np.uint64, count=len(grams))
        order = np.argsort(hashes, kind="stable")
        self.gram_hashes = hashes[order]
        self.gram_indices = np.fromiter((index for _gram, index in grams), dtype=np.intp, count=len(grams))[order]
        self.idf = np.asarray(weights["idf"], dtype=np.float64)
        self.error_coef = np.asarray(weights["errorCoef"], dtype=np.float64)
        self.error_intercept = float(weights["errorIntercept"])
        # One category (every failed row of the training data had it) exports no coefficients.
        self.category_coef = np.asarray(weights["categoryCoef"], dtype=np.float64).reshape(
            len(weights["categoryCoef"]), len(self.idf)
        )
        self.category_intercept = np.asarray(weights["categoryIntercept"], dtype=np.float64)


def _gram_hash(gram: str) -> int:
    """The hash :func:`_window_hashes` gives the window ``gram`` (computed the same way)."""
    codes = _code_points(gram)
    with np.errstate(over="ignore"):
        value = codes[0]
        for code in codes[1:]:
            value = value * _HASH_BASE + code
        return int(value + np.uint64((len(gram) * _HASH_SALT) % 2**64))


_prepared: list[_Prepared] = []


def _prepare(weights: dict) -> _Prepared:
    for prepared in _prepared:
        if prepared.weights is weights:
            return prepared
    prepared = _Prepared(weights)
    _prepared[:] = [prepared, *_prepared[:3]]  # a few recent weights (a new model, the bench's folds)
    return prepared


def _features(prepared: _Prepared, text: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices (ascending) and L2-normalised TF-IDF values (sublinear tf) of ``text``'s known n-grams.

    The words, each padded with a space on both sides, are joined and every window of 2–5
    characters is hashed at once; a window that crosses two words holds a double space, which
    no vocabulary n-gram does, so only real ``char_wb`` n-grams find their hash in the
    vocabulary (64-bit hashes: a chance collision is about one in 10**12 per reply).
    """
    joined = "".join([" " + word + " " for word in _WHITE_SPACES.sub(" ", model_text(text).lower()).split()])
    if len(joined) < NGRAM_RANGE[0]:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float64)
    hashes = _window_hashes(_code_points(joined))
    positions = np.searchsorted(prepared.gram_hashes, hashes)
    positions[positions == len(prepared.gram_hashes)] = 0
    found = prepared.gram_hashes[positions] == hashes
    indices, counts = np.unique(prepared.gram_indices[positions[found]], return_counts=True)
    values = (1.0 + np.log(counts)) * prepared.idf[indices]
    norm = math.sqrt(float(values @ values))
    if norm:
        values /= norm
    return indices, values


def model_judge(weights: dict, text: str) -> ModelVerdict:
    """Judge ``text`` with exported ``weights`` (SPEC §3.3a): probability of a failed call,
    category and its retryable flag. No scikit-learn; well under a millisecond for a
    1,300-character reply once the weights are prepared (first call per weights dict).

    Raises KeyError when ``weights`` is not in WEIGHTS_FORMAT.
    """
    prepared = _prepare(weights)
    indices, values = _features(prepared, text)
    probability = _sigmoid(prepared.error_intercept + float(values @ prepared.error_coef[indices]))
    categories = weights["categories"]
    if len(categories) == 1:
        category = categories[0]
    else:
        scores = prepared.category_coef[:, indices] @ values + prepared.category_intercept
        category = categories[int(np.argmax(scores))]
    return ModelVerdict(probability=probability, category=category, retryable=category in RETRYABLE_CATEGORIES)


def _sigmoid(value: float) -> float:
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)


def category_probabilities(weights: dict, text: str) -> dict[str, float]:
    """Softmax over the category model (for tests and the bench)."""
    prepared = _prepare(weights)
    indices, values = _features(prepared, text)
    scores = prepared.category_coef[:, indices] @ values + prepared.category_intercept
    exps = np.exp(scores - scores.max())
    return {category: float(e) for category, e in zip(weights["categories"], exps / exps.sum(), strict=True)}
