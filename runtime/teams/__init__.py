"""The teams Minutes can fly, by name (an explicit list: adding a team is adding a line)."""

from __future__ import annotations

from runtime.teams.base import DeskSettings, FlightConfig, Scenario, Services, Team
from runtime.teams.desk import DESK
from runtime.teams.repo_fix import REPO_FIX
from runtime.teams.solo import SOLO
from runtime.teams.triage import SUPPORT_TRIAGE

TEAMS: dict[str, Team] = {team.name: team for team in (SOLO, REPO_FIX, DESK, SUPPORT_TRIAGE)}

__all__ = ["TEAMS", "DeskSettings", "FlightConfig", "Scenario", "Services", "Team"]
