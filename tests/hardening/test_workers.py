"""Several gunicorn workers with the Redis cache (SPEC §1, §3.3).

A pattern change made through one worker takes effect for the very next
detection in every worker: after each change, detections sent at once over
fresh connections (so the four workers answer them) all see it. Which worker
answered is read from gunicorn's access log.
"""

from __future__ import annotations

import concurrent.futures
import os
import secrets

import pytest

from tests.hardening.conftest import Api
from tests.support import envelope

pytestmark = pytest.mark.slow

WORKERS = 4
DETECTIONS = 32  # per step, 8 at a time
REDIS_DB = os.environ.get("HARDENING_REDIS_DB", "13")


def detect_many(api: Api, text: str) -> list[dict]:
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        responses = list(
            pool.map(lambda _: api.post("/api/hermes-error-patterns/detect", {"text": text}), range(DETECTIONS))
        )
    return [envelope(r, 200) for r in responses]


def test_a_pattern_change_through_one_worker_is_effective_for_the_next_detection_in_all(database, gunicorn):
    db = database()
    creds = db.seed()
    server = gunicorn(db, workers=WORKERS, env={"REDIS_URL": f"redis://127.0.0.1:6379/{REDIS_DB}"})
    staff, reader = Api(server, creds["staffToken"]), Api(server, creds["userToken"])
    marker = f"zebra quartz {secrets.token_hex(3)}"
    reply, altered = f"{marker} happened", f"{marker} altered"
    assert not any(v["isError"] for v in detect_many(reader, reply))  # every worker has compiled the set now

    created = envelope(
        staff.post(
            "/api/hermes-error-patterns",
            {"name": marker, "pattern": marker, "priority": -1, "category": "other", "scope": "anywhere"},
        ),
        201,
    )
    pk = created["id"]
    steps = [
        ("created", None, reply, True),
        ("disabled", lambda: staff.post(f"/api/hermes-error-patterns/{pk}/toggle"), reply, False),
        ("enabled", lambda: staff.post(f"/api/hermes-error-patterns/{pk}/toggle"), reply, True),
        (
            "edited",
            lambda: staff.post(f"/api/hermes-error-patterns/{pk}/edit", {"pattern": f"regex:{marker} alt"}),
            reply,
            False,
        ),
        ("edited, new text", None, altered, True),
        ("deleted", lambda: staff.post(f"/api/hermes-error-patterns/{pk}/delete"), altered, False),
    ]
    seen = {}
    for name, change, text, expected in steps:
        if change is not None:
            assert change().status_code == 200, name
        verdicts = detect_many(reader, text)
        seen[name] = sorted({(v["isError"], v["matchedPatternId"]) for v in verdicts})
        assert seen[name] == [(expected, pk if expected else None)], (name, seen[name])
    answered = server.answered_by("/api/hermes-error-patterns/detect")
    print(f"\n{sum(answered.values())} detections answered by workers {answered}")
    assert len(answered) == WORKERS  # every worker answered, and none was stale
