"""The arrows between the project's packages point one way, and each room holds one idea:

    dashboard -> services <- tasks        (config wires them; desk registers with services)
    services  -> journal_store, desk, teams -> runtime

tasks/ holds Celery tasks only, each a thin call into a service; services never import tasks or
dashboard (they enqueue work by task name); the runtime imports no Django and nothing above it.
The teams' own arrows are held in tests/teams/test_layering.py.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Top-level packages a package may never import (anywhere in it, a function-level import too).
NEVER = {
    "runtime": {
        "django",
        "teams",
        "journal_store",
        "services",
        "tasks",
        "dashboard",
        "desk",
        "config",
    },
    "journal_store": {"services", "tasks", "dashboard", "desk", "teams"},
    "services": {"tasks", "dashboard"},
    "desk": {"tasks", "dashboard"},
}
# What a module in tasks/ may import: Celery, a little of the standard library, the services.
TASKS_MAY_IMPORT = {"__future__", "celery", "logging", "typing", "services"}


def sources(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts)


def imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def top(name: str) -> str:
    return name.split(".")[0]


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("package", sorted(NEVER))
def test_a_package_imports_nothing_above_it(package):
    offending = {
        relative(p): sorted(n for n in imported(parsed(p)) if top(n) in NEVER[package])
        for p in sources(package)
    }
    assert {p: names for p, names in offending.items() if names} == {}


def task_decorator(node: ast.FunctionDef) -> ast.Call | None:
    for decorator in node.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Name)
            and decorator.func.id == "shared_task"
        ):
            return decorator
    return None


def what_is_not_a_task(path: Path) -> list[str]:
    """What a module of tasks/ holds besides Celery tasks that take ids and call a service."""
    tree = parsed(path)
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    wrong = [f"imports {n}" for n in sorted(imported(tree)) if top(n) not in TASKS_MAY_IMPORT]
    services: set[str] = set()  # the names its `from services... import` statements bind
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and top(node.module or "") == "services":
            services |= {alias.asname or alias.name for alias in node.names}
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["log"]:
            continue  # log = logging.getLogger(__name__)
        if not isinstance(node, ast.FunctionDef) or (decorator := task_decorator(node)) is None:
            wrong.append(f"line {node.lineno}: {ast.unparse(node).splitlines()[0]}")
            continue
        names = {k.arg: k.value for k in decorator.keywords}
        given = names["name"].value if isinstance(names.get("name"), ast.Constant) else None
        if given != f"{module}.{node.name}":
            wrong.append(f"{node.name}: name={given!r}, not {module}.{node.name!r}")
        bound = isinstance(names.get("bind"), ast.Constant) and names["bind"].value is True
        params = node.args.args[1:] if bound else node.args.args
        # Ids, and a stream's version read with them (a step's message: where the run's lease
        # stood when it was sent); never an object.
        taken = {ast.unparse(p.annotation) for p in params if p.annotation}
        if taken - {"str", "int | None"}:
            wrong.append(f"{node.name}: takes something other than ids and versions")
        if any(p.annotation is None for p in params):
            wrong.append(f"{node.name}: a parameter without its type")
        if not {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & services:
            wrong.append(f"{node.name}: calls no service")
    return wrong


def test_tasks_holds_celery_tasks_only_each_taking_ids_and_calling_a_service():
    init = parsed(ROOT / "tasks" / "__init__.py")
    assert len(init.body) == 1 and isinstance(init.body[0], ast.Expr)  # a docstring only
    modules = [p for p in sources("tasks") if p.name != "__init__.py"]
    assert modules
    found = {relative(p): what_is_not_a_task(p) for p in modules}
    assert {p: wrong for p, wrong in found.items() if wrong} == {}


def test_the_review_service_knows_no_commit_target_of_any_app():
    path = ROOT / "services" / "review.py"
    assert sorted(n for n in imported(parsed(path)) if top(n) in {"desk", "teams"}) == []
    assert '"orders"' not in path.read_text()


def test_the_services_load_without_the_tasks_module(tmp_path):
    """A page, the API or a command sends work by name: loading every service, Django and
    Celery's app imports no task module."""
    names = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in sources("services")
        if p.name != "__init__.py"
    )
    code = (
        "import sys, django\n"
        "django.setup()\n"
        f"for name in {names!r}:\n"
        "    __import__(name)\n"
        "print(sorted(m for m in sys.modules if m == 'tasks' or m.startswith('tasks.')))\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "MINUTES_DEBUG": "1",
        "MINUTES_HOME": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# Where a package may touch the process environment: the settings, the runtime's command line
# (a host without Django), and code that hands an environment on to a child process (git's, in
# runtime/git_run.py; the workers that `manage.py demo` starts), reading no setting from it.
ENVIRONMENT_READERS = {
    "config/settings.py",
    "config/env.py",
    "runtime/cli.py",
    "runtime/cli_stop.py",  # the command line's: who pressed Ctrl-C ($USER)
    "runtime/git_run.py",
    "dashboard/management/commands/demo.py",
    "journal_store/backup.py",  # hands it on to pg_dump, the database's password added
}


def test_settings_are_read_from_the_environment_in_settings_and_the_command_line_only():
    readers = set()
    for package in ("runtime", "teams", "journal_store", "services", "tasks", "dashboard", "desk"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                    readers.add(str(path.relative_to(ROOT)))
    assert readers - ENVIRONMENT_READERS == set()
