"""Context tokens: issue, limits, sliding expiry, revocation, purge (SPEC §4.5, §4.3)."""

import hashlib
import io
import re

import pytest
from django.core.management import call_command
from django.test import override_settings

from contextquery import queries, tokens
from contextquery.models import ContextToken
from project.errors import Conflict, LimitReached, Unauthorized, Unavailable
from tests.conftest import token_client
from tests.contextquery.context_fixtures import CHAIN, body_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(make_run):
    """A run with A done and B running (B may read A)."""
    rec = make_run(CHAIN)
    rec.visit("A")
    return rec.visit("B", rec.visits[0], status="RUNNING")


@pytest.fixture
def engine_client(engine):
    return token_client(engine)


def url(visit, tail=""):
    return f"/api/runs/{visit.run.run_id}/visits/{visit.visit_uuid}{tail}"


def alive(token) -> bool:
    try:
        queries.reader_authenticate(raw=token)
    except Unauthorized:
        return False
    return True


def cq(**overrides):
    from django.conf import settings

    return {**settings.HERMES_CONTEXT_QUERY, **overrides}


# --- Issue.


def test_a_token_is_48_hex_characters_and_only_its_sha256_is_stored(running):
    issued = tokens.token_issue(visit=running)
    assert re.fullmatch(r"[0-9a-f]{48}", issued.token)
    row = ContextToken.objects.get()
    assert row.token_hash == hashlib.sha256(issued.token.encode()).hexdigest()
    assert issued.token not in (row.token_hash, str(row))
    assert (row.run_id, row.visit_id) == (running.run_id, running.pk)


def test_the_context_query_object_has_the_bridges_snake_case_keys(running, clock):
    obj = tokens.context_query_object(visit=running)
    assert set(obj) == {"base_url", "token", "run_id", "visit_uuid", "expires_at"}
    assert obj["base_url"] == "http://127.0.0.1:8000"
    assert (obj["run_id"], obj["visit_uuid"]) == (running.run.run_id, str(running.visit_uuid))
    assert obj["expires_at"].endswith("Z")
    assert alive(obj["token"])


@override_settings(HERMES_CONTEXT_QUERY=cq(ENABLED=False))
def test_the_context_query_object_is_null_when_disabled(running):
    assert tokens.context_query_object(visit=running) is None
    with pytest.raises(Unavailable):
        tokens.token_issue(visit=running)
    assert ContextToken.objects.count() == 0


def test_registering_a_visit_answers_a_working_context_query(make_run, engine_client, ask):
    run_id = engine_client.post("/api/runs", {"mode": "AGENTIC", "graph": CHAIN}, format="json").json()["data"]["runId"]
    a = engine_client.post(f"/api/runs/{run_id}/visits", {"nodeId": "A", "fromVisitUuids": []}, format="json").json()[
        "data"
    ]
    engine_client.post(
        f"/api/runs/{run_id}/visits/{a['visitUuid']}/complete",
        {"status": "SUCCESS", "output": {"status": 200, "message": "ok", "data": {"x": 1}}},
        format="json",
    )
    response = engine_client.post(
        f"/api/runs/{run_id}/visits", {"nodeId": "B", "fromVisitUuid": a["visitUuid"]}, format="json"
    )
    assert response.status_code == 201
    context = response.json()["data"]["contextQuery"]
    assert context["run_id"] == run_id and context["visit_uuid"] == response.json()["data"]["visitUuid"]
    answer = ask("output", context["token"], {"runId": run_id, "nodeId": "A", "field": "x"})
    assert body_of(answer)["data"]["data"] == 1


def test_the_tokens_route_issues_another_token(running, engine_client, ask):
    response = engine_client.post(url(running, "/tokens"))
    assert response.status_code == 201
    context = body_of(response)["data"]
    assert context["visit_uuid"] == str(running.visit_uuid)
    assert ask("output", context["token"], {"runId": running.run.run_id, "nodeId": "A"}).status_code == 200


def test_a_fifth_live_token_is_429_with_retry_after(running, engine_client, clock):
    for _ in range(4):
        assert engine_client.post(url(running, "/tokens/")).status_code == 201
        clock.advance(10)
    response = engine_client.post(url(running, "/tokens"))
    assert response.status_code == 429
    assert "4 live context tokens" in body_of(response)["message"]
    assert response["Retry-After"] == str(120 - 40)  # the first token, issued at 0, expires at 120; now is 40
    assert ContextToken.objects.filter(visit=running).count() == 4


def test_an_expired_token_frees_its_place(running, clock):
    for _ in range(4):
        tokens.token_issue(visit=running)
    clock.advance(121)
    tokens.token_issue(visit=running)


def test_revoking_a_token_frees_its_place_and_kills_it(running, engine_client):
    issued = [tokens.token_issue(visit=running).token for _ in range(4)]
    response = engine_client.post(url(running, "/tokens/revoke"), {"token": issued[1]}, format="json")
    assert response.status_code == 200
    data = body_of(response)["data"]
    assert data["token"] == issued[1][:4] + "***" and data["revoked"] is True
    assert issued[1] not in response.content.decode()
    assert not alive(issued[1]) and alive(issued[0])
    assert engine_client.post(url(running, "/tokens")).status_code == 201


def test_revoking_an_unknown_token_is_404_and_a_missing_one_422(running, engine_client):
    assert engine_client.post(url(running, "/tokens/revoke"), {"token": "ab" * 24}, format="json").status_code == 404
    assert engine_client.post(url(running, "/tokens/revoke"), {}, format="json").status_code == 422


def test_another_visits_token_cannot_be_revoked_through_this_visit(flyback, engine_client):
    theirs = tokens.token_issue(visit=flyback.by["C2"]).token
    response = engine_client.post(url(flyback.by["B"], "/tokens/revoke"), {"token": theirs}, format="json")
    assert response.status_code == 404 and alive(theirs)


def test_only_the_runs_engine_may_issue_tokens(running, user):
    from django.contrib.auth.models import Permission

    user.user_permissions.add(Permission.objects.get(codename="record_run"))
    other_engine = token_client(user)
    assert other_engine.post(url(running, "/tokens")).status_code == 403
    assert (
        token_client(user).post(url(running, "/tokens/revoke"), {"token": "ab" * 24}, format="json").status_code == 403
    )


def test_a_superuser_may_issue_tokens_for_any_run(running, superuser):
    assert token_client(superuser).post(url(running, "/tokens")).status_code == 201


def test_a_user_without_record_run_is_403_and_an_anonymous_one_401(running, user_client, anon_client):
    assert user_client.post(url(running, "/tokens")).status_code == 403
    assert anon_client.post(url(running, "/tokens")).status_code == 401


def test_no_token_is_issued_for_an_ended_visit(flyback):
    with pytest.raises(Conflict):
        tokens.token_issue(visit=flyback.by["B"])
    assert tokens.context_query_object(visit=flyback.by["B"]) is None


def test_the_limit_is_raised_as_limit_reached(running):
    for _ in range(4):
        tokens.token_issue(visit=running)
    with pytest.raises(LimitReached) as caught:
        tokens.token_issue(visit=running)
    assert caught.value.retry_after >= 1


# --- Sliding expiry.


def test_a_token_expires_when_its_visit_is_idle(running, clock, issue):
    token = issue(running)
    clock.advance(119)
    assert alive(token)
    clock.advance(1)
    assert not alive(token)


def test_appending_logs_keeps_the_token_alive(running, clock, issue, engine_client):
    token = issue(running)
    for _ in range(5):
        clock.advance(100)
        response = engine_client.post(
            url(running, "/logs"), {"logs": [{"type": "THINKING", "message": "hm"}]}, format="json"
        )
        assert response.status_code == 200
    assert alive(token)
    clock.advance(121)
    assert not alive(token)


def test_heartbeats_keep_the_token_alive(running, clock, issue, engine_client):
    token = issue(running)
    for _ in range(5):
        clock.advance(100)
        assert engine_client.post(url(running, "/heartbeat")).status_code == 200
    assert alive(token)


def test_a_heartbeat_does_not_revive_an_expired_token(running, clock, issue, engine_client):
    token = issue(running)
    clock.advance(121)
    engine_client.post(url(running, "/heartbeat"))
    assert not alive(token)


def test_a_token_never_lives_past_its_maximum_lifetime(running, clock, issue):
    token = issue(running)
    for _ in range(35):
        clock.advance(100)
        tokens.tokens_touch(visit=running)
        assert alive(token)
    row = ContextToken.objects.get()
    assert (row.expires_at - row.issued_at).total_seconds() == 3600  # capped, not now + 120
    clock.advance(100)
    tokens.tokens_touch(visit=running)
    assert not alive(token)


def test_every_live_token_of_the_visit_slides_together(running, clock, issue, ask):
    first, second = issue(running), issue(running)
    clock.advance(100)
    assert ask("output", first, {"runId": running.run.run_id, "nodeId": "A"}).status_code == 200
    clock.advance(100)
    assert alive(second)


def test_a_token_dies_when_its_visit_completes(running, issue, engine_client):
    token = issue(running)
    response = engine_client.post(
        url(running, "/complete"),
        {"status": "SUCCESS", "output": {"status": 200, "message": "ok", "data": {}}},
        format="json",
    )
    assert response.status_code == 200
    assert not alive(token)
    assert ContextToken.objects.get().revoked_at is not None


def test_every_token_of_the_run_dies_when_the_run_finishes(flyback, issue, engine_client, make_run):
    mine = issue(flyback.by["C2"])
    other_run = make_run(CHAIN)
    theirs = issue(other_run.visit("A", status="RUNNING"))
    response = engine_client.post(f"/api/runs/{flyback.run.run_id}/finish", {"status": "CANCELLED"}, format="json")
    assert response.status_code == 200
    assert not alive(mine) and alive(theirs)


def test_a_token_of_an_ended_visit_is_refused_even_before_revocation(running, issue):
    token = issue(running)
    type(running).objects.filter(pk=running.pk).update(status="SUCCESS")
    with pytest.raises(Unauthorized, match="ended"):
        queries.reader_authenticate(raw=token)


# --- Purge.


GRACE = tokens.TOKEN_PURGE_GRACE.total_seconds()


def test_purge_deletes_rows_dead_for_longer_than_the_grace_period_only(running, clock, flyback):
    old = tokens.token_issue(visit=running).token
    revoked = tokens.token_issue(visit=flyback.by["C2"]).token
    tokens.token_revoke(visit=flyback.by["C2"], raw=revoked)
    clock.advance(GRACE + 121)
    fresh = tokens.token_issue(visit=running).token
    assert tokens.tokens_purge() == 2
    assert list(ContextToken.objects.values_list("token_hash", flat=True)) == [tokens.token_hash(fresh)]
    assert not alive(old)


def test_revoked_and_expired_rows_stay_until_the_grace_period_has_passed(running, clock, flyback):
    expired = tokens.token_issue(visit=running).record
    revoked = tokens.token_issue(visit=flyback.by["C2"])
    tokens.token_revoke(visit=flyback.by["C2"], raw=revoked.token)
    clock.advance(120 + GRACE - 1)  # expired 1 s short of the grace; revoked 121 s past it
    assert tokens.tokens_purge() == 1
    assert list(ContextToken.objects.values_list("pk", flat=True)) == [expired.pk]
    clock.advance(1)
    assert tokens.tokens_purge() == 1 and ContextToken.objects.count() == 0


def test_a_completed_visit_keeps_its_revoked_tokens_for_ops_to_see(running, clock):
    issued = tokens.token_issue(visit=running).record
    tokens.tokens_revoke_for_visit(visit=running)
    clock.advance(3600)
    assert tokens.tokens_purge() == 0
    assert ContextToken.objects.get(pk=issued.pk).revoked_at is not None


def test_the_purge_command_reports_how_many_rows_it_deleted(running, clock):
    tokens.token_issue(visit=running)
    clock.advance(GRACE + 121)
    out = io.StringIO()
    call_command("purge_context_tokens", stdout=out)
    assert out.getvalue().startswith("Deleted 1 context token(s)") and "24 hours" in out.getvalue()
    assert ContextToken.objects.count() == 0


def test_issuing_purges_opportunistically_at_most_once_per_interval(running, clock, flyback):
    from django.core.cache import cache

    cache.delete(tokens._PURGE_CACHE_KEY)
    first = tokens.token_issue(visit=running).record  # purges (nothing yet) and starts the interval
    clock.advance(GRACE + 121)
    tokens.token_issue(visit=flyback.by["C2"])  # inside the interval: the expired row stays
    assert ContextToken.objects.filter(pk=first.pk).exists()
    cache.delete(tokens._PURGE_CACHE_KEY)  # the interval has passed
    tokens.token_issue(visit=running)
    assert not ContextToken.objects.filter(pk=first.pk).exists()
    assert ContextToken.objects.count() == 2


@pytest.mark.slow
def test_loaddemo_prints_curl_lines_that_answer_over_real_http(live_server):
    import json
    import shlex
    import subprocess

    from django.conf import settings

    with override_settings(HERMES_CONTEXT_QUERY={**settings.HERMES_CONTEXT_QUERY, "BASE_URL": live_server.url}):
        out = io.StringIO()
        call_command("loaddemo", stdout=out)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("curl ")]
    assert [re.search(r"/internal/context/(\w+)", line).group(1) for line in lines] == ["path", "output", "meta"]
    answers = [
        json.loads(subprocess.run(shlex.split(line), capture_output=True, text=True, timeout=30).stdout)
        for line in lines
    ]
    assert [a["code"] for a in answers] == [200, 200, 200]
    assert answers[0]["data"]["nodeIds"] == ["A", "B"]
    assert answers[1]["data"]["nodeId"] == "A" and answers[2]["data"]["thinking"]
