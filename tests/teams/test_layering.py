"""The arrows point one way: teams import the runtime, the runtime names no team, and a team
never imports Django, the store, the workers or another team."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from runtime import plugins
from teams import TEAMS

ROOT = Path(__file__).resolve().parents[2]
TEAM_PACKAGES = {"solo", "repo_fix", "desk", "triage"}


def sources(package: str) -> list[Path]:
    return [p for p in (ROOT / package).rglob("*.py") if "templates" not in p.parts]


def imported(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (a function-level import counts too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def top(name: str) -> str:
    return name.split(".")[0]


def test_the_runtime_imports_no_team_and_no_django():
    above = {"teams", "django", "tasks", "journal_store", "dashboard", "desk", "config"}
    offending = {
        str(p.relative_to(ROOT)): sorted(n for n in imported(p) if top(n) in above)
        for p in sources("runtime")
    }
    assert {p: names for p, names in offending.items() if names} == {}


def test_the_runtime_names_no_team():
    named = {
        str(p.relative_to(ROOT)): [t for t in TEAMS if f'"{t}"' in p.read_text()]
        for p in sources("runtime")
    }
    assert {p: teams for p, teams in named.items() if teams} == {}


@pytest.mark.parametrize("package", sorted(TEAM_PACKAGES))
def test_a_team_imports_the_runtime_and_its_own_package_only(package):
    allowed_teams = {f"teams.{package}", "teams.repos"}
    offending = {}
    for path in sources(f"teams/{package}"):
        bad = sorted(
            n
            for n in imported(path)
            if top(n) in {"django", "tasks", "journal_store", "dashboard", "desk", "config"}
            or (top(n) == "teams" and not any(n.startswith(a) for a in allowed_teams))
        )
        if bad:
            offending[str(path.relative_to(ROOT))] = bad
    assert offending == {}


def test_no_team_reads_the_environment():
    """Settings come in through the run's config and the host's services; only
    config/settings.py reads the environment."""
    reading = [
        str(p.relative_to(ROOT))
        for p in sources("teams")
        if "os.environ" in p.read_text() or "getenv" in p.read_text()
    ]
    assert reading == []


def test_the_runtime_finds_every_team_of_the_registry_by_entry_point():
    assert plugins.teams() == TEAMS
    assert all(TEAMS[name].settings.model_fields["team"].default == name for name in TEAMS)
