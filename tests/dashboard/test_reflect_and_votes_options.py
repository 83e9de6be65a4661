"""Reflection and votes are asked for from the command line, the API and the form: recorded in
the run's TeamStarted when the team has them, refused in that team's words (and nothing
recorded) when it does not."""

from __future__ import annotations

import json

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from runtime.cli import main
from runtime.jsonl import JsonlJournal
from tests.dashboard.conftest import drive

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FORM = {"model": "scripted", "allowance": 5000, "max_turns": 12}


def settings_of(run_id):
    return DjangoJournal().read(f"run-{run_id}")[0].event.config["settings"]


def test_the_command_line_flies_a_reflection_and_a_refund_vote(tmp_path, capsys):
    path = tmp_path / "reflect.jsonl"
    argv = ["fly", "--team", "repo-fix", "--scenario", "reflect", "--journal", str(path)]
    assert main([*argv, "--reflect", "--json"]) == 0, capsys.readouterr().err
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    events = [r.event for r in JsonlJournal(path).read(f"run-{run_id}")]
    assert events[0].config["settings"]["reflect"] is True
    assert [e.kind for e in events].count("DraftCritiqued") == 1

    path = tmp_path / "desk.jsonl"
    argv = ["fly", "--team", "support-desk", "--scenario", "refund-vote", "--votes", "3"]
    assert main([*argv, "--journal", str(path), "--json"]) == 0, capsys.readouterr().err
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    events = [r.event for r in JsonlJournal(path).read(f"run-{run_id}")]
    assert events[0].config["settings"]["votes"] == 3
    assert [e.kind for e in events].count("VoteTaken") == 1


def test_the_command_line_refuses_reflection_for_a_team_without_it(tmp_path, capsys):
    path = tmp_path / "desk.jsonl"
    code = main(["fly", "--team", "support-desk", "--reflect", "--journal", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "team 'support-desk' has no reflection step (only repo-fix has one)" in err
    assert not path.exists() or path.read_text() == ""


def test_the_api_records_reflect_and_votes(api):
    answer = api.post(
        "/api/runs",
        {"team": "repo-fix", "scenario": "reflect", "reflect": True},
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    assert settings_of(answer.json()["run_id"])["reflect"] is True
    answer = api.post(
        "/api/runs",
        {"team": "repo-fix", "scenario": "vote", "votes": 3},
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    assert settings_of(answer.json()["run_id"])["votes"] == 3

    answer = api.post(
        "/api/runs",
        {"team": "support-desk", "scenario": "refund-vote"},
        content_type="application/json",
    )
    run_id = answer.json()["run_id"]
    assert settings_of(run_id)["votes"] == 3  # the scenario's own
    assert drive(run_id) == "done"
    kinds = [r.event.kind for r in DjangoJournal().read(f"run-{run_id}")]
    assert kinds.count("VoteTaken") == 1


def test_the_api_refuses_what_a_team_lacks_and_records_nothing(api):
    answer = api.post(
        "/api/runs", {"team": "support-desk", "reflect": True}, content_type="application/json"
    )
    assert answer.status_code == 400
    assert "has no reflection step (only repo-fix has one)" in answer.json()["detail"]
    answer = api.post(
        "/api/runs",
        {"team": "repo-fix", "scenario": "first-flight", "reflect": True},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert "scripts no critic for --reflect" in answer.json()["detail"]
    answer = api.post("/api/runs", {"team": "solo", "votes": 3}, content_type="application/json")
    assert answer.status_code == 400 and "has no voted decision" in answer.json()["detail"]
    # A scripted reviewer has one verdict in first-flight's script: three samples would run
    # out of it mid-run, so the run is refused before it starts.
    answer = api.post(
        "/api/runs",
        {"team": "repo-fix", "scenario": "first-flight", "votes": 3},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert "scenario 'first-flight' scripts 1 sample" in answer.json()["detail"]
    assert StoredEvent.objects.count() == 0 and RunSummary.objects.count() == 0


def test_the_form_offers_reflection_and_votes(as_owner):
    page = as_owner.get("/runs/new").content.decode()
    assert "Reflect before review (repo-fix)" in page and "Votes on the critical decision" in page
    response = as_owner.post(
        "/runs/new", {**FORM, "team": "repo-fix", "scenario": "reflect", "reflect": "on"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert settings_of(response.url.rstrip("/").rsplit("/", 1)[-1])["reflect"] is True
    response = as_owner.post(
        "/runs/new", {**FORM, "team": "repo-fix", "scenario": "vote", "votes": "3"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert settings_of(response.url.rstrip("/").rsplit("/", 1)[-1])["votes"] == 3


def test_the_form_refuses_reflection_for_the_desk(as_owner):
    response = as_owner.post(
        "/runs/new", {**FORM, "team": "support-desk", "scenario": "double-refund", "reflect": "on"}
    )
    assert response.status_code == 400
    assert "has no reflection step" in response.content.decode()
    assert StoredEvent.objects.count() == 0
