"""Fixtures of the hardening tests: throw-away databases and real gunicorn servers.

* ``database(backend=None)`` makes a fresh migrated database — a SQLite file,
  or a PostgreSQL database of its own on the machine's server — copied from a
  template migrated once per session. ``backend`` defaults to the suite's own
  (``DATABASE_URL`` set → PostgreSQL). ``db.sql(query, *params)`` reads what a
  server stored; ``db.seed()`` makes users with API tokens.
* ``gunicorn(db, workers=1, env={})`` starts ``gunicorn project.wsgi`` on a
  port the OS picks on 127.0.0.1 against ``db`` and stops it at teardown;
  ``server.kill9()`` ends master and workers with SIGKILL, ``server.restart()``
  starts it again (on a new port).
* ``TcpProxy`` forwards a loopback port to PostgreSQL; ``cut()`` closes it like
  a stopped server (connections refused, open ones reset), ``restore()`` opens
  it again on the same port. The machine's PostgreSQL itself is never stopped.

The test process never opens these databases through Django: servers and
helper processes do, as in production.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import psycopg
import pytest
import requests
from django.conf import settings

from tests.support import envelope

ROOT = Path(settings.BASE_DIR)
SECRET_KEY = "hardening-secret-key-" + "k" * 40
GUNICORN = str(Path(sys.executable).with_name("gunicorn"))
_CONFIG_PREFIXES = ("DATABASE_URL", "SQLITE_", "REDIS_URL", "HERMES_CONTEXT_QUERY_", "SECRET_KEY", "HERMES_OPS_")


def suite_backend() -> str:
    """``"postgresql"`` when the suite runs on PostgreSQL, else ``"sqlite"``."""
    return "postgresql" if settings.DATABASES["default"]["ENGINE"].endswith("postgresql") else "sqlite"


def pg_server_url(dbname: str = "postgres") -> str:
    """A URL of the PostgreSQL server the suite uses (``DATABASE_URL``), or the
    machine's at 127.0.0.1:5432, naming database ``dbname``."""
    raw = os.environ.get("DATABASE_URL", "")
    if not raw.startswith(("postgres://", "postgresql://")):
        raw = "postgres://postgres@127.0.0.1:5432/postgres"
    return urlunparse(urlparse(raw)._replace(path="/" + dbname))


def process_env(var_dir: Path, **extra: str) -> dict:
    """The environment of a server or helper process: this one's, minus any
    configuration the suite was started with, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}
    env.update(
        DJANGO_SETTINGS_MODULE="project.settings",
        PYTHONPATH=str(ROOT),
        SECRET_KEY=SECRET_KEY,
        HERMES_OPS_VAR_DIR=str(var_dir),
        **extra,
    )
    return env


def _pg_admin(sql: str) -> None:
    with psycopg.connect(pg_server_url(), autocommit=True) as conn:
        conn.execute(sql)


class Database:
    """A migrated database for servers under test (see the module docstring)."""

    def __init__(self, backend: str, name: str, var_dir: Path):
        self.backend, self.name, self.var_dir = backend, name, var_dir
        if backend == "postgresql":
            self.url = pg_server_url(name)
            self.env = {"DATABASE_URL": self.url}
        else:
            self.url = None
            self.env = {"SQLITE_PATH": name}

    def sql(self, query: str, *params) -> list[tuple]:
        """Rows of ``query`` (``%s`` placeholders) read from this database."""
        if self.backend == "postgresql":
            with psycopg.connect(self.url, autocommit=True) as conn:
                return conn.execute(query, params).fetchall()
        with sqlite3.connect(self.name, timeout=30) as conn:
            return conn.execute(query.replace("%s", "?"), params).fetchall()

    def scalar(self, query: str, *params):
        """The first value of the first row of ``query``."""
        return self.sql(query, *params)[0][0]

    def python(self, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        """Run ``python *args`` in the repository against this database; fails the test on a non-zero exit."""
        done = subprocess.run(
            [sys.executable, *args],
            cwd=ROOT,
            env=process_env(self.var_dir, **{**self.env, **(env or {})}),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
        return done

    def manage(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        """``manage.py *args`` against this database."""
        return self.python("manage.py", *args, env=env)

    def seed(self) -> dict:
        """Users with API tokens: ``{superToken, staffToken, userToken, engineToken}``."""
        return json.loads(self.python("-m", "tests.hardening.seed").stdout.strip().splitlines()[-1])

    def drop(self) -> None:
        if self.backend == "postgresql":
            _pg_admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        else:
            for suffix in ("", "-wal", "-shm"):
                Path(self.name + suffix).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def _database_templates(tmp_path_factory):
    """Templates migrated once per session, per backend, on first use."""
    made: dict[str, Database] = {}
    var_dir = tmp_path_factory.mktemp("hardening-var")

    def template(backend: str) -> Database:
        if backend not in made:
            if backend == "postgresql":
                name = f"hard_tpl_{os.getpid()}_{uuid.uuid4().hex[:6]}"
                _pg_admin(f'CREATE DATABASE "{name}"')
            else:
                name = str(tmp_path_factory.mktemp("hardening-db") / "template.sqlite3")
            db = Database(backend, name, var_dir)
            made[backend] = db
            db.manage("migrate", "--no-input", "-v0")
            if backend == "sqlite":  # fold the WAL into the file, so a plain copy is complete
                with sqlite3.connect(name) as conn:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return made[backend]

    yield template
    for db in made.values():
        db.drop()


def database_copy(template: Database, folder: Path) -> Database:
    """A fresh database copied from ``template`` (same backend)."""
    if template.backend == "postgresql":
        name = f"hard_{os.getpid()}_{uuid.uuid4().hex[:10]}"
        _pg_admin(f'CREATE DATABASE "{name}" TEMPLATE "{template.name}"')
    else:
        name = str(folder / f"db-{uuid.uuid4().hex[:8]}.sqlite3")
        shutil.copyfile(template.name, name)
    return Database(template.backend, name, folder)


@pytest.fixture
def database(_database_templates, tmp_path):
    """``database(backend=None) -> Database``: a fresh copy of the migrated template."""
    made: list[Database] = []

    def make(backend: str | None = None) -> Database:
        db = database_copy(_database_templates(backend or suite_backend()), tmp_path)
        made.append(db)
        return db

    yield make
    for db in made:
        db.drop()


class Server:
    """A gunicorn serving ``project.wsgi`` on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self, database: Database, *, workers: int, env: dict, log_dir: Path):
        self.database, self.workers, self.extra_env, self.log_dir = database, workers, env, log_dir
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.starts = 0

    def start(self, *, timeout: float = 60) -> Server:
        self.starts += 1
        self.log = self.log_dir / f"gunicorn-{id(self)}-{self.starts}.log"
        env = process_env(self.database.var_dir, **{**self.database.env, **self.extra_env})
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    GUNICORN,
                    "project.wsgi",
                    "--bind",
                    "127.0.0.1:0",
                    "--workers",
                    str(self.workers),
                    "--threads",
                    "4",
                    "--no-control-socket",
                    "--timeout",
                    "60",
                    "--graceful-timeout",
                    "3",
                    "--access-logfile",
                    "-",
                    "--access-logformat",
                    "ACCESS %(p)s %(m)s %(U)s %(s)s",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not self.url:
            found = re.search(r"Listening at: (http://127\.0\.0\.1:\d+)", self.log.read_text(errors="replace"))
            if found:
                self.url = found.group(1)
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"gunicorn did not start:\n{self.log.read_text(errors='replace')[-4000:]}")
            else:
                time.sleep(0.05)
        while True:
            try:
                if requests.get(self.url + "/healthz", timeout=10).status_code in (200, 503):
                    return self
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"gunicorn did not answer:\n{self.log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.1)

    def worker_pids(self) -> set[int]:
        """Pids of the workers the log says were booted."""
        return {int(p) for p in re.findall(r"Booting worker with pid: (\d+)", self.log.read_text(errors="replace"))}

    def answered_by(self, path: str) -> dict[int, int]:
        """``{worker pid: requests}`` of the access log lines for ``path``."""
        counts: dict[int, int] = {}
        for pid, url in re.findall(r"ACCESS <(\d+)> \S+ (\S+) \d+", self.log.read_text(errors="replace")):
            if url.rstrip("/") == path.rstrip("/"):
                counts[int(pid)] = counts.get(int(pid), 0) + 1
        return counts

    def kill9(self) -> None:
        """SIGKILL to the master and every worker at once (a crash, no clean-up)."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.url = ""

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.url = ""

    def restart(self) -> Server:
        self.url = ""
        return self.start()


@pytest.fixture
def gunicorn(tmp_path):
    """``gunicorn(db, workers=1, env=None) -> Server`` (started; stopped at teardown)."""
    servers: list[Server] = []

    def start(database: Database, *, workers: int = 1, env: dict | None = None) -> Server:
        server = Server(database, workers=workers, env=env or {}, log_dir=tmp_path)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def shared_server(_database_templates, tmp_path_factory):
    """``(server, db, creds)``: one seeded database on the suite's backend and one
    gunicorn worker, shared by the tests of a module that change nothing another reads."""
    folder = tmp_path_factory.mktemp("hardening-shared")
    db = database_copy(_database_templates(suite_backend()), folder)
    creds = db.seed()
    server = Server(db, workers=1, env={}, log_dir=folder).start()
    yield server, db, creds
    server.stop()
    db.drop()


class TcpProxy:
    """Forwards 127.0.0.1:<port> to ``target``; ``cut()`` and ``restore()`` an outage."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Refuse new connections and reset the open ones, as a stopped server does."""
        # shutdown() first: close() alone does not wake a thread blocked in accept() or recv().
        listener, self._listener = self._listener, None
        with self._lock:
            sockets, self._open = [s for s in (listener,) if s] + list(self._open), set()
        for sock in sockets:
            for step in (lambda s=sock: s.shutdown(socket.SHUT_RDWR), sock.close):
                try:
                    step()
                except OSError:
                    pass

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.cut()


@pytest.fixture
def pg_proxy():
    """A ``TcpProxy`` in front of the PostgreSQL server the suite knows."""
    parts = urlparse(pg_server_url())
    proxy = TcpProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    yield proxy
    proxy.close()


class Api:
    """A tiny HTTP client of a running server: a fresh connection per request
    (so different workers answer), never the environment's proxies."""

    def __init__(self, server: Server, token: str | None = None):
        self.server, self.token = server, token

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body=None,
        data: bytes | None = None,
        headers: dict | None = None,
        timeout: float = 30,
    ) -> requests.Response:
        all_headers = {"Connection": "close", **(headers or {})}
        if self.token:
            all_headers.setdefault("Authorization", f"Token {self.token}")
        if json_body is not None:
            data = json.dumps(json_body).encode()
        if data is not None:
            all_headers.setdefault("Content-Type", "application/json")
        with requests.Session() as session:
            session.trust_env = False
            return session.request(
                method, self.server.url + path, data=data, headers=all_headers, timeout=timeout, allow_redirects=False
            )

    def get(self, path: str, **kw) -> requests.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, body=None, **kw) -> requests.Response:
        return self.request("POST", path, json_body=body if body is not None else {}, **kw)


def login(server: Server, username: str) -> requests.Session:
    """A browser-like session logged in through the login page as a seeded user."""
    from tests.hardening.seed import PASSWORD

    session = requests.Session()
    session.trust_env = False
    page = session.get(server.url + "/accounts/login/", timeout=30)
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    done = session.post(
        server.url + "/accounts/login/",
        allow_redirects=False,
        timeout=30,
        data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": csrf},
        headers={"Referer": server.url + "/accounts/login/"},
    )
    assert done.status_code == 302, done.text[:300]
    return session


GRAPH = {
    "nodes": [{"id": n, "type": "agent", "name": f"Node {n}"} for n in "ABCG"],
    "edges": [{"source": s, "target": t} for s, t in ("AB", "BC", "CG")],
}


def run_with_visit(engine: Api, *, run_id: str | None = None, mode: str = "AGENTIC") -> dict:
    """Create a run over ``GRAPH`` and register a finished A and a RUNNING B;
    returns ``{runId, a, b, token}`` (``token`` is B's context token)."""
    body = {"graph": GRAPH, "mode": mode, "workflowId": "wf-hard", "workflowName": "Hardening"}
    if run_id:
        body["runId"] = run_id
    run = envelope(engine.post("/api/runs", body), 201)
    rid = run["runId"]
    a = envelope(engine.post(f"/api/runs/{rid}/visits", {"nodeId": "A"}), 201)
    done = engine.post(
        f"/api/runs/{rid}/visits/{a['visitUuid']}/complete",
        {"status": "SUCCESS", "output": {"status": 200, "message": "ok", "data": {"answer": 42}}},
    )
    envelope(done, 200)
    b = envelope(engine.post(f"/api/runs/{rid}/visits", {"nodeId": "B", "fromVisitUuids": [a["visitUuid"]]}), 201)
    return {"runId": rid, "a": a["visitUuid"], "b": b["visitUuid"], "token": b["contextQuery"]["token"]}
