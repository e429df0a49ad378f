"""A bad environment value stops start-up with one line naming the variable
(SPEC §1): ``manage.py`` exits 2, gunicorn stops its master (status 4, "App
failed to load") instead of respawning workers. Real processes, no mocks."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = str(Path(sys.executable).with_name("gunicorn"))


def bad_env(tmp_path, **values) -> dict:
    env = {**os.environ, "HERMES_OPS_VAR_DIR": str(tmp_path), **values}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


@pytest.mark.parametrize(
    "variable, value",
    [
        ("MAX_BODY_BYTES", "abc"),
        ("DEBUG", "perhaps"),
        ("REDIS_URL", "http://cache"),
        ("HERMES_TOOL_ALLOWED_HOSTS", "127.0.0.1:9000,https://shop.internal/x"),
        ("HERMES_TOOL_APPROVAL_TTL_SECONDS", "4000"),
        ("HERMES_CONTEXT_QUERY_MAX_TOOL_CALLS_PER_VISIT", "0"),
    ],
)
def test_manage_py_prints_one_configuration_error_line_and_exits_2(tmp_path, variable, value):
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=bad_env(tmp_path, **{variable: value}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("Configuration error: ") and variable in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert done.stdout == ""


def test_manage_py_runs_normally_with_good_values(tmp_path):
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=bad_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_gunicorn_stops_with_the_configuration_error_and_no_settings_traceback(tmp_path):
    done = subprocess.run(
        [GUNICORN, "project.wsgi", "--bind", "127.0.0.1:0", "--workers", "1", "--no-control-socket"],
        cwd=ROOT,
        env=bad_env(tmp_path, MAX_BODY_BYTES="abc"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    # gunicorn's master exits 4 ("App failed to load"), or 1 with its own
    # HaltServer traceback when the worker's exit races its main loop; either
    # way it stops, and our settings error is one line, not a traceback.
    assert done.returncode in (1, 4)
    assert "Configuration error: MAX_BODY_BYTES='abc' is not an integer." in done.stderr
    assert "App failed to load" in done.stderr
    assert "ImproperlyConfigured" not in done.stderr and "project/settings.py" not in done.stderr
