"""The single-agent baseline from the API and the run form: started linked to the team run (its
TeamStarted says `baseline_of`), and compared with the figures of the two bills."""

from __future__ import annotations

import pytest

from dashboard import queries
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from services import baseline as baselines
from services import runs
from tests.dashboard.conftest import drive, run_of

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
    pytest.mark.usefixtures("recorded_runs"),
]

FORM = {"model": "scripted", "allowance": 5000, "max_turns": 12}


def started(run_id):
    return DjangoJournal().read(f"run-{run_id}")[0].event


def test_the_api_starts_a_baseline_linked_to_a_finished_team_run_and_compares_the_bills(api):
    team_run = run_of("first-flight")
    answer = api.post(f"/api/runs/{team_run}/baseline")
    assert answer.status_code == 201, answer.content
    solo_run = answer.json()["run_id"]
    solo, team = started(solo_run), started(team_run)
    assert (solo.team, solo.config["baseline_of"]) == ("solo", team_run)
    assert solo.task == team.task
    assert solo.config["settings"]["template"] == team.config["settings"]["template"]
    assert baselines.baselines_of(team_run) == [solo_run]
    assert drive(solo_run) == "done"

    compared = api.get(f"/api/runs/{team_run}/comparison").json()
    for side, run_id in (("team", team_run), ("baseline", solo_run)):
        bill = queries.bill(run_id)
        assert compared[side]["run_id"] == run_id
        assert compared[side]["tokens"] == bill["total"]["tokens"]
        assert compared[side]["model_calls"] == bill["total"]["calls"]
        assert compared[side]["outcome"] == "done"
        assert compared[side]["cost_per_verified_success"] == bill["total"]["tokens"]
        assert compared[side]["wall_seconds"] is not None
    assert compared["team_over_baseline"]["tokens"] == round(
        queries.bill(team_run)["total"]["tokens"] / queries.bill(solo_run)["total"]["tokens"], 4
    )


def test_starting_a_run_with_baseline_through_the_api_starts_both(api):
    answer = api.post(
        "/api/runs",
        {"team": "repo-fix", "scenario": "first-flight", "baseline": True},
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    team_run = answer.json()["run_id"]
    [solo_run] = baselines.baselines_of(team_run)
    assert started(solo_run).config["baseline_of"] == team_run


def test_a_run_without_a_baseline_has_no_comparison(api):
    team_run = run_of("first-flight", steps=1)
    answer = api.get(f"/api/runs/{team_run}/comparison")
    assert answer.status_code == 404
    assert "has no single-agent baseline yet" in answer.json()["detail"]


def test_a_team_without_a_repository_gets_no_baseline_and_nothing_is_recorded(api):
    answer = api.post(
        "/api/runs",
        {"team": "support-desk", "baseline": True},
        content_type="application/json",
    )
    assert answer.status_code == 409
    assert "works on no repository template" in answer.json()["detail"]
    assert StoredEvent.objects.count() == 0 and RunSummary.objects.count() == 0


def test_an_unknown_team_asked_for_a_baseline_is_refused_as_unknown(api):
    """It was a 409 saying the team "works on no repository template", as if it existed."""
    answer = api.post(
        "/api/runs", {"team": "repo-fx", "baseline": True}, content_type="application/json"
    )
    assert answer.status_code == 422
    [refused] = answer.json()["detail"]
    assert refused["loc"] == ["body", "team"]
    assert refused["msg"].startswith("'repo-fx' is no team here: name one of repo-fix")
    assert StoredEvent.objects.count() == 0


def test_a_solo_run_is_refused_its_own_baseline(api):
    answer = api.post("/api/runs", {"team": "solo"}, content_type="application/json")
    solo_run = answer.json()["run_id"]
    before = StoredEvent.objects.count()
    refused = api.post(f"/api/runs/{solo_run}/baseline")
    assert refused.status_code == 409
    assert "a solo run is its own single-agent baseline" in refused.json()["detail"]
    assert StoredEvent.objects.count() == before


def test_the_form_checkbox_also_flies_the_baseline(as_owner):
    response = as_owner.post(
        "/runs/new", {**FORM, "team": "repo-fix", "scenario": "first-flight", "baseline": "on"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    team_run = response.url.rstrip("/").rsplit("/", 1)[-1]
    [solo_run] = baselines.baselines_of(team_run)
    assert started(solo_run).team == "solo"
    assert "Also fly the single-agent baseline" in as_owner.get("/runs/new").content.decode()


def test_the_form_refuses_the_baseline_for_a_team_without_a_repository(as_owner):
    response = as_owner.post(
        "/runs/new", {**FORM, "team": "support-desk", "scenario": "double-refund", "baseline": "on"}
    )
    assert response.status_code == 400
    assert "works on no repository template" in response.content.decode()
    assert StoredEvent.objects.count() == 0


def test_the_start_run_command_also_flies_the_baseline_or_refuses_it_writing_nothing(capsys):
    """The page and the API offer the baseline; the command had no --baseline."""
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="works on no repository template"):
        call_command("start_run", "--team", "support-desk", "--baseline")
    assert StoredEvent.objects.count() == 0
    call_command("start_run", "--team", "repo-fix", "--scenario", "first-flight", "--baseline")
    said = capsys.readouterr()
    team_run = said.out.strip()
    [solo_run] = baselines.baselines_of(team_run)
    assert f"single-agent baseline: {solo_run}" in said.err
    assert started(solo_run).config["baseline_of"] == team_run


def test_the_team_runs_page_and_its_baselines_name_each_other(as_owner):
    """The form says the baseline is linked to the run; neither page named the other."""
    response = as_owner.post(
        "/runs/new", {**FORM, "team": "repo-fix", "scenario": "first-flight", "baseline": "on"}
    )
    team_run = response.url.rstrip("/").rsplit("/", 1)[-1]
    [solo_run] = baselines.baselines_of(team_run)
    compare = f"/runs/compare?a={team_run}&amp;b={solo_run}"
    team_page = as_owner.get(f"/runs/{team_run}/").content.decode()
    assert "Single-agent baseline:" in team_page
    assert f'href="/runs/{solo_run}/"' in team_page and compare in team_page
    solo_page = as_owner.get(f"/runs/{solo_run}/").content.decode()
    assert "The single-agent baseline of" in solo_page
    assert f'href="/runs/{team_run}/"' in solo_page and compare in solo_page
    plain = runs.start_run("repo-fix", "first-flight", by="owner")
    assert "baseline" not in as_owner.get(f"/runs/{plain}/header").content.decode().lower()


def test_a_baselines_comparison_is_its_team_runs(api):
    """Asked of the baseline, the comparison said it had no single-agent baseline yet."""
    team_run = run_of("first-flight")
    solo_run = api.post(f"/api/runs/{team_run}/baseline").json()["run_id"]
    drive(solo_run)
    from_team = api.get(f"/api/runs/{team_run}/comparison")
    from_solo = api.get(f"/api/runs/{solo_run}/comparison")
    assert from_solo.status_code == 200, from_solo.content
    assert from_solo.json() == from_team.json()
    assert from_solo.json()["baseline"]["run_id"] == solo_run


def test_a_baseline_imported_without_its_team_run_links_to_no_run(as_owner, fly_team):
    """Its TeamStarted names a team run this store does not hold: no link to a 404."""
    import io

    from journal_store.transfer import import_journal

    flown = fly_team("solo-fix", team="solo")
    text = flown.path.read_text().replace('"baseline_of":null', '"baseline_of":"r-elsewhere"', 1)
    assert "r-elsewhere" in text
    data = text.replace(flown.run_id, "r-solo-here").encode()
    import_journal(io.BytesIO(data), name="solo.jsonl", size=len(data))
    assert baselines.team_run_of("r-solo-here") is None
    assert "r-elsewhere" not in as_owner.get("/runs/r-solo-here/header").content.decode()


def test_a_forks_baseline_flies_under_the_caps_the_fork_went_on_with(api):
    """A fork's settings keep its parent's caps; its RunForked carries its own: the baseline of
    budget-starved forked with 5000 tokens flew on the parent's 400."""
    from services import forks

    parent = run_of("budget-starved")
    debits = [
        r.position
        for r in DjangoJournal().read(f"run-{parent}")
        if r.event.kind == "BudgetDebited" and r.event.agent == "coder"
    ]
    child = forks.fork_run(parent, debits[-1], forks.Changes(allowance=5000, max_turns=7), "owner")
    solo_run = api.post(f"/api/runs/{child}/baseline").json()["run_id"]
    assert (started(solo_run).config["allowance"], started(solo_run).config["max_turns"]) == (
        5000,
        7,
    )
