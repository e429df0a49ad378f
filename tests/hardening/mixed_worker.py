"""A process of the mixed-load race (``test_concurrency_pg.py``).

``python -m tests.hardening.mixed_worker setup`` records a run and prints its
ids and credentials as JSON. ``python -m tests.hardening.mixed_worker <role>
<start_at> <count> <json setup>`` waits until ``start_at`` (a ``time.time()``
value, so every process fires together), sends ``count`` requests of its role
through Django's full request stack — ``register`` visits on the run,
``logs`` batches to one visit, ``tokens`` issued for one visit, ``query``
context queries with one token — and prints the status codes as JSON.
"""

import json
import os
import sys
import time

LOG_BATCH = 5


def setup() -> dict:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from knox.models import AuthToken

    from contextquery import judgement, recording

    user = get_user_model().objects.create(username=f"mixed-{os.getpid()}")
    user.user_permissions.add(*Permission.objects.filter(codename__in=["record_run"]))
    user = get_user_model().objects.get(pk=user.pk)
    graph = {"nodes": [{"id": n} for n in "ABCG"], "edges": [{"source": s, "target": t} for s, t in ("AB", "BC", "CG")]}
    run, _ = recording.run_create(user=user, graph=graph, mode="AGENTIC")
    a = recording.visit_register(run=run, node_id="A", from_visit_uuids=[]).visit
    judgement.visit_complete(
        visit=a, status="SUCCESS", output={"status": 200, "message": "ok", "data": {"x": 1}}, final_text=None
    )
    reader = recording.visit_register(run=run, node_id="B", from_visit_uuids=[str(a.visit_uuid)])
    logged = recording.visit_register(run=run, node_id="C", from_visit_uuids=[str(a.visit_uuid)]).visit
    issued = recording.visit_register(run=run, node_id="G", from_visit_uuids=[str(a.visit_uuid)]).visit
    return {
        "runId": run.run_id,
        "apiToken": AuthToken.objects.create(user=user)[1],
        "a": str(a.visit_uuid),
        "reader": str(reader.visit.visit_uuid),
        "contextToken": reader.context_query["token"],
        "logged": str(logged.visit_uuid),
        "issued": str(issued.visit_uuid),
    }


def request(client, role: str, i: int, s: dict):
    api = {"HTTP_AUTHORIZATION": f"Token {s['apiToken']}"}
    run = f"/api/runs/{s['runId']}"
    if role == "register":
        body = {"nodeId": "BCG"[i % 3], "fromVisitUuids": [s["a"]]}
        return client.post(f"{run}/visits", body, content_type="application/json", **api)
    if role == "logs":
        logs = [{"type": "TEXT", "message": f"{os.getpid()}-{i}-{j}"} for j in range(LOG_BATCH)]
        return client.post(f"{run}/visits/{s['logged']}/logs", {"logs": logs}, content_type="application/json", **api)
    if role == "tokens":
        return client.post(f"{run}/visits/{s['issued']}/tokens", content_type="application/json", **api)
    endpoint, body = [
        ("output", {"runId": s["runId"], "nodeId": "A"}),
        ("path", {"runId": s["runId"]}),
        ("meta", {"runId": s["runId"], "nodeId": "A", "kind": "ALL"}),
    ][i % 3]
    return client.post(
        f"/internal/context/{endpoint}", body, content_type="application/json", HTTP_X_CONTEXT_TOKEN=s["contextToken"]
    )


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    import django

    django.setup()
    if argv[0] == "setup":
        print(json.dumps(setup()))
        return
    from django.db import connection
    from django.test import Client

    role, start_at, count, s = argv[0], float(argv[1]), int(argv[2]), json.loads(argv[3])
    client = Client()
    connection.ensure_connection()
    client.get("/healthz")  # warm up imports and the connection before the start line
    time.sleep(max(0.0, start_at - time.time()))
    statuses, slowest = [], 0.0
    for i in range(count):
        began = time.monotonic()
        statuses.append(request(client, role, i, s).status_code)
        slowest = max(slowest, time.monotonic() - began)
    print(
        f"slowest {role} request {slowest:.3f} s, all {count} done at {time.time() - start_at:.1f} s", file=sys.stderr
    )
    print(json.dumps(statuses))


if __name__ == "__main__":
    main(sys.argv[1:])
