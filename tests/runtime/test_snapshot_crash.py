"""A flight SIGKILLed mid-turn after it kept loop snapshots resumes from the latest one to the
journal of an uninterrupted flight."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.faults import Faults
from runtime.jsonl import JsonlJournal
from runtime.session import Session
from runtime.snapshots import FileSnapshots
from tests.runtime.helpers import facts
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


if __name__ == "__main__":
    where, point = Path(sys.argv[1]), sys.argv[2]
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
