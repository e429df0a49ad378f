"""Assertions every test module shares (SPEC §2)."""


def envelope_body(response, status: int | None = None) -> dict:
    """Check that ``response`` (Django's test client, DRF's, or ``requests``) is
    JSON in the envelope ``{code, message, data}`` with ``code`` equal to the
    HTTP status (and to ``status`` when given), ``message`` "success" on
    success and a sentence on error; return the whole body."""
    if status is not None:
        assert response.status_code == status, (response.status_code, getattr(response, "content", b"")[:500])
    assert response.headers["Content-Type"].startswith("application/json"), response.headers["Content-Type"]
    body = response.json()
    assert set(body) == {"code", "message", "data"} and body["code"] == response.status_code, body
    assert isinstance(body["message"], str) and body["message"]
    if response.status_code < 400:
        assert body["message"] == "success", body
    return body


def envelope(response, status: int) -> dict | None:
    """:func:`envelope_body` for ``status``, returning the envelope's ``data``."""
    return envelope_body(response, status)["data"]
