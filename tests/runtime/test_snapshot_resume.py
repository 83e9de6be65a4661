"""Loop snapshots: a run resumed from them writes the journal of an uninterrupted run, reads
only the events around them, and a snapshot that is missing, torn, edited, of another journal
or of other settings is never trusted: the run is read and replayed as without it."""

from __future__ import annotations

import contextlib

import pytest

from runtime import flight, loop
from runtime.budget import Budget
from runtime.journal import MemoryJournal
from runtime.model import IfFailed, ScriptedClient, call
from runtime.session import Session
from runtime.snapshots import FileSnapshots, MemorySnapshots
from runtime.stops import ReplayDivergence, StepComplete
from runtime.tools import Tool, Toolbox, schema
from tests.runtime.helpers import facts

STREAM = "run-r-snap"
RUN = "r-snap"


def read_file(path: str) -> str:
    if path.startswith("missing"):
        raise FileNotFoundError(path)
    return f"contents of {path}: " + "x" * 200


TOOLS = [Tool("read_file", "Read a file.", schema({"path": {"type": "string"}}), read_file)]


def script(turns: int, ending: str) -> list:
    """`turns` reads, every fifth of a missing file followed by a reaction to the failure (an
    IfFailed step); then three identical calls ("looping") or done."""
    steps: list = []
    for i in range(turns):
        steps.append(call("read_file", 40, path=f"missing-{i}" if i % 5 == 3 else f"f{i}.py"))
        steps.append(IfFailed(then=call("read_file", 30, path=f"found-{i}.py")))
    if ending == "looping":
        steps += [call("read_file", 40, path="same.py") for _ in range(4)]
    steps.append(call("done", 10, summary="read them all"))
    return steps


def agent(turns: int, ending: str, window: int = 1_500) -> loop.Agent:
    return loop.Agent(
        "coder",
        ScriptedClient(script(turns, ending), "coder"),
        Toolbox(TOOLS),
        "You read files.",
        max_turns=3 * turns,
        window=window,  # small: older steps fall out of the window, as in a long run
        repeats=3,
    )


def fly(session: Session, turns: int, ending: str, allowance: int = 10**9, **kw):
    with contextlib.suppress(StepComplete):
        return loop.run(agent(turns, ending, **kw), "Read the files.", session, Budget(allowance))
    return None


def uninterrupted(turns: int, ending: str, allowance: int = 10**9):
    journal = MemoryJournal()
    result = fly(Session(journal, RUN), turns, ending, allowance)
    return journal, result


def in_steps(journal, snapshots, turns, ending, allowance=10**9, steps=(1, 3, 7), every=4):
    """Drive the run a few live turns per session, each session a cold resume."""
    sessions, result, i = [], None, 0
    while result is None:
        session = Session(
            journal, RUN, steps=steps[i % len(steps)], snapshots=snapshots, snapshot_every=every
        )
        sessions.append(session)
        result = fly(session, turns, ending, allowance)
        i += 1
    return sessions, result


@pytest.mark.parametrize(
    ("ending", "allowance", "status"),
    [("done", 10**9, "done"), ("looping", 10**9, "looping"), ("done", 800, "halted")],
)
def test_a_loop_resumed_from_its_snapshots_writes_the_journal_of_an_uninterrupted_one(
    ending, allowance, status
):
    reference, expected = uninterrupted(30, ending, allowance)
    journal, snapshots = MemoryJournal(), MemorySnapshots()
    sessions, result = in_steps(journal, snapshots, 30, ending, allowance)
    assert result == expected and result.status == status
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)]
    )
    taken = [s.skipped for s in sessions if s.skipped]
    assert len(taken) > len(sessions) // 2  # most resumes skipped turns: the path was taken


class Counting(MemoryJournal):
    """A memory journal that counts the events it hands out."""

    def __init__(self) -> None:
        super().__init__()
        self.handed = 0

    def read(self, stream, after=0):
        found = super().read(stream, after)
        self.handed += len(found)
        return found

    def read_range(self, stream, after, until):
        found = super().read_range(stream, after, until)
        self.handed += len(found)
        return found


def test_a_resume_from_a_snapshot_reads_only_the_events_around_it():
    journal, snapshots = Counting(), MemorySnapshots()
    fly(Session(journal, RUN, steps=120, snapshots=snapshots, snapshot_every=10), 200, "done")
    stored = journal.version(STREAM)
    journal.handed = 0
    resumed = Session(journal, RUN, steps=1, snapshots=snapshots, snapshot_every=10)
    fly(resumed, 200, "done")
    # the RunStarted, the event the snapshot stands at, and the turn since (none here)
    assert journal.handed == 2 and resumed.skipped == stored - 2
    assert journal.version(STREAM) > stored  # and it went on live
    journal.handed = 0
    fly(Session(journal, RUN, steps=1), 200, "done")  # without snapshots: everything
    assert journal.handed == journal.version(STREAM) - 5


def test_a_deleted_snapshot_leaves_a_full_replay_and_is_taken_again():
    reference, expected = uninterrupted(30, "done")
    journal, snapshots = MemoryJournal(), MemorySnapshots()
    fly(Session(journal, RUN, steps=10, snapshots=snapshots, snapshot_every=4), 30, "done")
    taken = snapshots.load(STREAM)
    assert taken is not None
    del snapshots.stored[STREAM]
    resumed = Session(journal, RUN, steps=10, snapshots=snapshots, snapshot_every=4)
    fly(resumed, 30, "done")
    assert resumed.skipped == 0  # read and replayed from the start
    again = snapshots.load(STREAM)
    assert again is not None and again.version > taken.version  # rebuilt as the run went on
    _, result = in_steps(journal, snapshots, 30, "done")
    assert result == expected
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)]
    )


@pytest.mark.parametrize(
    "spoil",
    [
        lambda data: data[: len(data) // 2],  # torn: the write never finished
        lambda data: data.replace(b'"turn":12', b'"turn":20'),  # edited: digest fails
        lambda data: b"not json",
    ],
    ids=["torn", "edited", "garbage"],
)
def test_a_corrupt_snapshot_is_ignored(tmp_path, spoil):
    reference, expected = uninterrupted(30, "done")
    journal, snapshots = MemoryJournal(), FileSnapshots(tmp_path / "snapshots")
    fly(Session(journal, RUN, steps=14, snapshots=snapshots, snapshot_every=12), 30, "done")
    path = snapshots.path(STREAM)
    data = path.read_bytes()
    assert snapshots.load(STREAM) is not None and spoil(data) != data
    path.write_bytes(spoil(data))
    assert snapshots.load(STREAM) is None
    resumed = Session(journal, RUN, steps=1, snapshots=snapshots)
    assert resumed.skipped == 0 and None not in resumed.recorded  # all of it was read
    fly(resumed, 30, "done")
    assert resumed.skipped == 0
    _, result = in_steps(journal, snapshots, 30, "done")
    assert result == expected
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)]
    )


def test_a_save_torn_by_a_crash_leaves_the_snapshot_before_it(tmp_path):
    """Two slots, written in turn: a save that never finished spoils only its own slot, and
    the resume starts from the snapshot before it (a few turns more to replay, the same
    journal)."""
    reference, expected = uninterrupted(30, "done")
    journal, snapshots = MemoryJournal(), FileSnapshots(tmp_path / "snapshots")
    fly(Session(journal, RUN, steps=14, snapshots=snapshots, snapshot_every=4), 30, "done")
    latest = snapshots.load(STREAM)
    path = snapshots.path(STREAM)  # the slot holding it
    older = FileSnapshots(tmp_path / "snapshots")
    path.write_bytes(path.read_bytes()[:100])  # torn
    before = older.load(STREAM)
    assert latest is not None and before is not None and before.version < latest.version
    assert snapshots.path(STREAM, "a") != snapshots.path(STREAM, "b")
    resumed = Session(journal, RUN, steps=1, snapshots=older, snapshot_every=4)
    assert resumed.skipped == 0 and before.version - before.start - 1 > 0
    fly(resumed, 30, "done")
    assert resumed.skipped == before.version - before.start - 1  # from the older one
    _, result = in_steps(journal, older, 30, "done")
    assert result == expected
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)]
    )


def test_a_longer_snapshot_overwritten_by_a_shorter_one_reads_back_whole(tmp_path):
    """A slot is overwritten in place, not truncated: what a longer snapshot left after the
    new one's end is not part of it."""
    from runtime.snapshots import LoopSnapshot

    def snap(version: int, history: str) -> LoopSnapshot:
        return LoopSnapshot(STREAM, 1, "s", version, "v", "coder", "f", {"h": history}, {})

    snapshots = FileSnapshots(tmp_path)
    for version, history in [(10, "x" * 5_000), (20, "y" * 4_000), (30, "z"), (40, "w")]:
        snapshots.save(snap(version, history))
        assert FileSnapshots(tmp_path).load(STREAM) == snap(version, history)


@pytest.mark.parametrize("store", ["memory", "files"])
def test_a_discarded_snapshot_is_gone_from_both_slots(tmp_path, store):
    snapshots = MemorySnapshots() if store == "memory" else FileSnapshots(tmp_path)
    journal = MemoryJournal()
    fly(Session(journal, RUN, steps=14, snapshots=snapshots, snapshot_every=4), 30, "done")
    assert snapshots.load(STREAM) is not None
    if store == "files":
        assert len(list(tmp_path.glob("*.snapshot"))) == 2  # both slots were written
        (tmp_path / f"{snapshots.path(STREAM).name.split('.')[0]}.snapshot.json").write_text("{}")
    snapshots.discard(STREAM)
    snapshots.discard(STREAM)  # and again: nothing to do
    assert snapshots.load(STREAM) is None
    if store == "files":
        assert list(tmp_path.iterdir()) == []  # the format 1 file too


def test_a_snapshot_of_another_journals_run_of_that_id_is_ignored():
    elsewhere, snapshots = MemoryJournal(), MemorySnapshots()
    fly(Session(elsewhere, RUN, steps=20, snapshots=snapshots, snapshot_every=4), 30, "done")
    assert snapshots.load(STREAM) is not None
    journal = MemoryJournal()  # the same run id, the same turns, other event ids
    fly(Session(journal, RUN, steps=20), 30, "done")
    resumed = Session(journal, RUN, steps=1, snapshots=snapshots, snapshot_every=4)
    fly(resumed, 30, "done")
    assert resumed.skipped == 0
    reference, _ = uninterrupted(30, "done")
    assert facts([r.event for r in journal.read(STREAM)]) == facts(
        [r.event for r in reference.read(STREAM)][: journal.version(STREAM)]
    )


def test_a_snapshot_is_not_taken_up_by_a_loop_with_other_settings():
    journal, snapshots = MemoryJournal(), MemorySnapshots()
    fly(Session(journal, RUN, steps=20, snapshots=snapshots, snapshot_every=4), 30, "done")
    cold = Session(journal, RUN, steps=1)
    with pytest.raises(ReplayDivergence) as without:
        fly(cold, 30, "done", window=2_000)
    resumed = Session(journal, RUN, steps=1, snapshots=snapshots)
    with pytest.raises(ReplayDivergence) as with_snapshot:
        fly(resumed, 30, "done", window=2_000)  # a wider window: another loop
    assert resumed.skipped == 0
    assert str(with_snapshot.value) == str(without.value)  # the same divergence, same place
    taken = snapshots.load(STREAM)
    assert taken is not None and with_snapshot.value.version < taken.version  # not hidden by it


def test_a_team_run_resumed_from_snapshots_replays_identical(tmp_path, fly_team):
    reference = fly_team("solo-fix", team="solo")
    run_id = reference.run_id
    journal, snapshots = MemoryJournal(), MemorySnapshots()
    config = flight.plan("solo", "solo-fix", run_id)
    outcomes, skipped = [], []
    while not outcomes or outcomes[-1] == "stepped":
        session = Session(journal, run_id, steps=1, snapshots=snapshots, snapshot_every=2)
        outcomes.append(flight.drive(session, config, tmp_path).status)
        skipped.append(session.skipped)
    assert outcomes[-1] == reference.outcome.status == "done"
    assert any(skipped)
    assert facts([r.event for r in journal.read(f"run-{run_id}")]) == facts(reference.events)
    assert flight.replay(journal, run_id).identical
    resumed = flight.resume(journal, run_id, tmp_path, snapshots=snapshots)
    assert resumed.status == "done" and resumed.reason.startswith("already finished")
