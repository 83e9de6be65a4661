"""Every scenario of every team plans into settings its team's model accepts: its default is
its own first scenario, and a template it names is one that ships."""

from __future__ import annotations

import pytest

from runtime import flight
from teams import TEAMS, default_scenario
from teams.repos import templates

SCENARIOS = [(team.name, name) for team in TEAMS.values() for name in team.scenarios]


@pytest.mark.parametrize(("team", "scenario"), SCENARIOS)
def test_every_scenario_plans_with_the_teams_own_settings(team, scenario):
    config = flight.plan(team, scenario, "r-plan")
    assert config.team == team and isinstance(config.settings, TEAMS[team].settings)
    named = config.settings.model_dump().get("template")
    assert named is None or named in templates()


def test_the_desk_and_triage_name_no_template_and_the_coding_teams_a_shipped_one():
    for team in ("support-desk", "support-triage"):
        for scenario in TEAMS[team].scenarios.values():
            assert "template" not in scenario.settings
            assert "template" not in flight.plan(team, scenario.name, "r-p").settings.model_dump()
    for team in ("solo", "repo-fix"):
        for scenario in TEAMS[team].scenarios.values():
            assert scenario.settings["template"] in templates()


@pytest.mark.parametrize("team", sorted(TEAMS))
def test_a_teams_default_scenario_is_its_own_first(team):
    first = next(iter(TEAMS[team].scenarios))
    assert default_scenario(team) == first
    assert flight.plan(team, None, "r-default").scenario == first


def test_no_default_names_another_teams_scenario():
    defaults = {team: default_scenario(team) for team in TEAMS}
    assert defaults == {
        "solo": "solo-fix",
        "repo-fix": "first-flight",
        "support-desk": "double-refund",
        "support-triage": "broken-policy",
    }
