"""A run started without a scenario gets its own team's first one, whichever the team."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from journal_store.journal import DjangoJournal
from teams import TEAMS

pytestmark = pytest.mark.django_db


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


@pytest.fixture
def eager(settings, tmp_path):
    """Steps run where they are sent, so a run is driven to its end inside the command."""
    from config.celery import app

    settings.WORKSPACES = tmp_path / "workspaces"
    was = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = was


@pytest.mark.django_db(transaction=True)
def test_start_run_wait_says_how_the_run_ended_as_fly_does_and_as_json_for_scripts(eager):
    """`--wait` printed the bill's JSON, some 150 lines, after the status."""
    out = io.StringIO()
    call_command(
        "start_run", "--team", "repo-fix", "--scenario", "premature-done", "--wait", stdout=out
    )
    run_id, said, *rest = out.getvalue().splitlines()
    assert run_id.startswith("r-")
    assert said.startswith("status: ") and len(said) > len("status: x (")
    text = "\n".join(rest)
    assert text.startswith("bill:\n  agent") and "  total " in text
    assert "findings:" in text and "{" not in text
    assert len(rest) < 30

    out = io.StringIO()
    call_command(
        "start_run",
        "--team",
        "repo-fix",
        "--scenario",
        "premature-done",
        "--wait",
        "--json",
        stdout=out,
    )
    found = json.loads(out.getvalue())  # stdout is the object alone
    assert set(found) == {"run_id", "status", "reason", "bill", "findings"}
    assert found["status"] == said.removeprefix("status: ").split(" (")[0]
    assert found["bill"]["total"]["tokens"] > 0


def test_start_run_json_without_wait_is_refused_before_the_run_starts(owner):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="--json says how the run ended, so it goes with --wait"):
        call_command("start_run", "--team", "solo", "--json")
    assert DjangoJournal().last_position() == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "team, scenario, ended, code",
    [
        ("repo-fix", "first-flight", "done", None),
        ("repo-fix", "budget-starved", "halted", 3),
        ("support-desk", "lost-update", "waiting", 3),  # escalated, its conflict parked
    ],
)
def test_start_run_wait_exits_as_fly_does_for_how_the_run_ended(eager, team, scenario, ended, code):
    """`--wait` exited 0 however the run ended; `python -m runtime fly` exits 3 for a verdict
    other than done (and 4 interrupted): a script could not tell without reading the output."""
    out = io.StringIO()
    argv = ["start_run", "--team", team, "--scenario", scenario, "--wait", "--json"]
    if code is None:
        call_command(*argv, stdout=out)
    else:
        with pytest.raises(SystemExit) as exited:
            call_command(*argv, stdout=out)
        assert exited.value.code == code
    assert json.loads(out.getvalue())["status"] == ended


@pytest.mark.parametrize(
    "state, code",
    [
        ("done", 0),
        ("compensated", 3),  # done, a money step undone: no verified success
        ("interrupted", 4),
        ("dead-lettered", 4),  # on the workers: waits for a person's retry
        ("failed", 3),
        ("escalated", 3),
        ("resolved", 3),
        ("discarded", 3),
    ],
)
def test_the_exit_status_of_a_run_is_one_rule_for_fly_and_start_run(state, code):
    from runtime.cli import exit_status

    assert exit_status(state) == code
