"""The command line's figures of a run are the server's: `fly`'s summary, `views`, `diagnose`
and `diff --json` fold every event of the run, on whichever stream it was written (its leases,
claims, conflicts, sagas), as the projector does. They read only the run's own and its
specialists' streams, and said "no claim or lease was journalled" where the API counted the
claims, "no conflict was parked" where one was open, and left out the saga a refund was undone
by. And a fork started, for `diff --json` as for the compare API, when it was made, not at the
TeamStarted it copied from its parent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime.cli import main
from runtime.jsonl import JsonlJournal
from services import compare as stored_compare
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.test_projection_matches_views import from_the_read_models, store

RUN = "r-figures"


def fly(capsys: pytest.CaptureFixture[str], path: Path, team: str, scenario: str) -> Any:
    argv = ["fly", "--team", team, "--scenario", scenario, "--journal", str(path)]
    main([*argv, "--run-id", RUN, "--no-sandbox", "--json"])
    return json.loads(capsys.readouterr().out)


def said(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) in (0, 1)
    return json.loads(capsys.readouterr().out)


def at_the_files_positions(alias: str, path: Path, findings: list[dict[str, Any]]) -> list:
    """The store's findings citing the file's positions (a store may number its events from
    elsewhere than 1), in the order `diagnose` gives them sorted by."""
    stored = {r.position: r.event.id for r in DjangoJournal(alias).read_run(RUN)}
    in_file = {r.event.id: r.position for r in JsonlJournal(path).read_all()}
    cited = [{**f, "positions": [in_file[stored[p]] for p in f["positions"]]} for f in findings]
    return sorted(cited, key=lambda f: json.dumps(f, sort_keys=True))


def ordered(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(findings, key=lambda f: json.dumps(f, sort_keys=True))


@on_every_backend()
@pytest.mark.parametrize(
    ("team", "scenario", "shown"),
    [
        # claims and a conflict parked for a person, on the claims and conflict streams
        ("support-desk", "lost-update", lambda m, f: m["conflict_resolution_latency"]["open"]),
        # its refund's saga undone, on the saga's stream; a breaker tripped
        ("support-triage", "refund-saga", lambda m, f: "saga_compensated" in f),
        # the writers' claims and leases on the run's resources
        ("repo-fix", "parallel-writers", lambda m, f: m["ownership_conflict_rate"]["claims"]),
    ],
)
def test_the_command_line_gives_the_stores_metrics_and_findings(
    alias, tmp_path, capsys, team, scenario, shown
):
    path = tmp_path / "run.jsonl"
    flown = fly(capsys, path, team, scenario)
    store(alias, JsonlJournal(path).read_all())  # as a flight on the server writes it
    stored = from_the_read_models(alias, RUN)
    findings = at_the_files_positions(alias, path, stored["findings"])
    assert shown(stored["metrics"], [f["kind"] for f in findings])  # what is tested is there

    assert ordered(flown["findings"]) == findings
    views = said(capsys, "views", str(path))
    assert views["metrics"] == stored["metrics"]
    assert ordered(views["findings"]) == findings
    assert views["status"] == stored["summary"]["status"]
    assert ordered(said(capsys, "diagnose", str(path))) == findings
    compared = said(capsys, "diff", str(path), str(path), "--json")
    assert {m["name"]: m["a"] for m in compared["metrics"]} == stored["metrics"]
    assert compared["findings"]["both"] == sorted({f["kind"] for f in findings})
    assert compared["outcome"]["a"]["events"] == stored["summary"]["events"]


@pytest.mark.django_db  # the compare API reads the default database
def test_diff_and_the_compare_api_say_a_fork_started_when_it_was_made(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    fly(capsys, path, "repo-fix", "first-flight")
    at = next(
        r.position
        for r in JsonlJournal(path).read(f"run-{RUN}")
        if r.event.kind == "ModelResponded"
    )
    assert main(["fork", str(path), "--at", str(at), "--run-id", "r-fork"]) == 0
    capsys.readouterr()
    [forked] = [
        r.event for r in JsonlJournal(path).read("run-r-fork") if r.event.kind == "RunForked"
    ]
    store("default", JsonlJournal(path).read_all())
    assert RunSummary.objects.filter(run_id="r-fork").exists()

    argv = ["diff", str(path), str(path), "--run-a", RUN, "--run-b", "r-fork", "--json"]
    outcome = said(capsys, *argv)["outcome"]
    api = stored_compare.runs(RUN, "r-fork").as_dict()["outcome"]
    assert outcome["b"]["started"] == pytest.approx(forked.t)
    for side in ("a", "b"):
        assert outcome[side] == {
            **api[side],
            "started": pytest.approx(api[side]["started"], abs=1e-5),
            "ended": pytest.approx(api[side]["ended"], abs=1e-5),
        }
