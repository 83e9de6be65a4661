"""A flight SIGKILLed mid-turn after it kept loop snapshots resumes from the latest one to the
journal of an uninterrupted flight: a lone loop's, and a repo-fix team's, whose coder's loop
keeps its mail, its reply deadline and the work registry in its snapshots."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from runtime import flight
from runtime.faults import Faults
from runtime.jsonl import JsonlJournal
from runtime.session import Session
from runtime.snapshots import FileSnapshots
from tests.runtime.helpers import facts
from tests.runtime.test_snapshot_callbacks import timeless
from tests.runtime.test_snapshot_resume import RUN, STREAM, fly, in_steps, uninterrupted

pytestmark = pytest.mark.slow

TURNS = 40

POINTS = [
    "after:ModelCalled#23",  # the turn's call is durable, its answer is not
    "after:ToolDispatched#26",  # between a dispatch and its return
    "after:ToolReturned#33",  # a turn boundary
]


def flown(where: Path, point: str) -> subprocess.CompletedProcess[str]:
    """This module run as a script in another process, killed at `point`."""
    return subprocess.run(
        [sys.executable, "-m", "tests.runtime.test_snapshot_crash", str(where), point],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("point", POINTS)
def test_a_killed_flight_resumes_from_its_snapshot_to_the_uninterrupted_journal(tmp_path, point):
    reference, expected = uninterrupted(TURNS, "done")
    crashed = flown(tmp_path, point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    journal, snapshots = JsonlJournal(tmp_path / "j.jsonl"), FileSnapshots(tmp_path / "snapshots")
    taken = snapshots.load(STREAM)
    assert taken is not None and taken.version < journal.version(STREAM)
    resumed = Session(journal, RUN, steps=1, snapshots=snapshots, snapshot_every=4)
    fly(resumed, TURNS, "done")
    assert resumed.skipped == taken.version - taken.start - 1  # from the snapshot, not replayed
    _, result = in_steps(journal, snapshots, TURNS, "done")
    assert result == expected
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)]
    )


TEAM_RUN = "r-team-snap"
TEAM_POINTS = [
    "after:ToolDispatched@coder#4",  # its fourth call in flight, after turn 2's snapshot
    "after:ModelCalled@coder#5",  # its last turn's call, after turn 4's snapshot
]


def team_session(where: Path, **kw) -> Session:
    return Session(
        JsonlJournal(where / "j.jsonl"),
        TEAM_RUN,
        snapshots=FileSnapshots(where / "snapshots"),
        snapshot_every=2,
        **kw,
    )


@pytest.mark.parametrize("point", TEAM_POINTS)
def test_a_killed_team_resumes_from_its_coders_snapshot_to_the_uninterrupted_journal(
    tmp_path, fly_team, point
):
    reference = fly_team("first-flight")
    crashed = flown(tmp_path, f"team:{point}")
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    taken = FileSnapshots(tmp_path / "snapshots").load(f"run-{TEAM_RUN}")
    assert taken is not None and taken.agent == "coder"
    resumed = team_session(tmp_path)
    config = flight.plan("repo-fix", "first-flight", TEAM_RUN)
    outcome = flight.drive(resumed, config, tmp_path)
    assert outcome.status == reference.outcome.status == "done"
    assert resumed.skipped == taken.version - taken.start - 1  # from the snapshot
    journal = JsonlJournal(tmp_path / "j.jsonl")
    recorded = [r.event for r in journal.read(f"run-{TEAM_RUN}")]
    assert repr(timeless(recorded)).replace(TEAM_RUN, "RUN") == repr(
        timeless(reference.events)
    ).replace(reference.run_id, "RUN")
    assert flight.replay(journal, TEAM_RUN).identical


if __name__ == "__main__":
    where, point = Path(sys.argv[1]), sys.argv[2]
    if point.startswith("team:"):
        session = team_session(where, faults=Faults.parse(point.removeprefix("team:")))
        flight.drive(session, flight.plan("repo-fix", "first-flight", TEAM_RUN), where)
        sys.exit(0)
    fly(
        Session(
            JsonlJournal(where / "j.jsonl"),
            RUN,
            snapshots=FileSnapshots(where / "snapshots"),
            snapshot_every=4,
            faults=Faults.parse(point),
        ),
        TURNS,
        "done",
    )
