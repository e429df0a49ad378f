"""The learned second signal: is a reply a failed LLM call, and of which category (SPEC §3.3a).

Training uses scikit-learn: a character n-gram TF-IDF
(``char_wb``, 2–5, lowercase, sublinear tf) feeding a logistic regression for
"is a failed call", and a multinomial logistic regression over the same
features for the category, fitted on error rows only. Inputs are sorted and the
solvers are deterministic, so the same rows give the same weights.

Training lives in :mod:`patterns.training` (scikit-learn), which exports plain
weights (a JSON-able dict; never a pickle). This module is inference only and
does not import scikit-learn: :func:`model_judge` rebuilds the n-grams, the
TF-IDF row and the two linear models from those weights and reproduces
scikit-learn's probabilities (to 1e-6; a test compares). Pure: no Django, no
database.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from patterns.models import RETRYABLE_CATEGORIES

#: Version of the weights format written by :func:`weights_export`.
WEIGHTS_FORMAT = 1
NGRAM_RANGE = (2, 5)
#: Vectorizer and solver settings (fixed: they are part of what a test reproduces).
MAX_FEATURES = 10000
MIN_DF = 2
ERROR_C = 30.0
CATEGORY_C = 10.0
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
    append = grams.append
    for word in text.split():
        word = " " + word + " "
        length = len(word)
        for n in range(min_n, max_n + 1):
            offset = 0
            append(word[offset : offset + n])
            while offset + n < length:
                offset += 1
                append(word[offset : offset + n])
            if offset == 0:  # a short word counts once
                break
    return grams


def _features(weights: dict, text: str) -> tuple[dict[int, float], float]:
    """Sparse TF-IDF row of ``text`` before normalisation, and its L2 norm."""
    vocabulary = weights["vocabulary"]
    idf = weights["idf"]
    counts = Counter(vocabulary[g] for g in char_wb_ngrams(model_text(text)) if g in vocabulary)
    row = {index: (1.0 + math.log(count)) * idf[index] for index, count in counts.items()}
    norm = math.sqrt(sum(value * value for value in row.values()))
    return row, norm


def model_judge(weights: dict, text: str) -> ModelVerdict:
    """Judge ``text`` with exported ``weights`` (SPEC §3.3a): probability of a failed call,
    category and its retryable flag. Pure Python; about a millisecond for a 1,300-character reply.

    Raises KeyError when ``weights`` is not in WEIGHTS_FORMAT.
    """
    row, norm = _features(weights, text)
    scale = 1.0 / norm if norm else 0.0
    coef = weights["errorCoef"]
    decision = weights["errorIntercept"] + scale * sum(value * coef[i] for i, value in row.items())
    probability = _sigmoid(decision)
    categories = weights["categories"]
    if len(categories) == 1:
        category = categories[0]
    else:
        scores = [
            intercept + scale * sum(value * class_coef[i] for i, value in row.items())
            for class_coef, intercept in zip(weights["categoryCoef"], weights["categoryIntercept"], strict=True)
        ]
        category = categories[max(range(len(scores)), key=lambda k: (scores[k], -k))]
    return ModelVerdict(probability=probability, category=category, retryable=category in RETRYABLE_CATEGORIES)


def _sigmoid(value: float) -> float:
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)


def category_probabilities(weights: dict, text: str) -> dict[str, float]:
    """Softmax over the category model (for tests and the bench)."""
    row, norm = _features(weights, text)
    scale = 1.0 / norm if norm else 0.0
    scores = [
        intercept + scale * sum(value * class_coef[i] for i, value in row.items())
        for class_coef, intercept in zip(weights["categoryCoef"], weights["categoryIntercept"], strict=True)
    ]
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return {category: e / total for category, e in zip(weights["categories"], exps, strict=True)}
