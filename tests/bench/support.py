"""Shared helpers of the HTTP benchmarks: a throw-away database, a gunicorn
server on loopback, timed requests with percentiles, and plain-text tables.

One database and one server per process (created on first use, removed at
exit), so several bench modules in one ``make bench`` share them:

* :func:`bench_database` switches the ORM's default connection to a fresh
  migrated database, as Django's test runner does: a temporary SQLite file,
  or ``<name>_bench`` on the PostgreSQL server of ``DATABASE_URL``.
* :func:`bench_server` starts ``gunicorn project.wsgi`` with 2 sync workers on
  a free loopback port against that database, with the benchmark floors on
  and the per-visit query budget and token TTL raised (for this server only).
* :func:`probe` writes the context benchmarks' probe run once and issues its token.
"""

from __future__ import annotations

import atexit
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 2
#: Environment of the bench server only (the floors, a budget and TTL that a long run cannot spend).
SERVER_ENV = {
    "DJANGO_SETTINGS_MODULE": "tests.bench.settings",
    "HERMES_CONTEXT_QUERY_MAX_QUERIES_PER_VISIT": "100000000",
    "HERMES_CONTEXT_QUERY_TOKEN_TTL_SECONDS": "3600",
    "LOG_LEVEL": "WARNING",
}

_state: dict = {}


# --------------------------------------------------------------------------- database


def bench_database() -> dict[str, str]:
    """Switch the default connection to a fresh migrated bench database (once per
    process; dropped at exit). Returns the environment that points a server at it."""
    if "db_env" in _state:
        return _state["db_env"]
    from django.db import connection

    settings_dict = connection.settings_dict
    if connection.vendor == "sqlite":
        folder = tempfile.mkdtemp(prefix="hermes-bench-")
        settings_dict["TEST"] = {**settings_dict.get("TEST", {}), "NAME": os.path.join(folder, "bench.sqlite3")}
    else:
        settings_dict["TEST"] = {**settings_dict.get("TEST", {}), "NAME": f"{settings_dict['NAME']}_bench"}
    old_name = settings_dict["NAME"]
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    atexit.register(_database_drop, old_name)
    if connection.vendor == "sqlite":
        env = {"SQLITE_PATH": name, "DATABASE_URL": ""}
    else:
        url = urlsplit(os.environ["DATABASE_URL"])
        env = {"DATABASE_URL": urlunsplit(url._replace(path="/" + name))}
    _state["db_env"] = env
    return env


def _database_drop(old_name: str) -> None:
    from django.db import connection

    server_stop()
    connection.creation.destroy_test_db(old_name, verbosity=0)


def database_label() -> str:
    from django.db import connection

    return "PostgreSQL" if connection.vendor == "postgresql" else "SQLite (file, WAL)"


# --------------------------------------------------------------------------- server


def free_port() -> int:
    """A loopback port the OS says is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bench_server(instance: int = 0) -> int:
    """Start gunicorn instance number ``instance`` (2 sync workers) against
    :func:`bench_database` once per process and return its port; every
    instance shares the database, as instances behind a load balancer do.
    Stopped at exit."""
    ports = _state.setdefault("ports", {})
    if instance in ports:
        return ports[instance]
    env = {**os.environ, **bench_database(), **SERVER_ENV}
    port = free_port()
    gunicorn = Path(sys.executable).with_name("gunicorn")
    process = subprocess.Popen(
        [
            str(gunicorn),
            "project.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(WORKERS),
            "--log-level",
            "warning",
            "--no-control-socket",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _state.setdefault("processes", []).append(process)
    deadline = time.monotonic() + 60
    while True:
        try:
            status, _ = Client(port).post("/internal/context/_plain", b"{}")
            if status == 200:
                break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"gunicorn did not start: {process.stderr.read().decode(errors='replace')[-2000:]}")
        time.sleep(0.2)
    ports[instance] = port
    return port


def server_stop() -> None:
    _state.pop("ports", None)
    for process in _state.pop("processes", []):
        if process.poll() is not None:
            continue
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


# --------------------------------------------------------------------------- probe run


@dataclass(frozen=True)
class ProbeAccess:
    """The probe run (``gen_load_data.Probe``) and the live token of its RUNNING visit."""

    probe: object
    token: str


def probe() -> ProbeAccess:
    """Write the probe run into the bench database once and issue its token."""
    if "probe" in _state:
        return _state["probe"]
    bench_database()
    from contextquery import tokens
    from contextquery.models import Visit
    from tests.bench.benchapp.management.commands.gen_load_data import load_data_write

    found = load_data_write(runs=0, probe=True)
    issued = tokens.token_issue(visit=Visit.objects.get(visit_uuid=found.visit_uuid))
    _state["probe"] = ProbeAccess(probe=found, token=issued.token)
    return _state["probe"]


def context_requests(access: ProbeAccess) -> dict[str, tuple[str, bytes]]:
    """The benchmarked internal requests on the probe run: name → (path, JSON body)."""
    p = access.probe
    bodies = {
        "path": ("/internal/context/path", {"runId": p.run_id, "visitUuid": p.visit_uuid}),
        "output": ("/internal/context/output", {"runId": p.run_id, "nodeId": p.output_node}),
        "output field": ("/internal/context/output", {"runId": p.run_id, "nodeId": p.output_node, "field": p.field}),
        "meta ALL": ("/internal/context/meta", {"runId": p.run_id, "visitUuid": p.meta_visit_uuid, "kind": "ALL"}),
        "auth floor": ("/internal/context/_floor", {"runId": p.run_id}),
        "plain floor": ("/internal/context/_plain", {}),
    }
    return {name: (path, json.dumps(body).encode()) for name, (path, body) in bodies.items()}


# --------------------------------------------------------------------------- timing


class Client:
    """One HTTP/1.1 connection (reconnects when the server closes it, as gunicorn's sync workers do)."""

    def __init__(self, port: int, headers: dict[str, str] | None = None):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def post(self, path: str, body: bytes | None) -> tuple[int, bytes]:
        """POST ``body`` to ``path`` (a GET when ``body`` is None)."""
        if body is None:
            self.connection.request("GET", path, headers=self.headers)
        else:
            self.connection.request("POST", path, body, self.headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.will_close:
            self.connection.close()
        return response.status, data

    def timed(self, path: str, body: bytes) -> float:
        """Milliseconds for one request; raises unless the answer is 2xx."""
        started = time.perf_counter()
        status, data = self.post(path, body)
        elapsed = (time.perf_counter() - started) * 1000
        if not 200 <= status < 300:
            raise RuntimeError(f"POST {path} answered {status}: {data[:300]!r}")
        return elapsed


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0–100) of ``samples``."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), int(round(q / 100 * len(ordered) + 0.5))))
    return ordered[rank - 1]


def latencies(
    port: int, headers: dict, requests: dict[str, tuple[str, bytes]], *, rounds: int, per_round: int, warmup: int = 20
) -> dict[str, list[float]]:
    """Concurrency 1: milliseconds per request, by name. The requests are
    interleaved in rounds, so drift on a shared machine hits every one alike."""
    client = Client(port, headers)
    for path, body in requests.values():
        for _ in range(warmup):
            client.timed(path, body)
    samples: dict[str, list[float]] = {name: [] for name in requests}
    for _ in range(rounds):
        for name, (path, body) in requests.items():
            samples[name] += [client.timed(path, body) for _ in range(per_round)]
    return samples


def throughput(
    port: int | list[int], headers: dict, path: str, body: bytes | None, *, threads: int = 8, seconds: float = 2.0
) -> float:
    """Requests per second with ``threads`` clients sending back to back for
    ``seconds``; with several ports the clients are spread over them in turn."""
    ports = port if isinstance(port, list) else [port]
    counts = [0] * threads
    errors: list[BaseException] = []
    start = threading.Barrier(threads + 1)
    stop_at: list[float] = []

    def worker(index):
        client = Client(ports[index % len(ports)], headers)
        start.wait()
        try:
            while time.perf_counter() < stop_at[0]:
                client.timed(path, body)
                counts[index] += 1
        except BaseException as exc:  # reported after the join
            errors.append(exc)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    began = time.perf_counter()
    stop_at.append(began + seconds)
    start.wait()
    for thread in pool:
        thread.join()
    if errors:
        raise errors[0]
    return sum(counts) / (time.perf_counter() - began)


# --------------------------------------------------------------------------- tables


def table(headers: list[str], rows: list[list], *, note: str = "") -> str:
    """A plain-text table: the first column left-aligned, the rest right-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [
            value.rjust(width) for value, width in zip(row[1:], widths[1:], strict=False)
        ]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    if note:
        lines.append(note)
    return "\n".join(lines)


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    return str(value)
