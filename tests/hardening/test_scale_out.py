"""Two gunicorn instances behind nginx, sharing PostgreSQL and Redis (issue 14).

nginx (Debian's package, run here with its own configuration and temporary
paths on a free loopback port) serves ``deploy/nginx-hermes-ops.conf``, the
file docs/deploy.md tells users to install, with only the upstream addresses
and the listen line replaced. The test registers a visit through nginx and
queries with its token on each instance directly, changes a pattern through
nginx and sees the next detection of both instances change, spends a visit's
budget across both (exactly MAX_QUERIES_PER_VISIT answered), and checks what
nginx does not forward and which client address the app sees.

PostgreSQL only (two instances cannot share an SQLite file across machines):
on SQLite these tests are deselected, not skipped (see ``conftest.py``).
"""

from __future__ import annotations

import concurrent.futures
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests

from tests.hardening.conftest import ROOT, Api, Server, database_copy, run_with_visit
from tests.support import envelope

pytestmark = [pytest.mark.slow, pytest.mark.postgresql_only]

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SITE = ROOT / "deploy" / "nginx-hermes-ops.conf"
PROXY_ADDRESS = "127.0.0.2"  # the site file's proxy_bind
BUDGET = 50


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def nginx_config(folder: Path, *, port: int, upstreams: list[str]) -> Path:
    """A whole nginx.conf in ``folder`` wrapping the shipped site file."""
    site = SITE.read_text()
    servers = "".join(f"    server {address};\n" for address in upstreams)
    site, replaced = re.subn(r"(upstream hermes_ops \{\n)(?:    server [^\n]+\n)+", rf"\g<1>{servers}", site)
    assert replaced == 1
    site, replaced = re.subn(r"listen 80;", f"listen 127.0.0.1:{port};", site)
    assert replaced == 1
    (folder / "site.conf").write_text(site)
    temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    conf = folder / "nginx.conf"
    conf.write_text(
        f"""
daemon off;
master_process off;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log {folder}/access.log;
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    include {folder}/site.conf;
}}
"""
    )
    return conf


@pytest.fixture(scope="module")
def cluster(_database_templates, tmp_path_factory):
    """``SimpleNamespace(db, creds, one, two, nginx)``: two instances and nginx in
    front, shared by the module's tests (each works on its own run or pattern)."""
    tmp_path = tmp_path_factory.mktemp("scale-out")
    db = database_copy(_database_templates("postgresql"), tmp_path)
    creds = db.seed()
    env = {"REDIS_URL": "redis://127.0.0.1:6379/3", "HERMES_OPS_TRUSTED_PROXIES": PROXY_ADDRESS}
    one = Server(db, workers=1, env=env, log_dir=tmp_path).start()
    two = Server(db, workers=1, env=env, log_dir=tmp_path).start()
    port = _free_port()
    conf = nginx_config(tmp_path, port=port, upstreams=[u.removeprefix("http://") for u in (one.url, two.url)])
    proc = subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(tmp_path), "-e", str(tmp_path / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    front = SimpleNamespace(url=f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while True:
        try:
            if requests.get(front.url + "/healthz", timeout=2).status_code == 200:
                break
        except requests.RequestException:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError((tmp_path / "error.log").read_text(errors="replace")[-3000:])
        time.sleep(0.1)
    yield SimpleNamespace(db=db, creds=creds, one=one, two=two, nginx=front)
    proc.terminate()
    proc.wait(timeout=10)
    for server in (one, two):
        server.stop()
    db.drop()


def ask(server, endpoint: str, token: str, body: dict) -> requests.Response:
    return Api(server).request(
        "POST", f"/internal/context/{endpoint}", json_body=body, headers={"X-Context-Token": token}
    )


def test_nginx_spreads_public_requests_over_both_instances(cluster):
    api = Api(cluster.nginx, cluster.creds["staffToken"])
    for _ in range(12):
        assert api.request("GET", "/api/hermes-error-patterns?pageSize=1").status_code == 200
    answered = [len(server.answered_by("/api/hermes-error-patterns")) for server in (cluster.one, cluster.two)]
    assert all(count >= 1 for count in answered), answered


def test_a_visit_registered_through_nginx_is_queried_on_each_instance_directly(cluster):
    live = run_with_visit(Api(cluster.nginx, cluster.creds["engineToken"]))
    for server in (cluster.one, cluster.two):
        output = envelope(ask(server, "output", live["token"], {"runId": live["runId"], "nodeId": "A"}), 200)
        assert output["data"] == {"answer": 42}
        path = envelope(ask(server, "path", live["token"], {"runId": live["runId"]}), 200)
        assert path["nodeIds"] == ["A", "B"]


def test_a_pattern_changed_through_nginx_changes_the_next_detection_on_both_instances(cluster):
    reply = {"text": "Deploy note: scale-out marker 7f3a recorded for both instances."}
    direct = [Api(server, cluster.creds["staffToken"]) for server in (cluster.one, cluster.two)]
    for api in direct:  # each instance compiles and caches the enabled set now
        assert (
            envelope(api.request("POST", "/api/hermes-error-patterns/detect", json_body=reply), 200)["isError"] is False
        )
    created = Api(cluster.nginx, cluster.creds["staffToken"]).request(
        "POST",
        "/api/hermes-error-patterns",
        json_body={
            "name": "Scale-out marker",
            "pattern": "scale-out marker 7f3a",
            "category": "server_error",
            "scope": "anywhere",
        },
    )
    pattern_id = envelope(created, 201)["id"]
    for api in direct:
        detection = envelope(api.request("POST", "/api/hermes-error-patterns/detect", json_body=reply), 200)
        assert (detection["isError"], detection["matchedPatternId"]) == (True, pattern_id)


def test_a_visits_budget_spent_across_both_instances_answers_exactly_the_limit(cluster):
    live = run_with_visit(Api(cluster.nginx, cluster.creds["engineToken"]))
    body = {"runId": live["runId"], "nodeId": "A"}
    servers = [cluster.one, cluster.two] * 35

    def one(server):
        return ask(server, "output", live["token"], body).status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(one, servers))
    assert statuses.count(200) == BUDGET and statuses.count(429) == len(servers) - BUDGET
    audited = cluster.db.scalar(
        "SELECT COUNT(*) FROM contextquery_contextread r JOIN contextquery_visit v ON v.id = r.visit_id "
        "WHERE v.visit_uuid = %s",
        live["b"],
    )
    assert audited == len(servers)


@pytest.mark.parametrize("path", ["/internal/context/path", "/internal/tools/list", "/metrics"])
def test_nginx_does_not_forward_the_instance_local_routes(cluster, path):
    live = run_with_visit(Api(cluster.nginx, cluster.creds["engineToken"]))
    response = Api(cluster.nginx).request(
        "POST" if path.startswith("/internal/") else "GET",
        path,
        json_body={"runId": live["runId"]} if path.startswith("/internal/") else None,
        headers={"X-Context-Token": live["token"]},
    )
    assert response.status_code == 404
    assert Api(cluster.one).request("GET", "/metrics").status_code == 200


def test_a_body_over_the_limit_gets_the_413_envelope_from_the_app_or_from_nginx(cluster):
    api = Api(cluster.nginx, cluster.creds["staffToken"])
    for size in (5 * 1024 * 1024 + 512 * 1024, 10 * 1024 * 1024):
        data = b'{"text": "' + b"a" * size + b'"}'
        response = api.request("POST", "/api/hermes-error-patterns/detect", data=data, timeout=60)
        assert response.status_code == 413 and response.headers["Content-Type"].startswith("application/json")
        assert "larger than the limit" in response.json()["message"]


def test_the_client_address_behind_nginx_is_the_one_nginx_saw_never_a_header(cluster):
    staff = cluster.db.sql("SELECT username FROM auth_user WHERE is_staff AND NOT is_superuser LIMIT 1")[0][0]
    with requests.Session() as session:
        session.trust_env = False
        session.get(cluster.nginx.url + "/accounts/login/", timeout=10)
        session.post(
            cluster.nginx.url + "/accounts/login/",
            data={"username": staff, "password": "wrong", "csrfmiddlewaretoken": session.cookies["csrftoken"]},
            headers={"X-Real-IP": "203.0.113.9", "X-Forwarded-For": "203.0.113.9"},
            timeout=10,
        )
    addresses = [str(row[0]) for row in cluster.db.sql("SELECT ip_address FROM axes_accessattempt")]
    assert addresses == ["127.0.0.1"]
