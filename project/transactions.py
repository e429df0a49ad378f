"""Transaction settings shared by the write paths that may trade durability for speed."""

from django.db import connection


def commit_without_waiting_for_disk() -> None:
    """On PostgreSQL, let the current transaction's commit return before its
    WAL reaches the disk (``SET LOCAL synchronous_commit TO OFF``: this
    transaction only). A no-op on SQLite (WAL with ``synchronous=NORMAL``
    already commits without waiting for the disk). Call it inside
    ``transaction.atomic()``.

    Used where waiting for the disk dominated the request and losing the last
    fraction of a second of writes to a crash of the database server (not of
    Hermes Ops) is acceptable: log batches, the visit's telemetry (issue 14).
    A crash never corrupts or reorders what is kept. Everything else (runs,
    visits, completions, tokens, budgets, audit rows, every ops change) stays
    synchronous. (Tried for the context queries too: there the extra round
    trip cost more than the disk wait saved.)
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
