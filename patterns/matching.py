"""The pattern matcher (SPEC §3.1, §3.3): pure, plain data in and out, no Django.

``validate_pattern`` checks one pattern's text, ``compile_patterns`` builds an
immutable :class:`Matcher` from rows, and ``Matcher.detect`` judges a reply.
:mod:`patterns.detection` adds the database: which set is enabled now, the
per-process cache and hit counting.

How a matcher works: substring patterns are Unicode-case-folded and put in one
re2 ``Set`` run over the case-folded window; ``regex:`` patterns go into a
second re2 ``Set`` (case-insensitive) run over the original window. Each set
says *which* patterns match in one linear pass whatever their number; only
those candidates, best ``(priority, id)`` first, are then searched one by one
for the exact span. The cost per reply therefore stays nearly flat as the set
grows.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import re2

logger = logging.getLogger(__name__)

REGEX_PREFIX = "regex:"

#: A single ``regex:`` pattern whose compiled program is larger than this is
#: refused as too costly (a bounded `.{0,500}` needs about 4,500).
MAX_PROGRAM_SIZE = 20000

#: Memory bound handed to re2 for one pattern (it refuses bigger programs).
_PATTERN_MAX_MEM = 8 << 20
#: Memory bound for the combined sets: their lazily built DFA needs room for
#: a few states of a thousand patterns at once.
_SET_MAX_MEM = 256 << 20


@dataclass(frozen=True)
class Detection:
    """What matched a reply (SPEC §3.3).

    ``span`` is ``(start, end)``, end exclusive, in offsets of the original
    text as given to ``detect`` (characters, not bytes, and before case
    folding).
    """

    pattern_id: int
    key: str | None
    name: str
    pattern: str
    category: str
    retryable: bool
    span: tuple[int, int]

    def as_verdict(self) -> dict:
        """The camelCase verdict of the API's POST /detect and ``manage.py detect``."""
        return verdict_json(self)


def verdict_json(detection: Detection | None) -> dict:
    """``{isError, matchedPatternId, matchedPatternKey, matchedPatternName, category,
    retryable, span}`` for a detection, or the all-null "no error" verdict (SPEC §3.4)."""
    if detection is None:
        return {
            "isError": False,
            "matchedPatternId": None,
            "matchedPatternKey": None,
            "matchedPatternName": None,
            "category": None,
            "retryable": None,
            "span": None,
        }
    return {
        "isError": True,
        "matchedPatternId": detection.pattern_id,
        "matchedPatternKey": detection.key,
        "matchedPatternName": detection.name,
        "category": detection.category,
        "retryable": detection.retryable,
        "span": list(detection.span),
    }


# --- validation ---------------------------------------------------------------------------


def _regex_options(*, max_mem: int = _PATTERN_MAX_MEM) -> re2.Options:
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = max_mem
    options.log_errors = False
    return options


class PatternRefused(ValueError):
    """A pattern text that may not be stored (SPEC §3.1).

    ``code`` names the rule (a key of :data:`REFUSALS`), ``params`` fill its
    sentence; ``str()`` is the English sentence. ``patterns.models`` turns it
    into a translated validation error for forms, serializers and the admin.
    """

    def __init__(self, code: str, **params):
        self.code = code
        self.params = params
        super().__init__(REFUSALS[code] % params)


#: The sentence of each refusal, with ``%(name)s`` placeholders (English;
#: ``patterns.models.PATTERN_REFUSALS`` holds the same sentences for translation).
REFUSALS = {
    "empty": "The pattern is empty; give a substring or regex:<expression>.",
    "empty_regex": "The regular expression after regex: is empty.",
    "too_costly": "The regular expression is too costly to run (re2 says: %(detail)s); simplify it.",
    "invalid_regex": (
        "The regular expression does not compile (re2 says: %(detail)s). "
        "Backreferences and lookarounds are not supported."
    ),
    "too_many_instructions": (
        "The regular expression is too costly to run (%(size)d instructions, at most %(limit)d); "
        "simplify it or use fewer repetitions."
    ),
    "matches_empty": "The regular expression matches empty text, so it would flag every reply.",
}


def _compile_regex(source: str):
    """Compile one ``regex:`` body with re2, or raise :class:`PatternRefused`."""
    try:
        compiled = re2.compile(source, _regex_options())
    except re2.error as exc:
        message = exc.args[0] if exc.args else ""
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        if any(sign in message for sign in ("too large", "too big", "repetition size")):
            raise PatternRefused("too_costly", detail=message) from None
        raise PatternRefused("invalid_regex", detail=message) from None
    if compiled.programsize > MAX_PROGRAM_SIZE:
        raise PatternRefused("too_many_instructions", size=compiled.programsize, limit=MAX_PROGRAM_SIZE)
    if compiled.search("") is not None:
        raise PatternRefused("matches_empty")
    return compiled


def validate_pattern(text: str) -> None:
    """Check a pattern's text before it is stored (SPEC §3.1).

    Raises :class:`PatternRefused` (a ``ValueError``) when the text is empty
    or blank, when a ``regex:`` body is empty, does not compile on re2 (for
    instance a backreference), is refused as too costly, or matches empty text.
    """
    if text is None or not str(text).strip():
        raise PatternRefused("empty")
    if text.startswith(REGEX_PREFIX):
        source = text[len(REGEX_PREFIX) :]
        if not source.strip():
            raise PatternRefused("empty_regex")
        _compile_regex(source)


# --- compiling ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    id: int
    key: str | None
    name: str
    pattern: str
    category: str
    retryable: bool
    priority: int

    @property
    def order(self) -> tuple[int, int]:
        return (self.priority, self.id)


def _field(rule: Any, name: str, default: Any = None) -> Any:
    if isinstance(rule, dict):
        return rule.get(name, default)
    return getattr(rule, name, default)


def _rule_from(rule: Any) -> _Rule:
    return _Rule(
        id=_field(rule, "id") or 0,
        key=_field(rule, "key"),
        name=_field(rule, "name") or "",
        pattern=_field(rule, "pattern") or "",
        category=_field(rule, "category") or "other",
        retryable=bool(_field(rule, "retryable", False)),
        priority=int(_field(rule, "priority", 100) if _field(rule, "priority") is not None else 100),
    )


class _FoldedWindow:
    """A window of the reply, Unicode-case-folded, with a map back to original offsets.

    Folding can lengthen text ('ß' → 'ss', 'İ' → 'i̇'), so a folded offset is
    mapped back through the start offsets of each original character's folding.
    """

    __slots__ = ("text", "_starts", "_origin")

    def __init__(self, window: str, origin: int):
        folded = window.casefold()
        self.text = folded
        self._origin = origin
        # Each character folds to at least one character: equal lengths mean 1:1.
        self._starts = None if len(folded) == len(window) else self._fold_starts(window)

    @staticmethod
    def _fold_starts(window: str) -> list[int]:
        starts, position = [], 0
        for char in window:
            starts.append(position)
            position += len(char.casefold())
        return starts

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        if self._starts is None:
            return (self._origin + start, self._origin + end)
        first = bisect.bisect_right(self._starts, start) - 1
        last = bisect.bisect_right(self._starts, end - 1) - 1
        return (self._origin + first, self._origin + last + 1)


class Matcher:
    """A compiled, immutable pattern set (SPEC §3.3); build it with ``compile_patterns``.

    ``detect(text, head_chars=…, tail_chars=…)`` is pure and thread-safe.
    """

    def __init__(self, rules: Iterable[_Rule]):
        self.rules: list[_Rule] = sorted(rules, key=lambda r: r.order)
        self._literals: list[tuple[_Rule, str]] = []
        self._regexes: list[tuple[_Rule, Any]] = []
        for rule in self.rules:
            if rule.pattern.startswith(REGEX_PREFIX):
                try:
                    compiled = _compile_regex(rule.pattern[len(REGEX_PREFIX) :])
                except PatternRefused as exc:
                    # A stored rule that fails today's checks must not break detection.
                    logger.warning("Skipping pattern %s (%s): %s", rule.id, rule.name, exc)
                    continue
                self._regexes.append((rule, compiled))
            elif rule.pattern.strip():
                self._literals.append((rule, rule.pattern.casefold()))
        self._literal_set = self._build_set([folded for _, folded in self._literals], literal=True)
        self._regex_set = self._build_set([compiled.pattern for _, compiled in self._regexes], literal=False)

    def __len__(self) -> int:
        return len(self._literals) + len(self._regexes)

    @staticmethod
    def _build_set(sources: list[str], *, literal: bool):
        if not sources:
            return None
        options = _regex_options(max_mem=_SET_MAX_MEM)
        if literal:
            # Substrings are matched on case-folded text, so they compare exactly.
            options.case_sensitive = True
            options.literal = True
        found = re2.Set.SearchSet(options)
        for source in sources:
            found.Add(source)
        found.Compile()
        return found

    def _windows(self, text: str, head_chars: int, tail_chars: int) -> list[tuple[int, int]]:
        size = len(text)
        head_end = min(size, max(0, head_chars))
        windows = [(0, head_end)] if head_end else []
        if tail_chars > 0 and size > head_end:
            windows.append((max(0, size - tail_chars), size))
        return windows

    def detect(self, text: str | None, *, head_chars: int, tail_chars: int) -> Detection | None:
        """The best ``(priority, id)`` pattern matching the head or tail window, or None.

        The head window is ``text[:head_chars]``, the tail window
        ``text[-tail_chars:]`` (scanned only when the reply is longer than the
        head). ``^`` matches only at the start of the reply and ``$``/``\\z``
        only at its end, never at a window edge; ``(?m:^)`` matches after a
        newline inside a window. So a line-anchored form that runs to ``\\z``
        finds an error that follows a partial answer, as long as it starts in
        the tail window (the built-ins' "… (at the end)" rows). Blank text
        matches nothing.
        """
        if not text or not text.strip() or not len(self):
            return None
        candidates: dict[int, tuple[_Rule, Any]] = {}
        windows = self._windows(text, head_chars, tail_chars)
        folded_windows = []
        for start, end in windows:
            folded = _FoldedWindow(text[start:end], start)
            folded_windows.append(folded)
            if self._literal_set is not None:
                for index in self._literal_set.Match(folded.text) or ():
                    rule, needle = self._literals[index]
                    candidates[id(rule)] = (rule, needle)
            if self._regex_set is not None:
                # One character of context either side keeps \b and (?m)^ honest;
                # the exact search below re-checks anchors against the whole reply.
                lo, hi = max(0, start - 1), min(len(text), end + 1)
                for index in self._regex_set.Match(text[lo:hi]) or ():
                    rule, compiled = self._regexes[index]
                    candidates[id(rule)] = (rule, compiled)
        for rule, matcher in sorted(candidates.values(), key=lambda pair: pair[0].order):
            span = self._span(rule, matcher, text, windows, folded_windows)
            if span is not None:
                return Detection(
                    pattern_id=rule.id,
                    key=rule.key,
                    name=rule.name,
                    pattern=rule.pattern,
                    category=rule.category,
                    retryable=rule.retryable,
                    span=span,
                )
        return None

    @staticmethod
    def _span(rule, matcher, text, windows, folded_windows) -> tuple[int, int] | None:
        for (start, end), folded in zip(windows, folded_windows, strict=False):
            if isinstance(matcher, str):
                at = folded.text.find(matcher)
                if at >= 0:
                    return folded.original_span(at, at + len(matcher))
                continue
            # Search a slice with one character of context either side; pos/endpos
            # keep the match inside the window while ^, $ and \b still see the
            # neighbouring text, so ^ never matches at the tail window's start.
            lo, hi = max(0, start - 1), min(len(text), end + 1)
            found = matcher.search(text[lo:hi], start - lo, end - lo)
            if found is not None:
                match_start, match_end = found.span()
                return (lo + match_start, lo + match_end)
        return None


def compile_patterns(rules: Iterable[Any]) -> Matcher:
    """Compile rules into a ``Matcher`` (pure; SPEC §3.3).

    ``rules``: objects or dicts with ``id, key, name, pattern, category,
    retryable, priority`` (and optionally ``enabled``; disabled ones are left
    out). A stored ``regex:`` that no longer validates is skipped with a warning.
    """
    return Matcher(_rule_from(rule) for rule in rules if _field(rule, "enabled", True) is not False)
