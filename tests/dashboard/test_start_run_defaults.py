"""A run started without a scenario gets its own team's first one, whichever the team."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from journal_store.journal import DjangoJournal
from teams import TEAMS

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(token):
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


@pytest.mark.parametrize("team", sorted(TEAMS))
def test_the_start_run_command_gives_each_team_its_own_first_scenario(owner, team):
    out = io.StringIO()
    call_command("start_run", "--team", team, stdout=out)
    run_id = out.getvalue().strip()
    [started, *_] = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    assert (started.team, started.scenario) == (team, next(iter(TEAMS[team].scenarios)))


def test_the_api_gives_support_triage_its_own_first_scenario(api):
    response = api.post("/api/runs", {"team": "support-triage"}, content_type="application/json")
    assert response.status_code == 201, response.content
    run_id = response.json()["run_id"]
    [started, *_] = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    assert started.scenario == "broken-policy"


def test_the_start_run_command_lists_every_teams_scenarios_and_starts_nothing(owner):
    """A newcomer asks what there is to start before starting it: `--list` says what each
    scenario shows, under its team with its agents, the default marked."""
    out = io.StringIO()
    call_command("start_run", "--list", stdout=out)
    said = out.getvalue()
    for name, team in TEAMS.items():
        assert f"{name} ({', '.join(team.agents)})\n" in said
        for scenario in team.scenarios.values():
            assert f"  {scenario.name}" in said and scenario.description in said
        assert f"  {team.default_scenario} (default): " in said
    assert DjangoJournal().last_position() == 0
