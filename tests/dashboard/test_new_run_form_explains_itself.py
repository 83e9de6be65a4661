"""The new-run form explains itself: the chosen team's scenarios, each with its description;
each scenario's own settings prefilled and kept unless a person changes them (budget-starved
keeps its 400); a task typed with the scripted backend is refused, not silently ignored; and
the scripted backend does not claim to spend no tokens."""

from __future__ import annotations

import re

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from teams import TEAMS

pytestmark = pytest.mark.django_db


def offered(html: str) -> list[str]:
    select = re.search(r'<select name="scenario".*?</select>', html, re.S).group(0)
    return re.findall(r'<option value="([^"]+)"', select)


def test_the_form_offers_the_chosen_teams_scenarios_with_their_descriptions(as_owner):
    page = as_owner.get("/runs/new?team=support-triage").content.decode()
    assert offered(page) == list(TEAMS["support-triage"].scenarios)
    saga = TEAMS["support-triage"].scenarios["refund-saga"]
    assert f"refund-saga: {saga.description}" in page.replace("&#x27;", "'")
    assert 'hx-get="/runs/new"' in page  # a change of team draws the form for it
    assert "no tokens spent" not in page and "synthetic token counts" in page


def test_budget_starved_from_the_form_keeps_its_own_allowance(as_owner):
    page = as_owner.get("/runs/new?team=repo-fix&scenario=budget-starved").content.decode()
    assert re.search(r'name="allowance" value="400"', page)
    assert 'name="presets_of" value="repo-fix/budget-starved"' in page
    body = {
        "team": "repo-fix",
        "scenario": "budget-starved",
        "model": "scripted",
        "allowance": "400",
        "max_turns": re.search(r'name="max_turns" value="(\d+)"', page).group(1),
        "presets_of": "repo-fix/budget-starved",
    }
    response = as_owner.post("/runs/new", body)
    assert response.status_code == 302, response.content.decode()[:500]
    run_id = response.url.rstrip("/").rsplit("/", 1)[-1]
    [started] = [r.event for r in DjangoJournal().read(f"run-{run_id}")][:1]
    assert started.config["allowance"] == 400


def test_a_box_left_at_another_scenarios_preset_takes_the_chosen_scenarios_own(as_owner):
    # Drawn for first-flight (5000), then budget-starved chosen without the form redrawn.
    first = as_owner.get("/runs/new?team=repo-fix&scenario=first-flight").content.decode()
    allowance = re.search(r'name="allowance" value="(\d+)"', first).group(1)
    body = {
        "team": "repo-fix",
        "scenario": "budget-starved",
        "model": "scripted",
        "allowance": allowance,
        "presets_of": "repo-fix/first-flight",
    }
    response = as_owner.post("/runs/new", body)
    run_id = response.url.rstrip("/").rsplit("/", 1)[-1]
    [started] = [r.event for r in DjangoJournal().read(f"run-{run_id}")][:1]
    assert started.config["allowance"] == 400
    redrawn = as_owner.get(
        f"/runs/new?team=repo-fix&scenario=budget-starved&allowance={allowance}"
        "&presets_of=repo-fix/first-flight"
    ).content.decode()
    assert 'name="allowance" value="400"' in redrawn


def test_a_task_typed_for_the_scripted_backend_is_refused_and_nothing_starts(as_owner):
    page = as_owner.get("/runs/new").content.decode()
    assert "whatever the task" in page  # the warning, before anything is typed
    before = StoredEvent.objects.count()
    body = {"team": "repo-fix", "scenario": "first-flight", "model": "scripted", "task": "mine"}
    response = as_owner.post("/runs/new", body)
    assert response.status_code == 400
    assert "a task of your own needs a model backend" in response.content.decode()
    assert StoredEvent.objects.count() == before


def test_the_form_and_the_command_lines_help_describe_each_scenario_in_the_same_words(as_owner):
    from runtime.cli_fly import scenarios_help

    helped = scenarios_help()
    for team in TEAMS.values():
        page = as_owner.get(f"/runs/new?team={team.name}").content.decode()
        page = page.replace("&#x27;", "'").replace("&quot;", '"')
        for name, scenario in team.scenarios.items():
            line = f"{name}: {scenario.description}"
            assert line in helped and line in page, line
