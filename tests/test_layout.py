"""The layout rules of SPEC §1, checked on the source: imports run one way.

``contextquery`` → ``patterns`` → ``project``; ``contextquery.client``
imports nothing of Django or the server; nothing imports an admin module;
no first-party import hides inside a function (AppConfig.ready excepted,
where Django wants signal wiring); product code never imports tests or the
demo. A violation fails with the file, the line and the import.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ("project", "patterns", "contextquery")
SERVER_ONLY = ("django", "rest_framework", "drf_spectacular", "knox", "django_filters", "project", "patterns")


def _modules(package: str):
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def imports_of(path: Path) -> list[tuple[int, str, str | None]]:
    """``(line, module imported, enclosing function or None)`` for every import in ``path``."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name, function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.lineno, child.module, function))
                found.extend((child.lineno, f"{child.module}.{alias.name}", function) for alias in child.names)
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), None)
    return found


def _top(module: str) -> str:
    return module.split(".")[0]


def violations(rule) -> list[str]:
    """Every import of the product's modules for which ``rule(path, module, function)`` returns a reason."""
    out = []
    for package in APPS:
        for path in _modules(package):
            for line, module, function in imports_of(path):
                reason = rule(path.relative_to(ROOT), module, function)
                if reason:
                    out.append(f"{path.relative_to(ROOT)}:{line} imports {module}: {reason}")
    return sorted(set(out))


def one_way(path: Path, module: str, function) -> str | None:
    own = path.parts[0]
    allowed = {
        "project": {"project"},
        "patterns": {"patterns", "project"},
        "contextquery": {"contextquery", "patterns", "project"},
    }[own]
    if _top(module) in APPS and _top(module) not in allowed:
        return "imports run contextquery → patterns → project only"
    return None


def client_stands_alone(path: Path, module: str, function) -> str | None:
    if path.parts[:2] != ("contextquery", "client"):
        return None
    if _top(module) in SERVER_ONLY or (_top(module) == "contextquery" and not module.startswith("contextquery.client")):
        return "contextquery.client must import nothing of Django or the server"
    return None


def no_admin_imports(path: Path, module: str, function) -> str | None:
    parts = module.split(".")
    if _top(module) in APPS and "admin" in parts[1:]:
        return "nothing imports from an admin module"
    return None


def no_hidden_imports(path: Path, module: str, function) -> str | None:
    if function is None or _top(module) not in APPS:
        return None
    if path.name == "apps.py" and function == "ready":
        return None
    return f"a first-party import inside {function}() (imports belong at the top of the module)"


def no_tests_or_demo(path: Path, module: str, function) -> str | None:
    return "product code never imports tests or the demo" if _top(module) in ("tests", "demo") else None


@pytest.mark.parametrize("rule", [one_way, client_stands_alone, no_admin_imports, no_hidden_imports, no_tests_or_demo])
def test_the_source_keeps_the_layout_rule(rule):
    assert violations(rule) == []


def test_the_checker_sees_an_import_against_the_one_way_rule(tmp_path):
    """The rules above fail on a violation, so their passing means something."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef f():\n    from contextquery.models import Visit\n")
    assert imports_of(bad) == [(1, "os", None), (4, "contextquery.models", "f"), (4, "contextquery.models.Visit", "f")]
    assert one_way(Path("patterns/x.py"), "contextquery.models", None)
    assert client_stands_alone(Path("contextquery/client/x.py"), "django.conf", None)
    assert client_stands_alone(Path("contextquery/client/x.py"), "contextquery.tokens", None)
    assert not client_stands_alone(Path("contextquery/client/x.py"), "contextquery.client.wire", None)
    assert no_admin_imports(Path("contextquery/views.py"), "contextquery.admin.token_state", None)
    assert no_hidden_imports(Path("patterns/views.py"), "patterns.models", "f")
    assert not no_hidden_imports(Path("patterns/apps.py"), "patterns.models", "ready")
