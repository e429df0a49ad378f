"""Context tokens (SPEC §4.5): issue, authenticate, slide, revoke, purge.

CONTRACT used by ``ingest.py`` (implemented fully by the tokens work; until
then these are the agreed signatures):

* ``context_query_object(*, visit) -> dict | None`` — issue a token for a newly
  registered (or re-registered) visit and return the ``contextQuery`` object
  ``{base_url, token, run_id, visit_uuid, expires_at}``; ``None`` when context
  query is disabled.
* ``tokens_touch(*, visit) -> None`` — a sign of life of the visit (a log
  batch, a heartbeat): slide its live tokens' expiry.
* ``tokens_revoke_for_visit(*, visit) -> int`` — revoke the visit's live
  tokens (its completion). Returns how many.
* ``tokens_revoke_for_run(*, run) -> int`` — revoke the run's live tokens
  (its finish). Returns how many.
"""


def context_query_object(*, visit) -> dict | None:
    """See the module docstring. Placeholder until tokens land: no token."""
    return None


def tokens_touch(*, visit) -> None:
    """See the module docstring."""


def tokens_revoke_for_visit(*, visit) -> int:
    """See the module docstring."""
    return 0


def tokens_revoke_for_run(*, run) -> int:
    """See the module docstring."""
    return 0
