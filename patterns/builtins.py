"""The shipped built-in error patterns and their seeding (SPEC §3.2).

``BUILTINS`` is data only: one dict per pattern with a stable ``key``. Keys
never change meaning; a new shape gets a new key, so ``seed_builtins`` can add
it to existing databases on the next ``migrate`` without touching rows ops
have edited.
"""

from __future__ import annotations

BUILTINS: list[dict] = [
    {
        "key": "hermes-api-call-failed",
        "name": "hermes-agent: API call failed after retries",
        "pattern": r"regex:^\s*API call failed after \d+ retr",
        "description": "hermes-agent gave up on the LLM call and returned its error as the reply.",
        "category": "other",
        "retryable": True,
        "priority": 90,
    },
    {
        "key": "http-429",
        "name": "HTTP 429 Too Many Requests",
        "pattern": r"regex:^\W{0,4}(?:[^\n]{0,80}?\b)?HTTP 429\b",
        "description": "A reply that starts with an HTTP 429 status: the provider is rate limiting.",
        "category": "rate_limit",
        "retryable": True,
        "priority": 60,
    },
    {
        "key": "http-5xx",
        "name": "HTTP 5xx server error",
        "pattern": r"regex:^\W{0,4}(?:[^\n]{0,80}?\b)?HTTP 5\d\d\b",
        "description": "A reply that starts with an HTTP 5xx status from the provider.",
        "category": "server_error",
        "retryable": True,
        "priority": 70,
    },
    {
        "key": "http-4xx",
        "name": "HTTP 4xx client error",
        "pattern": r"regex:^\W{0,4}(?:[^\n]{0,80}?\b)?HTTP 4\d\d\b",
        "description": "A reply that starts with an HTTP 4xx status from the provider.",
        "category": "other",
        "retryable": False,
        "priority": 80,
    },
    {
        "key": "zh-overloaded",
        "name": "该模型当前访问量过大",
        "pattern": r"regex:^.{0,120}?(?:该模型)?当前访问量过大[，,]?\s*请(?:您)?稍后再试",
        "description": "Zhipu/GLM: the model is overloaded, try again later.",
        "category": "overloaded",
        "retryable": True,
        "priority": 20,
    },
]


def seed_builtins(*, using: str = "default", apps=None) -> int:
    """Insert every built-in whose key is missing; return how many were inserted (SPEC §3.2).

    Never overwrites a stored row (an edited or disabled built-in stays as
    ops left it). A name already taken by another pattern gets a suffix.
    ``apps`` is the app registry of a ``post_migrate`` signal (defaults to the
    global one). Inserted rows are marked built-in and get an "installed"
    history entry.
    """
    if apps is None:
        from django.apps import apps as global_apps

        apps = global_apps
    try:
        Pattern = apps.get_model("patterns", "HermesErrorPattern")
        Change = apps.get_model("patterns", "PatternChange")
    except LookupError:
        return 0
    try:
        Version = apps.get_model("patterns", "PatternSetVersion")
    except LookupError:
        Version = None

    from django.db import transaction

    from patterns.detection import version_bump

    inserted = 0
    with transaction.atomic(using=using):
        patterns = Pattern.objects.using(using)
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
            Change.objects.using(using).create(
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
        if inserted and Version is not None:
            version_bump(Version, using=using)
    return inserted


def builtin_by_key(key: str) -> dict | None:
    """The shipped definition for ``key``, or None."""
    return next((b for b in BUILTINS if b["key"] == key), None)


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


def seed_builtins_after_migrate(sender, *, using="default", apps=None, **kwargs) -> None:
    """``post_migrate`` receiver: add missing built-ins on every ``migrate`` (SPEC §3.2)."""
    seed_builtins(using=using, apps=apps)
