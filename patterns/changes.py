"""Write rules for error patterns, each leaving a history row (SPEC §3.1, §3.2).

The API, the pages, the admin and the management commands all change patterns
through these functions, so the built-in protections and the history are
written once. Every function takes keyword-only arguments:

* ``actor`` — the ``User`` making the change, or ``None`` (a command);
* ``actor_label`` — what the history shows as "by" (defaults to the username);
* ``via`` — one of ``VIA`` (``api``, ``page``, ``admin``, ``command``).

Errors raised (mapped to HTTP statuses by ``project.api.exception_handler``):
``Invalid`` (422, ``errors`` keyed by field name), ``Conflict`` (409, built-in
protections). A refused change stores nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from patterns.builtins import BUILTINS
from patterns.detection import RULE_FIELDS, enabled_rules
from patterns.matching import SetTooCostly, compile_patterns
from patterns.models import SET_TOO_COSTLY, HermesErrorPattern, PatternChange
from project.errors import Conflict, Invalid

#: The fields a person may edit; a history row snapshots exactly these.
EDITABLE_FIELDS = ("name", "pattern", "enabled", "description", "category", "retryable", "priority", "scope")
#: Fields of a built-in that never change (SPEC §3.2).
BUILT_IN_READ_ONLY = ("name", "pattern")
VIA = ("api", "page", "admin", "command")

Action = PatternChange.Action


def pattern_snapshot(target: HermesErrorPattern) -> dict:
    """The editable fields of ``target`` as a JSON-ready dict (history before/after)."""
    return {field: getattr(target, field) for field in EDITABLE_FIELDS}


def _label(actor, actor_label: str | None) -> str:
    if actor_label:
        return actor_label[:150]
    if actor is not None:
        return actor.get_username()[:150]
    return ""


def _record(*, target: HermesErrorPattern, action: str, before, after, actor, actor_label, via, keep_link=True):
    """Write one history row; ``keep_link=False`` for a pattern about to be deleted."""
    if via not in VIA:
        raise ValueError(f"via must be one of {', '.join(VIA)}, not {via!r}")
    return PatternChange.objects.create(
        pattern=target if keep_link else None,
        pattern_ref=target.pk,
        pattern_name=target.name,
        actor=actor if actor is not None and actor.pk else None,
        actor_label=_label(actor, actor_label),
        via=via,
        action=action,
        before=before,
        after=after,
    )


def _check_values(values: dict) -> None:
    unknown = sorted(set(values) - set(EDITABLE_FIELDS))
    if unknown:
        raise Invalid.field(
            unknown[0],
            _("This field cannot be set; the editable fields are: %(fields)s.")
            % {"fields": ", ".join(EDITABLE_FIELDS)},
        )


def _validate(candidate: HermesErrorPattern) -> None:
    """Run the model's rules (the pattern text's validator among them); raise
    ``Invalid`` with every field's errors."""
    try:
        candidate.full_clean(exclude=None, validate_unique=True)
    except ValidationError as refused:
        raise Invalid.from_django(refused) from None


def refuse_costly_set(*changed: HermesErrorPattern) -> None:
    """Raise ``Invalid`` (422 on ``pattern``, naming the limit) when the enabled
    set, with ``changed`` as they are about to be stored, would be too costly
    to compile as a whole (SPEC §3.1, §3.3). Nothing to check when none of
    ``changed`` is enabled."""
    if not any(target.enabled for target in changed):
        return
    ids = {target.pk for target in changed if target.pk}
    rules = [rule for rule in enabled_rules() if rule["id"] not in ids]
    rules += [{field: getattr(t, field) for field in RULE_FIELDS} for t in changed if t.enabled]
    try:
        compile_patterns(rules)
    except SetTooCostly as refused:
        size = refused.size if refused.size is not None else "?"
        raise Invalid.field("pattern", SET_TOO_COSTLY % {"size": size, "limit": refused.limit}) from None


def _save(candidate: HermesErrorPattern) -> None:
    """Save; a name taken by a concurrent request (after validation passed) is
    still a 422 on the name, never a 500."""
    try:
        with transaction.atomic():
            candidate.save()
    except IntegrityError:
        raise Invalid.field("name", _("A pattern with this name already exists.")) from None


def _refuse_built_in_edit(target: HermesErrorPattern, values: dict) -> None:
    if not target.is_built_in:
        return
    for field in BUILT_IN_READ_ONLY:
        if field in values and values[field] != getattr(target, field):
            raise Conflict(
                _(
                    "The %(field)s of the built-in pattern “%(name)s” is read-only; copy the pattern "
                    "to make an editable one."
                )
                % {"field": field, "name": target.name},
                errors={field: [_("Read-only on a built-in pattern; copy it to edit.")]},
            )


def pattern_create(*, values: dict, actor=None, actor_label: str | None = None, via: str) -> HermesErrorPattern:
    """Create a custom pattern from ``values`` (editable fields by model name).

    Returns the stored pattern. Raises ``Invalid`` for an empty or over-long
    name or pattern, a duplicate name, a regex that does not compile or is too
    costly, or an unknown field (SPEC §3.1).
    """
    _check_values(values)
    candidate = HermesErrorPattern(**values)
    _validate(candidate)
    refuse_costly_set(candidate)
    with transaction.atomic():
        _save(candidate)
        _record(
            target=candidate,
            action=Action.CREATE,
            before=None,
            after=pattern_snapshot(candidate),
            actor=actor,
            actor_label=actor_label,
            via=via,
        )
    return candidate


def pattern_update(
    *, target: HermesErrorPattern, values: dict, actor=None, actor_label: str | None = None, via: str
) -> HermesErrorPattern:
    """Change the fields in ``values`` of ``target``; fields not given keep their value.

    Returns the stored pattern (unchanged, and no history row, when nothing
    differs). Raises ``Conflict`` when a built-in's name or pattern would change
    (SPEC §3.2), ``Invalid`` as ``pattern_create`` does.
    """
    _check_values(values)
    with transaction.atomic():
        current = HermesErrorPattern.objects.select_for_update().get(pk=target.pk)
        _refuse_built_in_edit(current, values)
        before = pattern_snapshot(current)
        for field, value in values.items():
            setattr(current, field, value)
        if pattern_snapshot(current) == before:
            return current
        _validate(current)
        refuse_costly_set(current)
        _save(current)
        _record(
            target=current,
            action=Action.UPDATE,
            before=before,
            after=pattern_snapshot(current),
            actor=actor,
            actor_label=actor_label,
            via=via,
        )
    return current


def pattern_delete(*, target: HermesErrorPattern, actor=None, actor_label: str | None = None, via: str) -> None:
    """Delete a custom pattern; its history stays (``pattern_ref``, ``pattern_name``).

    Raises ``Conflict`` for a built-in (SPEC §3.2). Visits that matched it keep
    their copy of its key, name and text.
    """
    if target.is_built_in:
        raise Conflict(
            _("“%(name)s” is a built-in pattern and cannot be deleted; disable it instead, or copy it.")
            % {"name": target.name}
        )
    with transaction.atomic():
        _record(
            target=target,
            action=Action.DELETE,
            before=pattern_snapshot(target),
            after=None,
            actor=actor,
            actor_label=actor_label,
            via=via,
            keep_link=False,
        )
        target.delete()


def pattern_toggle(
    *, target: HermesErrorPattern, actor=None, actor_label: str | None = None, via: str
) -> HermesErrorPattern:
    """Flip ``enabled`` (built-ins too) and return the stored pattern."""
    with transaction.atomic():
        current = HermesErrorPattern.objects.select_for_update().get(pk=target.pk)
        _set_enabled(current, not current.enabled, actor=actor, actor_label=actor_label, via=via)
    return current


def _set_enabled(current: HermesErrorPattern, enabled: bool, *, actor, actor_label, via) -> None:
    before = pattern_snapshot(current)
    current.enabled = enabled
    refuse_costly_set(current)
    current.save(update_fields=["enabled", "updated_at"])
    _record(
        target=current,
        action=Action.ENABLE if enabled else Action.DISABLE,
        before=before,
        after=pattern_snapshot(current),
        actor=actor,
        actor_label=actor_label,
        via=via,
    )


def pattern_set_enabled(*, targets, enabled: bool, actor=None, actor_label: str | None = None, via: str) -> int:
    """Enable or disable every pattern of ``targets`` (a queryset or iterable),
    one history row per pattern whose state changes (admin bulk actions).

    Returns how many patterns changed.
    """
    ids = [t.pk for t in targets]
    changed = 0
    with transaction.atomic():
        for current in HermesErrorPattern.objects.select_for_update().filter(pk__in=ids).order_by("pk"):
            if current.enabled != enabled:
                _set_enabled(current, enabled, actor=actor, actor_label=actor_label, via=via)
                changed += 1
    return changed


def copy_name(name: str, *, taken=None) -> str:
    """``name`` + " (copy)", then " (copy 2)", " (copy 3)" … until unused; the
    base is shortened so the result fits the 100-character name limit."""
    limit = HermesErrorPattern._meta.get_field("name").max_length
    exists = taken or (lambda candidate: HermesErrorPattern.objects.filter(name=candidate).exists())
    number = 1
    while True:
        suffix = " (copy)" if number == 1 else f" (copy {number})"
        candidate = name[: limit - len(suffix)] + suffix
        if not exists(candidate):
            return candidate
        number += 1


def pattern_copy(
    *, source: HermesErrorPattern, actor=None, actor_label: str | None = None, via: str
) -> HermesErrorPattern:
    """Create an editable custom pattern from ``source`` (built-in or not): same
    text, description, category, retryable flag, priority and scope, disabled,
    name + " (copy)" made unique. It starts disabled until ops enable it
    (SPEC §3.5); its hits start at zero."""
    with transaction.atomic():
        values = pattern_snapshot(source)
        values["name"] = copy_name(source.name)
        values["enabled"] = False
        created = HermesErrorPattern(**values)
        _validate(created)
        _save(created)
        _record(
            target=created,
            action=Action.COPY,
            before=None,
            after=pattern_snapshot(created),
            actor=actor,
            actor_label=actor_label,
            via=via,
        )
    return created


@dataclass(frozen=True)
class ResetResult:
    """What ``patterns_reset`` did: custom patterns deleted, built-ins whose
    fields were restored, built-ins inserted because they were missing."""

    deleted: int
    restored: int
    inserted: int

    def as_dict(self) -> dict:
        return {"deleted": self.deleted, "restored": self.restored, "inserted": self.inserted}


def _shipped(definition: dict) -> dict:
    values = {field: definition[field] for field in EDITABLE_FIELDS if field in definition}
    values["enabled"] = definition.get("enabled", True)
    return values


def patterns_reset(*, actor=None, actor_label: str | None = None, via: str) -> ResetResult:
    """Reset to defaults (SPEC §3.2), in one transaction: delete every custom
    pattern, restore each built-in to its shipped text and enabled state, and
    insert built-ins that are missing. Hit counters stay; visits keep their
    stored copy of what they matched. One history row per pattern touched.
    """
    deleted = restored = inserted = 0
    with transaction.atomic():
        shipped_keys = {definition["key"] for definition in BUILTINS}
        # A built-in whose key is no longer shipped (retired by an upgrade) goes like a custom one.
        unshipped = Q(is_built_in=False) | ~Q(key__in=shipped_keys)
        for custom in HermesErrorPattern.objects.select_for_update().filter(unshipped).order_by("pk"):
            _record(
                target=custom,
                action=Action.RESET,
                before=pattern_snapshot(custom),
                after=None,
                actor=actor,
                actor_label=actor_label,
                via=via,
                keep_link=False,
            )
            custom.delete()
            deleted += 1
        stored = {p.key: p for p in HermesErrorPattern.objects.select_for_update().filter(is_built_in=True)}
        # A built-in may carry a suffixed name (its name was taken when it was
        # seeded) or another built-in's old name; park every name that must
        # move first so the unique constraint never trips half-way.
        moving = [
            p
            for key, p in stored.items()
            if key in shipped_keys and p.name != next(d["name"] for d in BUILTINS if d["key"] == key)
        ]
        for parked in moving:
            HermesErrorPattern.objects.filter(pk=parked.pk).update(name=f"\x01reset-{parked.pk}")
        for definition in BUILTINS:
            values = _shipped(definition)
            current = stored.get(definition["key"])
            if current is None:
                current = HermesErrorPattern(key=definition["key"], is_built_in=True, **values)
                current.save()
                _record(
                    target=current,
                    action=Action.RESET,
                    before=None,
                    after=pattern_snapshot(current),
                    actor=actor,
                    actor_label=actor_label,
                    via=via,
                )
                inserted += 1
                continue
            before = pattern_snapshot(current)
            for field, value in values.items():
                setattr(current, field, value)
            if pattern_snapshot(current) != before or current in moving:
                current.save()
                _record(
                    target=current,
                    action=Action.RESET,
                    before=before,
                    after=pattern_snapshot(current),
                    actor=actor,
                    actor_label=actor_label,
                    via=via,
                )
                restored += 1
    return ResetResult(deleted=deleted, restored=restored, inserted=inserted)
