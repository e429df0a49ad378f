"""Score a pattern set on labelled replies: precision, recall, category accuracy (SPEC §3.2).

A labelled file is JSONL, one reply a line: ``{id, text, label: error|ok,
category, lang, source}``. Used by ``tests/patterns/test_quality.py`` and by
``tests/bench/bench_detection.py``; pure, no database.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from patterns.builtins import BUILTINS
from patterns.matching import Detection, Matcher, compile_patterns, reply_rules_detect

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
SAMPLE_NAME = "agent-replies-sample.jsonl"
#: The lead's labelled sample lives next to the checkout; a copy in tests/data
#: lets the floors be checked where ../shared is absent.
SAMPLE_PATHS = (REPO.parent / "shared" / "data" / SAMPLE_NAME, DATA / SAMPLE_NAME)
OWN_SET_PATH = DATA / "agent-replies-extra.jsonl"

#: The seed design note's literal list (plain case-insensitive substrings).
SEED_LITERALS = [
    "API call failed after",
    "HTTP 4",
    "HTTP 5",
    "rate limit",
    "访问量过大",
    "该模型当前访问量过大",
    "quota",
    "额度",
    "余额不足",
    "authentication",
    "invalid api key",
    "无效的 api",
]

#: The settings defaults (PATTERNS_SCAN_CHARS, PATTERNS_SCAN_TAIL_CHARS).
HEAD_CHARS = 500
TAIL_CHARS = 800


def sample_path() -> Path:
    """The shared sample when present, else the copy in tests/data."""
    return next(path for path in SAMPLE_PATHS if path.exists())


def load_labelled(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@functools.cache
def builtin_matcher() -> Matcher:
    """The shipped built-ins, compiled once (a Matcher is immutable)."""
    return compile_patterns(dict(rule, id=index + 1) for index, rule in enumerate(BUILTINS))


def seed_matcher() -> Matcher:
    return compile_patterns(
        {
            "id": index + 1,
            "key": None,
            "name": text,
            "pattern": text,
            "category": "other",
            "retryable": False,
            "priority": 100,
        }
        for index, text in enumerate(SEED_LITERALS)
    )


def rule_detect(matcher: Matcher, text: str, *, head_chars=HEAD_CHARS, tail_chars=TAIL_CHARS) -> Detection | None:
    """The verdict of the rules alone, as production gives it (:func:`patterns.matching.reply_rules_detect`), with
    the default windows."""
    return reply_rules_detect(matcher, text, head_chars=head_chars, tail_chars=tail_chars)


@dataclass
class Score:
    """Counts over one labelled set; ``misses`` lists (id, what went wrong)."""

    true_pos: int = 0
    false_pos: int = 0
    false_neg: int = 0
    true_neg: int = 0
    right_category: int = 0
    misses: list = field(default_factory=list)

    @property
    def precision(self) -> float:
        flagged = self.true_pos + self.false_pos
        return self.true_pos / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        errors = self.true_pos + self.false_neg
        return self.true_pos / errors if errors else 1.0

    @property
    def category_accuracy(self) -> float:
        """Share of all labelled errors flagged with the right category."""
        errors = self.true_pos + self.false_neg
        return self.right_category / errors if errors else 1.0


def score(matcher: Matcher, rows: list[dict], *, head_chars=HEAD_CHARS, tail_chars=TAIL_CHARS) -> Score:
    result = Score()
    for row in rows:
        found = rule_detect(matcher, row["text"], head_chars=head_chars, tail_chars=tail_chars)
        if row["label"] == "error":
            if found is None:
                result.false_neg += 1
                result.misses.append((row["id"], "missed"))
                continue
            result.true_pos += 1
            if found.category == row["category"]:
                result.right_category += 1
            else:
                result.misses.append((row["id"], f"category {found.category} ({found.key}), want {row['category']}"))
        elif found is None:
            result.true_neg += 1
        else:
            result.false_pos += 1
            result.misses.append((row["id"], f"false alarm by {found.key or found.name}"))
    return result
