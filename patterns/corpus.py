"""The labelled corpus of agent replies and its splits (SPEC §3.3a).

A corpus file is JSONL, one reply a line: ``{id, text, isError, category,
retryable, source, family, lang}``; ``category`` is a §3.1 category for an
error and null otherwise; ``family`` names the source a row comes from (a
repository's thread, a provider's doc) so that rows of one source are never
split between training and evaluation. The older tuning sets
(``tests/data/agent-replies-*.jsonl``: ``label: error|ok``, no family) are
read through :func:`labelled_rows_load` too; each of their rows is its own
family named after its source.

Pure: no Django, no database.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from patterns.models import Category

#: The repository root when running from a checkout (the corpus is not in a wheel).
REPO = Path(__file__).resolve().parents[1]
CORPUS_DIR = REPO / "tests" / "data" / "corpus"
FOLDS_PATH = CORPUS_DIR / "folds.jsonl"
HELDOUT_PATH = CORPUS_DIR / "heldout.jsonl"
#: Ordinary answers (what nearly every production reply is): non-errors only, split the same way.
ORDINARY_FOLDS_PATH = CORPUS_DIR / "ordinary-folds.jsonl"
ORDINARY_HELDOUT_PATH = CORPUS_DIR / "ordinary-heldout.jsonl"
#: The older labelled sets and the failed replies three breaking passes found the detector missing or naming wrong (real
#: texts from public threads; the passes' constructed answers are pattern tests, not training rows: as training rows
#: they lowered the folds' leave-source-out recall from 0.955 to 0.921), used as extra training rows (never as
#: evaluation folds).
EXTRA_PATHS = (
    REPO / "tests" / "data" / "agent-replies-sample.jsonl",
    REPO / "tests" / "data" / "agent-replies-extra.jsonl",
    REPO / "tests" / "data" / "agent-replies-breaking.jsonl",
)

#: The seed of the held-out draw (fixed once, when the split was frozen).
HELDOUT_SEED = 20261201
#: The seed of the ordinary answers' held-out draw (fixed once, before any choice was made on them).
ORDINARY_HELDOUT_SEED = 20261202
#: The seeds of the later ordinary batches' held-out draws, by batch number (each fixed once, before any training or
#: evaluation on that batch). A later ordinary batch N lives in ``ordinary-folds-N.jsonl`` and ``ordinary-heldout-N.jsonl``.
ORDINARY_LATER_BATCH_SEEDS = {2: 20261211, 3: 20261214, 4: 20261216, 5: 20261222, 6: 20261224, 7: 20261226, 8: 20261231}
#: The seeds of the later batches' held-out draws, by batch number (each fixed once, before any training or
#: evaluation on that batch). A later batch N lives in ``folds-N.jsonl`` and ``heldout-N.jsonl``.
LATER_BATCH_SEEDS = {
    2: 20261203,
    3: 20261204,
    4: 20261205,
    5: 20261206,
    6: 20261207,
    7: 20261208,
    8: 20261209,
    9: 20261210,
    10: 20261212,
    11: 20261213,
    12: 20261215,
    13: 20261217,
    14: 20261218,
    15: 20261219,
    16: 20261220,
    17: 20261221,
    18: 20261223,
    19: 20261225,
    20: 20261227,
    21: 20261228,
    22: 20261229,
    23: 20261230,
}
#: Share of rows (drawn as whole families) in the held-out part.
HELDOUT_SHARE = 0.25

CATEGORY_KEYS = tuple(Category.values)


@dataclass(frozen=True)
class Batch:
    """One batch of the corpus: rows collected together from sources no earlier batch used,
    split into ``folds_path`` (tuning, leave-source-out) and ``heldout_path`` (frozen) by a
    seeded draw of whole families (:func:`heldout_families_draw` with ``seed``)."""

    number: int
    folds_path: Path
    heldout_path: Path
    seed: int

    def rows_load(self) -> tuple[list[dict], list[dict]]:
        """``(folds rows, held-out rows)``; a missing file gives an empty list (a wheel without the tests)."""
        return tuple(labelled_rows_load(path) if path.exists() else [] for path in (self.folds_path, self.heldout_path))

    def freeze(self) -> tuple[int, int]:
        """Re-split the rows of both files by :func:`heldout_families_draw` with ``seed``, rewriting both
        files. Returns ``(folds rows, held-out rows)``."""
        rows = sorted((row for part in self.rows_load() for row in part), key=lambda row: row["id"])
        heldout = heldout_families_draw(rows, seed=self.seed)
        parts = {
            self.folds_path: [r for r in rows if r["family"] not in heldout],
            self.heldout_path: [r for r in rows if r["family"] in heldout],
        }
        for path, part in parts.items():
            with open(path, "w", encoding="utf-8") as handle:
                for row in part:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return len(parts[self.folds_path]), len(parts[self.heldout_path])


def _batches(first: Batch, prefix: str, later_seeds: dict[int, int]) -> tuple[Batch, ...]:
    """``first`` and the later batches, batch N in ``<prefix>folds-N.jsonl`` and ``<prefix>heldout-N.jsonl``."""
    later = (
        Batch(
            number, CORPUS_DIR / f"{prefix}folds-{number}.jsonl", CORPUS_DIR / f"{prefix}heldout-{number}.jsonl", seed
        )
        for number, seed in later_seeds.items()
    )
    return (first, *later)


#: The corpus's batches, oldest first (tests/data/corpus/README.md describes each).
BATCHES = _batches(Batch(1, FOLDS_PATH, HELDOUT_PATH, HELDOUT_SEED), "", LATER_BATCH_SEEDS)
#: The ordinary answers' batches, oldest first (tests/data/corpus/README.md describes each).
ORDINARY_BATCHES = _batches(
    Batch(1, ORDINARY_FOLDS_PATH, ORDINARY_HELDOUT_PATH, ORDINARY_HELDOUT_SEED), "ordinary-", ORDINARY_LATER_BATCH_SEEDS
)


def labelled_rows_load(path: Path) -> list[dict]:
    """Rows of one JSONL file as corpus rows (``isError``, ``category``, ``family`` filled in).

    Raises OSError when the file cannot be read and ValueError on a line that is not JSON.
    """
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            if "isError" not in row:
                row["isError"] = row.get("label") == "error"
            if not row["isError"]:
                row["category"] = None
            row.setdefault("family", "old:" + (row.get("source") or row["id"]))
            rows.append(row)
    return rows


def batch_rows_load(number: int) -> tuple[list[dict], list[dict]]:
    """``(folds rows, held-out rows)`` of batch ``number`` (1 to ``len(BATCHES)``: :data:`BATCHES`) of the
    corpus (SPEC §3.3a). Missing files give empty lists (a wheel without the tests).
    Raises IndexError for a batch that does not exist."""
    return BATCHES[number - 1].rows_load()


def corpus_rows_load() -> tuple[list[dict], list[dict]]:
    """``(folds rows, held-out rows)`` of the corpus's first batch."""
    return batch_rows_load(1)


def ordinary_batch_rows_load(number: int) -> tuple[list[dict], list[dict]]:
    """``(folds rows, held-out rows)`` of ordinary batch ``number`` (1 to ``len(ORDINARY_BATCHES)``): every row a
    non-error, marked ``ordinary: True`` (training weighs them ORDINARY_WEIGHT, the threshold caps their
    false-positive rate). Missing files give empty lists (a wheel without the tests). Raises IndexError for a
    batch that does not exist."""
    return tuple([dict(row, ordinary=True) for row in part] for part in ORDINARY_BATCHES[number - 1].rows_load())


def ordinary_rows_load() -> tuple[list[dict], list[dict]]:
    """``(folds rows, held-out rows)`` of the ordinary answers of every batch (SPEC §3.3a), as
    :func:`ordinary_batch_rows_load` gives them."""
    parts = [ordinary_batch_rows_load(batch.number) for batch in ORDINARY_BATCHES]
    return [row for folds, _ in parts for row in folds], [row for _, heldout in parts for row in heldout]


def training_fold_rows_load() -> list[dict]:
    """The rows the shipped model is tuned and trained on: the corpus folds of every batch and
    the ordinary answers' folds (never a held-out part). All are split into leave-source-out folds
    together."""
    return [row for batch in BATCHES for row in batch_rows_load(batch.number)[0]] + ordinary_rows_load()[0]


def extra_rows_load() -> list[dict]:
    """The older labelled sets that exist in this checkout (training only)."""
    rows: list[dict] = []
    for path in EXTRA_PATHS:
        if path.exists():
            rows.extend(labelled_rows_load(path))
    return rows


def heldout_families_draw(rows: list[dict], *, seed: int = HELDOUT_SEED, share: float = HELDOUT_SHARE) -> set[str]:
    """Whole families, drawn by a seeded shuffle of the sorted family names, until they hold
    at least ``share`` of ``rows``. Deterministic for a given set of families and seed."""
    sizes: dict[str, int] = {}
    for row in rows:
        sizes[row["family"]] = sizes.get(row["family"], 0) + 1
    families = sorted(sizes)
    random.Random(seed).shuffle(families)
    chosen: set[str] = set()
    taken = 0
    for family in families:
        if taken >= share * len(rows):
            break
        chosen.add(family)
        taken += sizes[family]
    return chosen


def family_folds(rows: list[dict], *, k: int = 5, seed: int = 7) -> list[list[dict]]:
    """``rows`` grouped by family into ``k`` folds: families are shuffled (seeded, from sorted
    names) and each goes to the fold with the fewest rows so far; rows keep their order."""
    sizes: dict[str, int] = {}
    for row in rows:
        sizes[row["family"]] = sizes.get(row["family"], 0) + 1
    families = sorted(sizes)
    random.Random(seed).shuffle(families)
    fold_of: dict[str, int] = {}
    load = [0] * k
    for family in families:
        index = min(range(k), key=lambda i: (load[i], i))
        fold_of[family] = index
        load[index] += sizes[family]
    folds: list[list[dict]] = [[] for _ in range(k)]
    for row in rows:
        folds[fold_of[row["family"]]].append(row)
    return folds


def batch_freeze(number: int) -> tuple[int, int]:
    """Re-split batch ``number`` of the corpus with its seed (:meth:`Batch.freeze`)."""
    return BATCHES[number - 1].freeze()


def ordinary_freeze(number: int = 1) -> tuple[int, int]:
    """Re-split ordinary batch ``number`` with its seed (:meth:`Batch.freeze`)."""
    return ORDINARY_BATCHES[number - 1].freeze()


if __name__ == "__main__":  # pragma: no cover - a maintenance step, run once when the corpus grows
    for batch in BATCHES:
        print(f"batch {batch.number} folds, held-out rows:", batch_freeze(batch.number))
    for batch in ORDINARY_BATCHES:
        print(f"ordinary batch {batch.number} folds, held-out rows:", ordinary_freeze(batch.number))
