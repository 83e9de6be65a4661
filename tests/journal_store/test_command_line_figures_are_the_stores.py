"""`diff --json` and the compare API say the same of a fork: it started when it was made (its
RunForked), not at the TeamStarted it copied from its parent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from journal_store.models import RunSummary
from runtime.cli import main
from runtime.jsonl import JsonlJournal
from services import compare as stored_compare
from tests.journal_store.test_projection_matches_views import store

RUN = "r-figures"


def fly(capsys: pytest.CaptureFixture[str], path: Path, team: str, scenario: str) -> Any:
    argv = ["fly", "--team", team, "--scenario", scenario, "--journal", str(path)]
    main([*argv, "--run-id", RUN, "--no-sandbox", "--json"])
    return json.loads(capsys.readouterr().out)


def said(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) in (0, 1)
    return json.loads(capsys.readouterr().out)


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
