"""Domain errors raised by rule modules and mapped to HTTP statuses in one place
(``project.api.exception_handler``). No HTTP objects here: rule modules,
commands and the admin raise and catch these too.
"""


class DomainError(Exception):
    """Base class: ``status`` is the HTTP status the API answers with, ``message``
    a full sentence saying what was wrong and what is allowed."""

    status = 400

    def __init__(self, message: str, *, errors: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.message = message
        self.errors = errors


class Invalid(DomainError):
    """422: a field has a wrong value. ``errors`` maps field names to messages."""

    status = 422

    @classmethod
    def field(cls, name: str, message: str) -> "Invalid":
        """Build an error about one field; the message names the field."""
        return cls(f"{name}: {message}", errors={name: [message]})


class Unauthorized(DomainError):
    """401: missing or bad credentials."""

    status = 401


class Forbidden(DomainError):
    """403: authenticated but not allowed."""

    status = 403


class NotFound(DomainError):
    """404: the object does not exist or is out of the caller's scope."""

    status = 404


class Conflict(DomainError):
    """409: the request conflicts with stored state (a built-in, a finished run …)."""

    status = 409


class LimitReached(DomainError):
    """429: a limit was reached. ``retry_after`` (seconds) is sent as
    ``Retry-After`` when waiting helps, else ``None``."""

    status = 429

    def __init__(self, message: str, *, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(DomainError):
    """503: the feature is disabled or the database is down."""

    status = 503
