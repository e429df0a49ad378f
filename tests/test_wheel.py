"""``pip install .`` on an agent host (SPEC §1, §5): the wheel, with no extra,
installs the agent side's needs only, and the tools import without Django."""

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

PROBE = """
import json, sys
from contextquery.client import business_tools, context_tools, engine, wire, hermes_runner, mcp_config
names = sorted(context_tools.TOOL_SCHEMAS)
server = sorted({m.split(".")[0] for m in sys.modules} & {"django", "rest_framework", "project", "patterns"})
print(json.dumps({"tools": names, "server_modules": server, "toolset": wire.TOOLSET}))
"""


@pytest.fixture(scope="module")
def agent_host(tmp_path_factory):
    """A fresh virtual environment with only the built wheel installed (no extra)."""
    work = tmp_path_factory.mktemp("wheel")
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
    source = work / "source"
    skip = (".venv", ".git", "var", "build", "test-output", "*.egg-info", "__pycache__")
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*skip))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(work / "dist"), str(source)],
        check=True,
        cwd=work,
    )
    wheel = next((work / "dist").glob("hermes_ops-*.whl"))
    venv.create(work / "venv", with_pip=True)
    python = work / "venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        check=True,
        cwd=work,
    )
    return python, work


def test_the_wheel_installs_the_agent_side_without_django(agent_host):
    python, work = agent_host
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json"], check=True, cwd=work, capture_output=True, text=True
    )
    installed = {row["name"].lower() for row in json.loads(listed.stdout)}
    assert "requests" in installed and "hermes-ops" in installed
    assert not installed & {"django", "djangorestframework", "google-re2", "psycopg", "mcp", "hermes-agent"}


def test_the_context_tools_import_without_django(agent_host):
    python, work = agent_host
    done = subprocess.run([str(python), "-c", PROBE], cwd=work, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    assert probe["tools"] == ["get_node_meta", "get_node_output", "get_predecessor_paths"]
    assert probe["server_modules"] == [] and probe["toolset"] == "workflow_context"


def test_the_old_module_path_still_imports_the_tools(agent_host):
    python, work = agent_host
    done = subprocess.run(
        [
            str(python),
            "-c",
            "from contextquery.agent_tools import get_node_output, mask_token;print(mask_token('abcdefgh'))",
        ],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "abcd***"
