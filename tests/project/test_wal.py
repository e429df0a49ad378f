"""SQLite's WAL checkpoints run in a thread of each process, not inside a commit (issue 14)."""

import os
import sqlite3
import time
from types import SimpleNamespace

import pytest

from project import wal


@pytest.fixture
def wal_file(tmp_path, monkeypatch):
    """A WAL-mode SQLite file whose commits never checkpoint by themselves, with rows in its log."""
    monkeypatch.setattr(wal, "CHECKPOINT_INTERVAL_SECONDS", 0.05)
    path = str(tmp_path / "wal.sqlite3")
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    connection.executemany("INSERT INTO t (body) VALUES (?)", [("x" * 500,) for _ in range(400)])
    yield path, connection
    connection.close()


def _wait_for(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds  # a guard against a hang, not a timing target
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_checkpoint_copies_the_whole_log_into_the_database_file(wal_file):
    path, _ = wal_file
    before = os.path.getsize(path)
    busy, frames, copied = wal.wal_checkpoint(path)
    assert (busy, copied) == (0, frames) and frames > 0
    assert os.path.getsize(path) > before


@pytest.mark.parametrize("folder", ["runs?old", "ops#1", "100% sure", "a%3Fb"])
def test_a_checkpoint_copies_the_log_of_a_file_whose_path_has_uri_characters_and_creates_no_other(tmp_path, folder):
    home = tmp_path / folder
    home.mkdir()
    path = str(home / "wal.sqlite3")
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    connection.execute("INSERT INTO t DEFAULT VALUES")
    try:
        busy, frames, copied = wal.wal_checkpoint(path)
    finally:
        connection.close()
    assert (busy, copied) == (0, frames) and frames > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder]


def test_the_checkpointer_copies_the_log_while_writers_go_on(wal_file):
    path, connection = wal_file
    before = os.path.getsize(path)
    wal.checkpointer_ensure(path)
    connection.execute("INSERT INTO t (body) VALUES ('after')")
    assert _wait_for(lambda: os.path.getsize(path) > before)
    assert connection.execute("SELECT count(*) FROM t").fetchone()[0] == 401


def test_one_checkpointer_runs_per_process_and_file(wal_file):
    path, _ = wal_file
    first = wal.checkpointer_ensure(path)
    assert wal.checkpointer_ensure(path) is first and first.is_alive() and first.daemon


def test_an_in_memory_database_gets_no_checkpointer():
    assert wal.checkpointer_ensure(":memory:") is None


def test_the_checkpointer_ends_once_its_file_is_deleted(wal_file):
    path, connection = wal_file
    thread = wal.checkpointer_ensure(path)
    connection.close()
    for name in (path, path + "-wal", path + "-shm"):
        if os.path.exists(name):
            os.remove(name)
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_a_new_sqlite_connection_starts_the_checkpointer_of_its_file(wal_file):
    path, _ = wal_file
    wal.on_connection_created(None, connection=SimpleNamespace(vendor="sqlite", settings_dict={"NAME": path}))
    assert wal._started[(os.getpid(), os.path.abspath(path))].is_alive()


def test_a_postgresql_connection_starts_no_checkpointer(tmp_path):
    started = dict(wal._started)
    wal.on_connection_created(None, connection=SimpleNamespace(vendor="postgresql", settings_dict={"NAME": "test"}))
    assert wal._started == started
