"""Journals written by an older Minutes still read, replay identically and resume.

The fixtures in tests/fixtures/journals were written before settings were per team
(TeamStarted v1: one flat `config` holding every team's settings); see their README.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runtime import flight
from runtime.events import TeamFinished, TeamStarted, parse_event
from runtime.jsonl import JsonlJournal
from teams.desk import SupportDeskSettings
from teams.repo_fix import RepoFixSettings
from teams.solo import SoloSettings
from teams.triage import TriageSettings

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "journals"
TEAMS = ("solo", "repo-fix", "support-desk", "support-triage")
ADDED_SINCE = frozenset(
    {"SubtaskDegraded", "ReplyOverdue", "ToolRetryScheduled"}
    | {"IntentCarried", "StatusReported", "StatusNormalised", "MutationRefused"}
    | {"WorktreeAdded", "WorktreeRemoved"}  # the repo-fix tester's, around each verify
)  # event kinds newer than the fixtures
NEWER = ("desk", "parallel", "deadline", "refund")  # settings added after the first release


def old(team: str, tmp_path: Path) -> Path:
    """A copy of the team's old journal (replaying or resuming must not touch the fixture)."""
    copy = tmp_path / f"{team}.jsonl"
    shutil.copy(FIXTURES / f"{team}.v1.jsonl", copy)
    return copy


def first_line(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


@pytest.mark.parametrize("team", TEAMS)
def test_the_fixture_is_a_flat_v1_journal(team):
    line = first_line(FIXTURES / f"{team}.v1.jsonl")
    assert (line["kind"], line["v"], line["team"]) == ("TeamStarted", 1, team)
    assert {"template", "bidding", "desk", "refund", "parallel"} <= set(line["config"])


def test_a_flat_config_is_upcast_to_the_common_settings_and_the_teams_own():
    lines = {team: first_line(FIXTURES / f"{team}.v1.jsonl") for team in TEAMS}
    placement = ("stream", "version")  # the journal's, beside the event's own fields
    events = {
        team: parse_event({k: v for k, v in line.items() if k not in placement})
        for team, line in lines.items()
    }
    assert all(isinstance(e, TeamStarted) for e in events.values())
    configs = {team: e.config for team, e in events.items()}
    assert configs["solo"]["settings"] == {"team": "solo", "template": "parse-empty"}
    assert configs["repo-fix"]["settings"] == {
        "team": "repo-fix",
        "template": "parse-empty",
        "bidding": False,
        "docs": True,
        "max_rounds": 3,
    }
    desk = configs["support-desk"]["settings"]
    assert set(desk) == {"team", "desk"} and desk["desk"]["provider_latency"] == 1.0
    assert configs["support-triage"]["settings"] == {
        "team": "support-triage",
        "refund": True,
        "spend_rate": None,
        "parallel": 3,
        "deadline": 60.0,
    }
    for config in configs.values():
        assert "template" not in config and "team" not in config  # nothing left flat
        assert config["allowance"] == 5000 and config["model"] == "scripted"


@pytest.mark.parametrize(
    ("team", "model", "check"),
    [
        ("solo", SoloSettings, lambda s: s.template == "parse-empty"),
        ("repo-fix", RepoFixSettings, lambda s: s.docs and s.template == "parse-empty"),
        ("support-desk", SupportDeskSettings, lambda s: s.desk.tool_timeout == 0.3),
        ("support-triage", TriageSettings, lambda s: s.refund and s.parallel == 3),
    ],
)
def test_an_old_journal_reads_as_its_teams_settings(team, model, check, tmp_path):
    path = old(team, tmp_path)
    run_id = flight.find_run(JsonlJournal(path), JsonlJournal(path).streams())
    events = [r.event for r in JsonlJournal(path).read(f"run-{run_id}")]
    config = flight.recorded_config(events, run_id)
    assert config.team == team and check(model.of(config))


@pytest.mark.parametrize("team", TEAMS)
def test_an_old_journal_replays_identically(team, tmp_path):
    path = old(team, tmp_path)
    journal = JsonlJournal(path)
    run_id = flight.find_run(journal, journal.streams())
    report = flight.replay(journal, run_id)
    assert report.identical, report.difference
    assert report.complete and report.events == len(journal.read(f"run-{run_id}"))
    assert path.read_bytes() == (FIXTURES / f"{team}.v1.jsonl").read_bytes()  # nothing written


@pytest.mark.parametrize("team", TEAMS)
def test_an_old_run_cut_short_after_it_started_resumes_to_the_same_verdict(team, tmp_path):
    recorded = [
        json.loads(line) for line in (FIXTURES / f"{team}.v1.jsonl").read_text().splitlines()
    ]
    run_id = recorded[0]["run_id"]
    [finished] = [r for r in recorded if r["kind"] == "TeamFinished"]
    cut = tmp_path / "cut.jsonl"  # the old run, crashed right after its TeamStarted
    cut.write_text(json.dumps(recorded[0]) + "\n")
    outcome = flight.resume(JsonlJournal(cut), run_id, tmp_path / "workspaces")
    assert outcome.status == finished["status"], outcome.reason
    journal = JsonlJournal(cut)
    resumed = [r.event for r in journal.read(f"run-{run_id}")]
    assert isinstance(resumed[-1], TeamFinished)
    old_kinds = [r["kind"] for r in recorded if r.get("stream") == f"run-{run_id}"]
    # Kinds added since the fixture was written say more about the same run; what it said
    # before is said again, in the same order.
    assert [e.kind for e in resumed if e.kind not in ADDED_SINCE] == old_kinds
    assert json.loads(cut.read_text().splitlines()[0])["v"] == 1  # the old line is not rewritten
    assert flight.replay(journal, run_id).identical


def test_an_old_journal_without_the_newer_settings_replays_identically(tmp_path):
    path = old("solo", tmp_path)
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    for name in NEWER:
        first["config"].pop(name)
    first["config"]["model"] = "openai"  # the endpoint's name before the rename
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    journal = JsonlJournal(path)
    report = flight.replay(journal, first["run_id"])
    assert report.identical, report.difference
