"""Installing the shipped built-ins on ``migrate`` (SPEC §3.2).

:func:`seed_builtins_after_migrate` runs after every ``migrate`` (upgrades
included) and inserts each built-in of :data:`patterns.builtins.BUILTINS`
whose key is missing. A stored row is never overwritten.
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
                enabled=True,
                is_built_in=True,
            )
            change_model.objects.using(using).create(
                pattern=row,
                pattern_ref=row.pk,
                pattern_name=row.name,
                actor_label="migrate",
                via="migration",
                action="seed",
                before=None,
                after=_snapshot(row),
            )
            inserted += 1
        if inserted and version_model is not None:
            version_bump(version_model, using=using)
    return inserted


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
    }


def seed_builtins_after_migrate(sender, *, using="default", apps=None, verbosity=1, stdout=None, **kwargs) -> None:
    """``post_migrate`` receiver: add missing built-ins on every ``migrate`` (SPEC §3.2).

    Says ``Installed N built-in error patterns.`` on ``migrate``'s output
    (``stdout``, else ``sys.stdout``) when N > 0 and ``verbosity`` ≥ 1.
    """
    inserted = seed_builtins(using=using, apps=apps)
    if inserted and verbosity >= 1:
        (stdout or sys.stdout).write(f"Installed {inserted} built-in error patterns.\n")
