"""API conventions shared by every JSON endpoint (SPEC §2).

* ``EnvelopeJSONRenderer`` wraps every body in ``{"code", "message", "data"}``.
* ``exception_handler`` turns DRF and domain errors into that envelope with the
  right status (422 for validation, with ``data.errors`` per field).
* ``StrictJSONParser`` refuses invalid UTF-8 and malformed JSON (400), bodies
  over ``MAX_BODY_BYTES`` (413), and NUL characters or nesting deeper than
  ``MAX_JSON_DEPTH`` (422).
* ``Pagination`` reads ``page`` and ``pageSize`` (default 50, at most 500).
* ``project.authentication.TokenAuthentication`` (knox's hashed API tokens) and
  ``project.routers.ApiRouter`` (optional trailing slash) live in their own
  modules because DRF imports authentication classes while it loads its views.
"""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from rest_framework import exceptions, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from project import errors

#: The ``data.errors`` key of a problem with the whole body rather than one field.
NON_FIELD_ERRORS = "nonFieldErrors"


class UnprocessableEntity(exceptions.APIException):
    """422 raised below the serializer layer (parser, pagination).

    ``errors`` maps field paths (``text``, ``logs[0].message``, ``pageSize``,
    ``nonFieldErrors``) to messages; the exception handler sends it as
    ``data.errors``, as every 422 carries (SPEC §2).
    """

    status_code = 422
    default_detail = "The request body is not acceptable."
    default_code = "unprocessable"

    def __init__(self, detail: str, *, field: str = NON_FIELD_ERRORS, names_field: bool = False):
        # The envelope's message names the field once: "pageSize: must be …".
        named = field == NON_FIELD_ERRORS or names_field
        super().__init__(detail if named else f"{field}: {detail}")
        self.errors = {field: [str(detail)]}


class PayloadTooLarge(exceptions.APIException):
    """413: body over ``MAX_BODY_BYTES``."""

    status_code = 413
    default_code = "payload_too_large"

    def __init__(self):
        super().__init__(f"The request body is larger than the limit of {settings.MAX_BODY_BYTES} bytes.")


def _where(path: str) -> str:
    """Where in the body a problem is, for a message: ``at 'logs[0]'`` or ``at the top level``."""
    return _("at '%(path)s'") % {"path": path} if path else _("at the top level")


#: A UTF-16 surrogate code point: JSON's ``"\ud800"`` escape decodes to one when it
#: is not half of a pair (Python joins valid pairs into one character). It is not
#: Unicode text: UTF-8 cannot encode it and the databases refuse or mangle it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _text_problem(text: str) -> str | None:
    """What makes ``text`` unstorable: "a NUL character", "a lone surrogate", or None."""
    if "\x00" in text:
        return gettext_noop("a NUL character")
    if _LONE_SURROGATE.search(text):
        return gettext_noop("a lone surrogate (half of a UTF-16 character pair)")
    return None


def json_problems(value, *, max_depth: int) -> tuple[str, str] | None:
    """Why parsed JSON ``value`` is refused: ``(field, sentence)``, or None.

    Checks nesting (containers deeper than ``max_depth``; field
    ``nonFieldErrors``) and, in keys and strings, NUL characters (PostgreSQL
    cannot store them) and lone surrogates (``"\ud800"``: half of a character,
    what a client that cut a string mid-emoji sends), SPEC §2, §4.3. The field
    is the path of the string (``text``, ``logs[0].message``) or of the object
    holding the key. Iterative, so a hostile document cannot exhaust the stack.
    """
    too_deep = (NON_FIELD_ERRORS, _("The JSON body is nested deeper than %(depth)d levels.") % {"depth": max_depth})
    stack = [(value, 1, "")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, dict):
            if depth > max_depth:
                return too_deep
            for key, child in item.items():
                problem = _text_problem(key)
                if problem:
                    return (
                        where or NON_FIELD_ERRORS,
                        _("A key %(where)s contains %(problem)s, which is not allowed.")
                        % {"where": _where(where), "problem": _(problem)},
                    )
                stack.append((child, depth + 1, f"{where}.{key}" if where else key))
        elif isinstance(item, list):
            if depth > max_depth:
                return too_deep
            for index, child in enumerate(item):
                stack.append((child, depth + 1, f"{where}[{index}]"))
        elif isinstance(item, str):
            problem = _text_problem(item)
            if problem and not where:
                return (
                    NON_FIELD_ERRORS,
                    _("The body is a string with %(problem)s, which is not allowed.") % {"problem": _(problem)},
                )
            if problem:
                return (
                    where,
                    _("The field '%(field)s' contains %(problem)s, which is not allowed.")
                    % {"field": where, "problem": _(problem)},
                )
    return None


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def parse_json_bytes(raw: bytes):
    """Decode a JSON request body under the SPEC §2 rules.

    Returns the parsed value. Raises ``exceptions.ParseError`` (400) for invalid
    UTF-8 or malformed JSON, ``UnprocessableEntity`` (422) for NUL characters or
    excessive nesting.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise exceptions.ParseError(f"The request body is not valid UTF-8 (byte {exc.start}).") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise UnprocessableEntity(
            _("The JSON body is nested deeper than %(depth)d levels.") % {"depth": settings.MAX_JSON_DEPTH}
        ) from None
    except ValueError as exc:
        raise exceptions.ParseError(f"The request body is not valid JSON: {exc}.") from None
    # NUL and lone surrogates reach a parsed value only through \u escapes, and
    # nesting needs brackets: a body without them is clean, unwalked.
    if b"\\u" in raw or raw.count(b"{") + raw.count(b"[") > settings.MAX_JSON_DEPTH:
        problem = json_problems(value, max_depth=settings.MAX_JSON_DEPTH)
        if problem:
            field, sentence = problem
            raise UnprocessableEntity(sentence, field=field, names_field=True)
    return value


class StrictJSONParser(BaseParser):
    """JSON parser enforcing the size, encoding, NUL and depth rules of SPEC §2."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge()
        if not raw.strip():
            return {}
        return parse_json_bytes(raw)


def envelope(code: int, message: str, data=None) -> dict:
    """The body of every JSON answer: ``{"code", "message", "data"}`` (SPEC §2)."""
    return {"code": code, "message": message, "data": data}


class EnvelopeJSONRenderer(JSONRenderer):
    """Wrap successful bodies in the envelope; error bodies arrive wrapped
    already from ``exception_handler``."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None and not getattr(response, "enveloped", False):
            data = envelope(response.status_code, "success", data)
        return super().render(data, accepted_media_type, renderer_context)


def camel_case(name: str) -> str:
    """``snake_case`` → ``snakeCase`` (the API's key spelling, SPEC §2); other names unchanged."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest) if rest and head else name


def _join(path: str, key) -> str:
    """Field path in one spelling: ``logs[0].type`` (list indexes in brackets,
    also for DRF's ``{0: …}`` ListField errors)."""
    if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _first_message(detail) -> str:
    """One sentence from DRF's nested error structure, naming the field
    (the first message of :func:`flatten_errors`)."""
    for field, messages in flatten_errors(detail).items():
        if messages:
            return messages[0] if field == NON_FIELD_ERRORS else f"{field}: {messages[0]}"
    return "The request is not valid."


def flatten_errors(detail) -> dict[str, list[str]]:
    """DRF's error detail → ``{"field": ["message", …]}`` with dotted paths
    (``logs[0].type``); errors of the whole body under ``nonFieldErrors``."""
    out: dict[str, list[str]] = {}

    def walk(value, path):
        if isinstance(value, dict):
            for key, child in value.items():
                walk(child, _join(path, key) if key != "non_field_errors" else (path or "nonFieldErrors"))
        elif isinstance(value, list):
            if all(not isinstance(v, (dict, list)) for v in value):
                out.setdefault(path or "nonFieldErrors", []).extend(str(v) for v in value)
            else:
                for index, child in enumerate(value):
                    walk(child, f"{path}[{index}]")
        else:
            out.setdefault(path or "nonFieldErrors", []).append(str(value))

    walk(detail, "")
    return out


def error_response(status_code: int, message: str, data=None, headers=None) -> Response:
    """A DRF Response carrying an error envelope."""
    response = Response(envelope(status_code, message, data), status=status_code, headers=headers)
    response.enveloped = True
    return response


def _not_found_message(exc: Http404, view) -> str:
    """The sentence of a 404 raised by ``get_object_or_404`` in a DRF view.

    Django's own text names the model class ("No HermesErrorPattern matches the
    given query.") and DRF's names nothing, so a generic view's lookup becomes
    "No error pattern with id 12." (the model's verbose name, ``id`` for a
    primary-key lookup, else the lookup field). Any other ``Http404`` keeps
    its message.
    """
    message = str(exc)
    lookup_field = getattr(view, "lookup_field", None)
    lookup = getattr(view, "lookup_url_kwarg", None) or lookup_field
    value = (getattr(view, "kwargs", None) or {}).get(lookup)
    if value is not None and hasattr(view, "get_queryset"):
        meta = view.get_queryset().model._meta
        if not message or message == f"No {meta.object_name} matches the given query.":
            with translation.override("en"):  # the API's sentences are English
                label = "id" if lookup_field in {"pk", "id"} else lookup_field
                return f"No {meta.verbose_name} with {label} {value}."
    return message or "Not found."


def error_parts(exc, view=None) -> tuple[int, str, dict | None, dict[str, str]] | None:
    """``(status, message, data, headers)`` of the envelope answering ``exc``
    (SPEC §2), or None for an exception the request did not cause (a real
    server error). ``view`` names the object of a DRF lookup's 404."""
    if isinstance(exc, errors.DomainError):
        headers = {}
        if isinstance(exc, errors.LimitReached) and exc.retry_after is not None:
            headers["Retry-After"] = str(exc.retry_after)
        if isinstance(exc, errors.Unauthorized):
            headers["WWW-Authenticate"] = "Token"
        return exc.status, exc.message, {"errors": exc.errors} if exc.errors else None, headers
    if isinstance(exc, Http404):
        return 404, _not_found_message(exc, view), None, {}
    if isinstance(exc, PermissionDenied):
        return 403, str(exc) or "You do not have permission to perform this action.", None, {}
    if isinstance(exc, exceptions.ValidationError):
        detail = exc.detail if isinstance(exc.detail, dict) else {"nonFieldErrors": exc.detail}
        return 422, _first_message(detail), {"errors": flatten_errors(detail)}, {}
    if isinstance(exc, exceptions.APIException):
        headers = {}
        status_code = exc.status_code
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            status_code = 401  # token auth comes first, so never 403 here (SPEC §2)
            headers["WWW-Authenticate"] = "Token"
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait))
        detail = exc.detail
        message = str(detail) if not isinstance(detail, (dict, list)) else _first_message(detail)
        data = {"errors": exc.errors} if isinstance(exc, UnprocessableEntity) else None
        return status_code, message, data, headers
    return None


def exception_handler(exc, context):
    """DRF's exception handler: every error the request caused as the envelope
    (:func:`error_parts`); unknown exceptions propagate (a real server error)."""
    parts = error_parts(exc, (context or {}).get("view"))
    if parts is None:
        return None
    status_code, message, data, headers = parts
    return error_response(status_code, message, data, headers)


class EncodedJSON(bytes):
    """A value already encoded by :func:`json_bytes`: :func:`envelope_bytes`
    puts it in the envelope's ``data`` as it is (for answers kept encoded)."""


def json_bytes(value) -> EncodedJSON:
    """``value`` as the bytes ``EnvelopeJSONRenderer`` writes: compact UTF-8,
    U+2028/U+2029 escaped; a lone surrogate in stored text comes out escaped
    rather than failing. Raises ``ValueError`` for NaN or infinity."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raw = json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")
    if b"\xe2\x80\xa8" in raw or b"\xe2\x80\xa9" in raw:
        raw = raw.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return EncodedJSON(raw)


def envelope_bytes(code: int, message: str, data=None) -> bytes:
    """The envelope as the bytes ``EnvelopeJSONRenderer`` writes (:func:`json_bytes`),
    for views that answer without DRF's machinery. ``data`` may be
    :class:`EncodedJSON`, then it is placed as it is."""
    if isinstance(data, EncodedJSON):
        # The envelope's last key is data: '..."data":null}' becomes '..."data":<data>}'.
        return bytes(json_bytes(envelope(code, message, None))[: -len(b"null}")] + data + b"}")
    return bytes(json_bytes(envelope(code, message, data)))


class Pagination(PageNumberPagination):
    """``page`` and ``pageSize`` (default 50, 1..500); data is
    ``{count, next, previous, results}`` (SPEC §2)."""

    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 500

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if not 1 <= size <= self.max_page_size:
            raise UnprocessableEntity(
                _("must be an integer from 1 to %(max)d, not %(value)r.") % {"max": self.max_page_size, "value": raw},
                field="pageSize",
            )
        return size

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["count", "results"],
            "properties": {
                "count": {"type": "integer"},
                "next": {"type": "string", "nullable": True, "format": "uri"},
                "previous": {"type": "string", "nullable": True, "format": "uri"},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view):
        return [
            {"name": "page", "required": False, "in": "query", "schema": {"type": "integer", "minimum": 1}},
            {
                "name": "pageSize",
                "required": False,
                "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page_size},
            },
        ]


def json_error(status_code: int, message: str, data=None, headers=None) -> JsonResponse:
    """A plain Django JsonResponse carrying an error envelope (for middleware
    and URL-level handlers that run outside DRF)."""
    response = JsonResponse(
        envelope(status_code, message, data),
        status=status_code,
        json_dumps_params={"ensure_ascii": False, "separators": (",", ":")},  # compact, as DRF writes
    )
    for key, value in (headers or {}).items():
        response[key] = value
    return response


def is_api_path(path: str) -> bool:
    """True for paths answered in JSON (the API and the internal endpoints)."""
    return path.startswith(("/api/", "/internal/", "/healthz"))


__all__ = [
    "EnvelopeJSONRenderer",
    "Pagination",
    "StrictJSONParser",
    "envelope",
    "error_response",
    "exception_handler",
    "json_error",
    "status",
]
