"""SIGKILL the team mid-flight (in the reviewer's turn among others), resume, and get the
journal of an uninterrupted flight."""

from __future__ import annotations

import signal
from collections import Counter

import pytest

from runtime.jsonl import JsonlJournal
from tests.runtime.helpers import facts
from tests.runtime.test_crash import cli

pytestmark = pytest.mark.slow
RUN = "r-team-crash"
FLY = (
    "fly",
    "--team",
    "repo-fix",
    "--scenario",
    "first-flight",
    "--journal",
    "j.jsonl",
    "--run-id",
    RUN,
)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    where = tmp_path_factory.mktemp("team-reference")
    done = cli(*FLY, cwd=where)
    assert done.returncode == 0, done.stderr
    return facts(where / "j.jsonl")


@pytest.mark.parametrize(
    "point",
    [
        "after:ModelCalled@reviewer#1",  # the reviewer is waiting on its model
        "after:ToolDispatched@reviewer#1",  # the reviewer's read_file is in flight
        "after:ModelResponded@reviewer#2",  # its verdict is recorded, not yet acted on
        "after:CandidateCommitted#1",  # between the commit and the DONE message
        "after:Integrated#1",  # merged, the tester not yet asked
    ],
)
def test_a_team_killed_mid_flight_resumes_to_the_uninterrupted_journal(
    tmp_path, uninterrupted, point
):
    log = tmp_path / "exec.log"
    env = {"MINUTES_EXEC_LOG": str(log)}
    crashed = cli(*FLY, env={**env, "MINUTES_FAULT": point}, cwd=tmp_path)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    resumed = cli("resume", "j.jsonl", env=env, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert facts(tmp_path / "j.jsonl") == uninterrupted
    records = JsonlJournal(tmp_path / "j.jsonl").read(f"run-{RUN}")
    assert [r.version for r in records] == list(range(1, len(records) + 1))
    runs = Counter(line.split(" ", 1)[1] for line in log.read_text().splitlines())
    assert sum(n - 1 for n in runs.values()) <= 1  # only a call in flight at the kill runs twice
