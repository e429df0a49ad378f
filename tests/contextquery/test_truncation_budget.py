"""fit_json refuses an over-budget cut early, yet picks the same cut as a full search (issue 7)."""

import random
import time

from contextquery import truncation
from contextquery.truncation import fit_json, json_size


def reference_fit(value, max_bytes):
    """The plain binary search over whole copies: the answer the bounded search must equal."""
    original = json_size(value)
    if original <= max_bytes:
        return value
    low, high = 0, max_bytes
    best = truncation._shrink(value, 0)
    if json_size(best) > max_bytes:
        return None
    while low < high:
        mid = (low + high + 1) // 2
        candidate = truncation._shrink(value, mid)
        if json_size(candidate) <= max_bytes:
            low, best = mid, candidate
        else:
            high = mid - 1
    return best


def random_value(rng, depth=0):
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice(
            ["", "é" * rng.randrange(40), "x" * rng.randrange(300), "中文" * rng.randrange(20), 7, 2.5, None, True]
        )
    if roll < 0.7:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(30))]
    return {
        rng.choice(["a", "key.with.dots", "ü", "long" * 5]) + str(i): random_value(rng, depth + 1)
        for i in range(rng.randrange(12))
    }


def test_the_bounded_search_picks_the_same_cut_as_the_full_search():
    rng = random.Random(11)
    for _ in range(100):
        value = random_value(rng)
        budget = rng.choice([512, 600, 1000, 2048, 8192])
        fitted = fit_json(value, budget)
        assert fitted.value == reference_fit(value, budget)
        if fitted.value is not None:
            assert json_size(fitted.value) <= budget


def test_an_over_budget_cut_stops_before_copying_the_whole_value():
    value = {"logs": [{"message": "m" * 400, "detail": {"n": i}} for i in range(2000)]}
    try:
        truncation._shrink(value, 300, 1024)
    except truncation._OverBudget:
        pass
    else:
        raise AssertionError("a cut needing far more than 1024 bytes was not refused")


def test_fitting_a_large_log_payload_stays_fast():
    value = {"logs": [{"message": "m" * 440, "detail": {"hits": list(range(20))}} for i in range(600)]}
    started = time.perf_counter()
    fitted = fit_json(value, 8192)
    # Anti-hang bound only; the speed target lives in tests/bench.
    assert time.perf_counter() - started < 5
    assert fitted.truncated and json_size(fitted.value) <= 8192
