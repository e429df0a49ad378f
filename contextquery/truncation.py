"""Fit a JSON value into a byte budget (SPEC §4.5, ``maxBytes``).

Pure: no Django import. The size measured is the UTF-8 length of the compact
JSON (``ensure_ascii=False``, no spaces) — what the API renderer writes. A
value over the budget is cut so it stays valid JSON of the same shape: long
strings are shortened (whole characters, with ``…`` appended), long lists and
objects keep their first entries. Nothing is ever cut in the middle of a
character, because strings are cut by code point before encoding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: Appended to a shortened string so the reader sees it was cut.
ELLIPSIS = "…"


@dataclass(frozen=True)
class Fitted:
    """The result of :func:`fit_json`.

    ``value``: the (possibly cut) value; ``truncated``: whether anything was
    cut; ``original_bytes``: UTF-8 size of the compact JSON of the input.
    """

    value: Any
    truncated: bool
    original_bytes: int


def json_size(value: Any) -> int:
    """UTF-8 byte length of the compact JSON of ``value``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate (legal in a JSON escape) must not crash a measure.
    return len(text.encode("utf-8", "surrogatepass"))


class _OverBudget(Exception):
    """A cut in progress already needs more bytes than the budget."""


def _shrink(value: Any, limit: int, budget: int | None = None) -> Any:
    """Copy of ``value`` with strings cut to ``limit`` characters and lists and
    objects to ``limit`` entries. Iterative, so deep values cannot exhaust the stack.

    With ``budget``, raises :class:`_OverBudget` as soon as a lower bound of the
    copy's JSON size (kept characters, quotes, colons, brackets, one byte per
    other scalar) passes it, so a cut that cannot fit costs no more than the
    budget to refuse, however large ``value`` is.
    """
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + ELLIPSIS
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [None]
    # (source container, its copy being filled)
    stack: list[tuple[Any, list | dict]] = []
    # Lower bound of the copy's size in bytes; the budget test runs per placed item.
    spent = [0]
    bound = budget if budget is not None else float("inf")

    def place(parent, key, item):
        if isinstance(item, str):
            kept = item if len(item) <= limit else item[:limit] + ELLIPSIS
            parent[key] = kept
            cost = len(kept) + 2
        elif isinstance(item, dict):
            parent[key] = {}
            stack.append((item, parent[key]))
            cost = 2
        elif isinstance(item, list):
            parent[key] = []
            stack.append((item, parent[key]))
            cost = 2
        else:
            parent[key] = item
            cost = 1
        if isinstance(parent, dict):
            cost += (len(key) if isinstance(key, str) else 1) + 3
        spent[0] += cost
        if spent[0] > bound:
            raise _OverBudget

    place(root, 0, value)
    while stack:
        source, dest = stack.pop()
        if isinstance(source, dict):
            for index, (key, item) in enumerate(source.items()):
                if index >= limit:
                    break
                place(dest, key, item)
        else:
            dest.extend([None] * min(len(source), limit))
            for index, item in enumerate(source[:limit]):
                place(dest, index, item)
    return root[0]


def _fits(value: Any, limit: int, max_bytes: int) -> Any:
    """The cut of ``value`` at ``limit`` when it fits in ``max_bytes``, else ``_OverBudget``."""
    try:
        candidate = _shrink(value, limit, max_bytes)
    except _OverBudget:
        return _OverBudget
    return candidate if json_size(candidate) <= max_bytes else _OverBudget


def fit_json(value: Any, max_bytes: int) -> Fitted:
    """Fit ``value`` into ``max_bytes`` bytes of compact UTF-8 JSON.

    Returns ``Fitted(value, truncated, original_bytes)``. When the value fits it
    is returned unchanged. Otherwise the largest cut level ``n`` that fits is
    searched (strings keep ``n`` characters, lists and objects ``n`` entries);
    the result is always valid JSON within the budget. When nothing fits (a
    single huge number) the value is ``None``.
    """
    original = json_size(value)
    if original <= max_bytes:
        return Fitted(value, False, original)
    # No string longer than max_bytes characters and no container with more
    # entries than max_bytes can fit, so the search never needs a higher level;
    # levels far too high are refused after a few items by the budget bound.
    low, high = 0, max_bytes
    best = _shrink(value, 0)
    if json_size(best) > max_bytes:
        return Fitted(None, True, original)
    while low < high:
        mid = (low + high + 1) // 2
        candidate = _fits(value, mid, max_bytes)
        if candidate is not _OverBudget:
            low, best = mid, candidate
        else:
            high = mid - 1
    return Fitted(best, True, original)
