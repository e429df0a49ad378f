"""drf-spectacular schema class describing the envelope (SPEC §2).

Every documented response body becomes ``{code, message, data}`` with ``code``
fixed to the status; each operation also documents the error statuses it can
answer, each with the error envelope, so a schema checker catches a wrong body.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_bearer_security_scheme_object

ERROR_STATUSES = {
    "400": "Malformed JSON or invalid UTF-8.",
    "401": "Not authenticated, or a bad token.",
    "403": "Authenticated but not allowed.",
    "404": "Not found.",
    "409": "Conflicts with stored state.",
    "413": "Body over MAX_BODY_BYTES.",
    "422": "Validation error; data.errors maps fields to messages.",
    "429": "A limit was reached.",
    "503": "Feature disabled or database unavailable.",
}

#: Answered by the HTTP server before the application sees the request, so as the server's own
#: HTML page rather than an envelope: a request line (method, path and query) over its limit
#: (gunicorn's ``limit_request_line``, 4094 bytes by default). Documented on every operation.
URI_TOO_LONG = {
    "description": "Request line over the HTTP server's limit (gunicorn: 4094 bytes); the server's HTML page.",
    "content": {"text/html": {"schema": {"type": "string"}}},
}


def envelope_schema(code, data_schema: dict | None) -> dict:
    """OpenAPI schema of an envelope whose ``data`` is ``data_schema``."""
    schema = {
        "type": "object",
        "required": ["code", "message", "data"],
        "properties": {
            "code": {"type": "integer", "enum": [int(code)]},
            "message": {"type": "string"},
            "data": data_schema if data_schema is not None else {"nullable": True},
        },
    }
    return schema


def error_envelope_schema(code) -> dict:
    """OpenAPI schema of an error envelope: data null or ``{errors: {field: [str]}}``."""
    return envelope_schema(
        code,
        {
            "type": "object",
            "nullable": True,
            "properties": {
                "errors": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                }
            },
        },
    )


class EnvelopeAutoSchema(AutoSchema):
    """AutoSchema that wraps bodies in the envelope and adds error statuses, and
    groups operations by resource: a view's ``schema_tag`` names its group in
    Swagger UI ("Runs", "Visits", "Logs" …)."""

    def get_tags(self) -> list[str]:
        tag = getattr(self.view, "schema_tag", None)
        return [str(tag)] if tag else super().get_tags()

    #: statuses documented for every operation; views may narrow or widen this.
    error_statuses = tuple(ERROR_STATUSES)

    def _get_response_for_code(self, serializer, status_code, media_types=None, direction="response"):
        response = super()._get_response_for_code(serializer, status_code, media_types, direction)
        if not str(status_code).isdigit():
            return response
        for body in response.get("content", {}).values():
            if int(status_code) >= 400:
                body["schema"] = error_envelope_schema(status_code)
            else:
                body["schema"] = envelope_schema(status_code, body.get("schema"))
        if "content" not in response and int(status_code) < 400:
            response["content"] = {"application/json": {"schema": envelope_schema(status_code, None)}}
        return response

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        statuses = getattr(self.view, "error_statuses", self.error_statuses)
        for code in statuses:
            code = str(code)
            if code in responses:
                continue
            responses[code] = {
                "description": ERROR_STATUSES.get(code, "Error."),
                "content": {"application/json": {"schema": error_envelope_schema(code)}},
            }
        responses.setdefault("414", URI_TOO_LONG)
        return responses


class TokenScheme(OpenApiAuthenticationExtension):
    """Documents ``project.authentication.TokenAuthentication`` (knox's contrib
    extension matches only knox's own class): ``Authorization: Token …``."""

    target_class = "project.authentication.TokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(header_name="Authorization", token_prefix="Token")
