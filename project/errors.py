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

    @classmethod
    def from_django(cls, error, *, field: str | None = None, names=None) -> "Invalid":
        """Build from Django's ``ValidationError``: errors keyed by field (``__all__``
        becomes ``nonFieldErrors``; ``field`` keys an error that names none;
        ``names`` maps model field names to API names). The message is the first
        error, naming its field."""
        if hasattr(error, "error_dict"):
            raw = error.message_dict
        else:
            raw = {field or "nonFieldErrors": list(error.messages)}
        errors: dict[str, list[str]] = {}
        for key, messages in raw.items():
            key = "nonFieldErrors" if key == "__all__" else (names(key) if names else key)
            errors.setdefault(key, []).extend(str(m) for m in messages)
        first_field, first = next(iter(errors.items()))
        message = first[0] if first_field == "nonFieldErrors" else f"{first_field}: {first[0]}"
        return cls(message, errors=errors)


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
