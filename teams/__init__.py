"""The teams Minutes flies, one package each, and their registry.

    solo       one coder, one failing test, a real git workspace
    repo_fix   orchestrator, coder(s), reviewer, tester (and docs) on a real git repository
    desk       the support desk: two agents on one order, compare-and-swap and a ledger
    triage     support triage: specialists in parallel over MCP tool servers
    repos      what the coding teams share: the git templates and the suite check

Each team's package holds its settings model, its harness, the services it needs from a host,
its scenarios and its fixtures (templates, MCP servers, simulated providers). Adding a team is
adding a folder and a line in `TEAMS` below; the runtime finds this registry through the
`minutes.teams` entry point (pyproject.toml) and names no team itself.

Plain Python: may import `runtime`, the standard library and pydantic; never Django, `tasks`,
`journal_store` or `dashboard` (those may import this package). A team never imports another.
"""

from __future__ import annotations

from runtime.team import Team
from teams import desk, repo_fix, solo, triage

TEAMS: dict[str, Team] = {
    team.name: team for team in (solo.TEAM, repo_fix.TEAM, desk.TEAM, triage.TEAM)
}


def default_scenario(team: str) -> str:
    """The scenario a run of `team` gets when none is named: the team's first. Raises KeyError
    for an unknown team."""
    return TEAMS[team].default_scenario


__all__ = ["TEAMS", "default_scenario"]
