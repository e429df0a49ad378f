"""Middleware enforcing SPEC §2 outside DRF: body size (413) and a database
outage answered as 503 in the envelope, never an HTML 500 page."""

import io

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpResponse

from project.api import is_api_path, json_error

#: Bytes read at a time when a refused body is discarded.
_DISCARD_CHUNK = 256 * 1024


class BodySizeLimitMiddleware:
    """Refuse a request whose body exceeds ``MAX_BODY_BYTES`` with 413 (SPEC §2).

    A declared ``Content-Length`` over the limit is refused before anything
    parses the body; a chunked body is read here up to the limit. Either way
    the rest of a refused body is read and thrown away, up to
    ``MAX_BODY_DISCARD_BYTES`` in all, before the answer: a server that closes
    with unread bytes makes the kernel reset the connection, and a client
    still sending then sees a reset instead of the 413 (issue 14). A body
    larger than that bound is answered without reading it.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_BODY_BYTES or not self._buffer_chunked(request):
            if length <= settings.MAX_BODY_DISCARD_BYTES:
                self._discard(request.META["wsgi.input"], length or None)
            message = f"The request body is larger than the limit of {settings.MAX_BODY_BYTES} bytes."
            if is_api_path(request.path):
                return json_error(413, message)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    @staticmethod
    def _discard(stream, length: int | None) -> None:
        """Read and drop what is left of a refused body: ``length`` bytes, or
        (chunked) until its end, never more than ``MAX_BODY_DISCARD_BYTES``."""
        left = min(length, settings.MAX_BODY_DISCARD_BYTES) if length else settings.MAX_BODY_DISCARD_BYTES
        try:
            while left > 0:
                chunk = stream.read(min(_DISCARD_CHUNK, left))
                if not chunk:
                    return
                left -= len(chunk)
        except OSError:  # the client gave up: nothing left to answer politely
            return

    @staticmethod
    def _buffer_chunked(request) -> bool:
        """Read a chunked body (no ``Content-Length``) into memory, at most
        ``MAX_BODY_BYTES``; False when it is larger. Django reads only
        ``CONTENT_LENGTH`` bytes, so without this a chunked body reads as empty."""
        if (
            request.META.get("CONTENT_LENGTH")
            or "chunked" not in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        ):
            return True
        raw = request.META["wsgi.input"].read(settings.MAX_BODY_BYTES + 1)
        if len(raw) > settings.MAX_BODY_BYTES:
            return False
        request._stream = LimitedStream(io.BytesIO(raw), len(raw))
        request.META["CONTENT_LENGTH"] = str(len(raw))
        return True


def _database_down(exc) -> bool:
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    # psycopg raises its own OperationalError subclasses wrapped by Django;
    # a DatabaseError whose cause is a connection failure counts too.
    return isinstance(exc, DatabaseError) and "connect" in str(exc).lower()


class DatabaseUnavailableMiddleware:
    """Answer 503 (envelope for the API, a short page otherwise) when the
    database cannot be reached, so an outage never shows a 500 (SPEC §2)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exc):
        if not _database_down(exc):
            return None
        message = "The database is unavailable; try again shortly."
        if is_api_path(request.path):
            return json_error(503, message, headers={"Retry-After": "5"})
        response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = "5"
        return response
