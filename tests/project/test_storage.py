"""The embedded SQLite database is private to its owner (SPEC §1, issue 12): it
holds session keys and token hashes."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from project.settings import sqlite_private

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, django
django.setup()
from django.core.management import call_command
from django.db import connection
call_command("migrate", verbosity=0)
with connection.cursor() as cursor:  # a write, so the -wal and -shm files exist while the connection is open
    cursor.execute("CREATE TABLE IF NOT EXISTS probe (x int)")
    cursor.execute("INSERT INTO probe VALUES (1)")
name = connection.settings_dict["NAME"]
print(json.dumps({suffix: oct(os.stat(name + suffix).st_mode & 0o777) for suffix in ("", "-wal", "-shm")}))
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
def test_a_new_database_and_its_wal_and_shm_files_are_owner_only(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "SQLITE_PATH")}
    env.update({"HERMES_OPS_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "project.settings"})
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"": "0o600", "-wal": "0o600", "-shm": "0o600"}


def test_an_existing_world_readable_database_is_tightened(tmp_path):
    database = tmp_path / "db.sqlite3"
    database.write_bytes(b"")
    (tmp_path / "db.sqlite3-wal").write_bytes(b"")
    database.chmod(0o644)
    (tmp_path / "db.sqlite3-wal").chmod(0o644)
    sqlite_private(str(database))
    assert mode(database) == 0o600 and mode(tmp_path / "db.sqlite3-wal") == 0o600


def test_a_new_database_file_is_created_owner_only(tmp_path):
    sqlite_private(str(tmp_path / "sub" / "db.sqlite3"))
    assert mode(tmp_path / "sub" / "db.sqlite3") == 0o600
