"""The single-agent baseline from `python -m runtime`: the solo coder flies the team run's task
on the same template and model, into the same journal, linked by its TeamStarted, and the
comparison's figures are the two bills'."""

from __future__ import annotations

import json

import pytest

from runtime import flight, views
from runtime.cli import main
from runtime.jsonl import JsonlJournal

pytestmark = pytest.mark.slow


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def started(journal, run_id):
    return journal.read(f"run-{run_id}")[0].event


def runs_in(path):
    return [s.removeprefix("run-") for s in JsonlJournal(path).streams() if s.startswith("run-")]


def test_fly_with_baseline_flies_the_solo_coder_on_the_same_task_linked(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    code, out, _ = run(
        capsys,
        "fly",
        "--team",
        "repo-fix",
        "--scenario",
        "first-flight",
        "--journal",
        str(path),
        "--baseline",
    )
    assert code == 0, out
    journal = JsonlJournal(path)
    team_run, solo_run = sorted(runs_in(path), key=lambda r: started(journal, r).t)
    team, solo = started(journal, team_run), started(journal, solo_run)
    assert (solo.team, solo.config["baseline_of"]) == ("solo", team_run)
    assert solo.task == team.task
    assert solo.config["settings"]["template"] == team.config["settings"]["template"]
    assert solo.config["model"] == team.config["model"]
    assert team.config["baseline_of"] is None
    assert f"baseline {solo_run}: done" in out
    assert "tokens per verified success" in out


def test_the_baseline_command_compares_with_the_figures_of_the_two_bills(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    code, _, _ = run(
        capsys, "fly", "--team", "repo-fix", "--scenario", "premature-done", "--journal", str(path)
    )
    assert code == 0
    [team_run] = runs_in(path)
    code, out, _ = run(capsys, "baseline", str(path), "--json")
    assert code == 0
    compared = json.loads(out)
    journal = JsonlJournal(path)
    solo_run = compared["baseline"]["run_id"]
    assert started(journal, solo_run).config["baseline_of"] == team_run
    for side, run_id in (("team", team_run), ("baseline", solo_run)):
        bill = views.bill(flight.run_records(journal, run_id))
        figures = compared[side]
        assert (figures["tokens"], figures["model_calls"]) == (
            bill["total"]["tokens"],
            bill["total"]["calls"],
        )
        assert figures["outcome"] == views.status(flight.run_records(journal, run_id))
        assert figures["cost_per_verified_success"] == (
            bill["total"]["tokens"] if figures["outcome"] == "done" else None
        )
    assert compared["team_over_baseline"]["tokens"] == round(
        compared["team"]["tokens"] / compared["baseline"]["tokens"], 4
    )


def test_a_team_without_a_repository_gets_no_baseline_and_nothing_is_flown(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    code, _, err = run(
        capsys, "fly", "--team", "support-desk", "--journal", str(path), "--baseline"
    )
    assert code == 2
    assert "--baseline: team support-desk works on no repository template" in err
    assert not path.exists() or path.read_text() == ""


def test_a_solo_run_is_its_own_baseline(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    assert run(capsys, "fly", "--team", "solo", "--journal", str(path))[0] == 0
    code, _, err = run(capsys, "baseline", str(path))
    assert code == 2 and "a solo run is its own single-agent baseline" in err
    assert len(runs_in(path)) == 1


def test_fly_with_baseline_and_json_prints_one_document_with_the_comparison(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    code, out, _ = run(
        capsys,
        "fly",
        "--team",
        "repo-fix",
        "--scenario",
        "first-flight",
        "--journal",
        str(path),
        "--baseline",
        "--json",
    )
    assert code == 0
    document = json.loads(out)
    compared = document["comparison"]
    assert compared["team"]["run_id"] == document["run_id"]
    assert compared["team"]["tokens"] == document["bill"]["total"]["tokens"]
    solo_run = compared["baseline"]["run_id"]
    assert started(JsonlJournal(path), solo_run).config["baseline_of"] == document["run_id"]


def test_the_baseline_of_a_fork_flies_under_the_forks_caps(tmp_path, capsys):
    """The fork's settings keep its parent's caps; its RunForked carries those it went on with."""
    path = tmp_path / "j.jsonl"
    run(capsys, "fly", "--team", "repo-fix", "--scenario", "budget-starved", "--journal", str(path))
    [parent] = runs_in(path)
    debit = max(
        r.position
        for r in JsonlJournal(path).read(f"run-{parent}")
        if r.event.kind == "BudgetDebited" and r.event.agent == "coder"
    )
    code, _, _ = run(capsys, "fork", str(path), "--at", str(debit), "--allowance", "5000")
    assert code == 0
    [fork] = [r for r in runs_in(path) if r != parent]
    code, out, _ = run(capsys, "baseline", str(path), "--run", fork, "--json")
    solo_run = json.loads(out)["baseline"]["run_id"]
    assert started(JsonlJournal(path), solo_run).config["allowance"] == 5000
