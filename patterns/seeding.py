"""Installing the shipped built-ins on ``migrate`` (SPEC §3.2).

:func:`seed_builtins_after_migrate` runs after every ``migrate`` (upgrades
included): it first retires stored built-ins whose key is no longer shipped
(:func:`retire_builtins`), then inserts each built-in of
:data:`patterns.builtins.BUILTINS` whose key is missing. A stored row is
never overwritten.
"""

import sys

from django.apps import apps as global_apps
from django.db import transaction

from patterns.builtins import BUILTINS
from patterns.detection import version_bump


def seed_builtins(*, using: str = "default", apps=None) -> int:
    """Insert every built-in whose key is missing; return how many were inserted (SPEC §3.2).

    Never overwrites a stored row (an edited or disabled built-in stays as
    ops left it). A name already taken by another pattern gets a suffix.
    ``apps`` is the app registry of a ``post_migrate`` signal (defaults to the
    global one). Inserted rows are marked built-in and get an "installed"
    history entry.
    """
    if apps is None:
        apps = global_apps
    try:
        pattern_model = apps.get_model("patterns", "HermesErrorPattern")
        change_model = apps.get_model("patterns", "PatternChange")
    except LookupError:
        return 0
    try:
        version_model = apps.get_model("patterns", "PatternSetVersion")
    except LookupError:
        version_model = None

    inserted = 0
    with transaction.atomic(using=using):
        retired = retire_builtins(pattern_model=pattern_model, change_model=change_model, using=using)
        patterns = pattern_model.objects.using(using)
        stored_keys = set(patterns.exclude(key=None).values_list("key", flat=True))
        taken_names = set(patterns.values_list("name", flat=True))
        for builtin in BUILTINS:
            if builtin["key"] in stored_keys:
                continue
            name = _free_name(builtin["name"], taken_names)
            taken_names.add(name)
            row = patterns.create(
                key=builtin["key"],
                name=name,
                pattern=builtin["pattern"],
                description=builtin["description"],
                category=builtin["category"],
                retryable=builtin["retryable"],
                priority=builtin["priority"],
                scope=builtin.get("scope", "error"),
                enabled=True,
                is_built_in=True,
            )
            _migration_change(change_model, using, row, link=row, action="seed", before=None, after=_snapshot(row))
            inserted += 1
        if (inserted or retired) and version_model is not None:
            version_bump(version_model, using=using)
    return inserted


#: Fields whose change by ops makes a retired built-in worth keeping (all editable ones but ``enabled``).
_EDIT_FIELDS = ("name", "pattern", "description", "category", "retryable", "priority")


def _edited(row, history: list) -> bool:
    """True when ops changed a field other than ``enabled`` of a built-in ``row``
    (SPEC §3.2). ``history`` is its PatternChange rows, oldest first: the first
    row whose ``before`` is empty (installed or re-installed) holds the shipped
    values; without one, any update that touched such a field counts."""
    shipped = next((change.after for change in history if not change.before and change.after), None)
    if shipped is not None:
        return any(field in shipped and shipped[field] != getattr(row, field) for field in _EDIT_FIELDS)
    return any(
        change.action == "update"
        and any((change.before or {}).get(f) != (change.after or {}).get(f) for f in _EDIT_FIELDS)
        for change in history
    )


def retire_builtins(*, pattern_model, change_model, using: str = "default") -> int:
    """Retire stored built-ins whose key is no longer shipped (SPEC §3.2); returns how many.

    An unedited one is deleted (a "deleted" history row by ``migrate`` keeps
    its last state); one whose fields other than ``enabled`` ops changed
    becomes a custom pattern (no key, scope ``anywhere``) and keeps its history,
    with an "updated" row saying so.
    """
    shipped_keys = {builtin["key"] for builtin in BUILTINS}
    retired = 0
    for row in pattern_model.objects.using(using).filter(is_built_in=True).exclude(key__in=shipped_keys):
        history = list(change_model.objects.using(using).filter(pattern_ref=row.pk).order_by("created_at", "id"))
        before = _snapshot(row)
        if _edited(row, history):
            row.is_built_in = False
            row.key = None
            row.scope = "anywhere"
            row.save(using=using)
            action, after, link = "update", _snapshot(row), row
        else:
            action, after, link = "delete", None, None
        _migration_change(change_model, using, row, link=link, action=action, before=before, after=after)
        if link is None:
            row.delete()
        retired += 1
    return retired


def _migration_change(change_model, using: str, row, *, link, action: str, before, after) -> None:
    """The history row ``migrate`` leaves for what it did to ``row`` (``link``: the
    pattern the row stays linked to, None once it is deleted)."""
    change_model.objects.using(using).create(
        pattern=link,
        pattern_ref=row.pk,
        pattern_name=row.name,
        actor_label="migrate",
        via="migration",
        action=action,
        before=before,
        after=after,
    )


def _free_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    base = f"{name} (built-in)"
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base[:90]} {n}"
        n += 1
    return candidate[:100]


def _snapshot(row) -> dict:
    return {
        "key": row.key,
        "name": row.name,
        "pattern": row.pattern,
        "enabled": row.enabled,
        "description": row.description,
        "category": row.category,
        "retryable": row.retryable,
        "priority": row.priority,
        "scope": getattr(row, "scope", "anywhere"),
    }


def seed_builtins_after_migrate(sender, *, using="default", apps=None, verbosity=1, stdout=None, **kwargs) -> None:
    """``post_migrate`` receiver: add missing built-ins on every ``migrate`` (SPEC §3.2).

    Says ``Installed N built-in error patterns.`` on ``migrate``'s output
    (``stdout``, else ``sys.stdout``) when N > 0 and ``verbosity`` ≥ 1.
    """
    inserted = seed_builtins(using=using, apps=apps)
    if inserted and verbosity >= 1:
        (stdout or sys.stdout).write(f"Installed {inserted} built-in error patterns.\n")
