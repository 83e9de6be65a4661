"""Loop snapshots for loops with the harness's callbacks (mail, a reply's deadline, the work
registry): the repo-fix team's runs, stepped one turn per cold session and each step resumed
from the latest snapshot, write the journal of an uninterrupted flight, and `replay` says
identical."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from runtime import flight, loop
from runtime.budget import Budget
from runtime.coordination.deadlines import Deadline, Due
from runtime.coordination.registry import Ledger, WorkRegistry
from runtime.events import MessageSent, ModelResponded, RunInterrupted, RunResumed, Usage
from runtime.journal import MemoryJournal
from runtime.messages import Performative, PostOffice
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.snapshots import MemorySnapshots
from runtime.stops import StepComplete
from runtime.tools import Tool, Toolbox, schema
from teams.repo_fix.scenarios import SCENARIOS
from tests.runtime.helpers import facts

# Read off the clock live (a reply's elapsed seconds, a lease's expiry): two flights of one
# scenario differ in these too, and in where their workspaces are (a writer's worktree).
CLOCKED = ("elapsed", "expires")


def timeless(events):
    return [
        {k: Path(v).name if k == "path" else v for k, v in f.items() if k not in CLOCKED}
        for f in facts(events)
    ]


@pytest.mark.slow  # every scenario flown step by step: about 20 s
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_repo_fix_run_resumed_from_snapshots_writes_the_uninterrupted_journal(
    tmp_path, fly_team, scenario
):
    reference = fly_team(scenario)
    run_id = reference.run_id
    journal, snapshots = MemoryJournal(), MemorySnapshots()
    config = flight.plan("repo-fix", scenario, run_id)
    outcomes, skipped = [], []
    while not outcomes or outcomes[-1] == "stepped":
        session = Session(journal, run_id, steps=1, snapshots=snapshots, snapshot_every=2)
        outcomes.append(flight.drive(session, config, tmp_path).status)
        skipped.append(session.skipped)
    assert outcomes[-1] == reference.outcome.status
    # Steps after a loop's snapshot start from it (budget-starved's agents stop before a
    # third turn: no snapshot, nothing to skip).
    assert any(skipped) != (scenario == "budget-starved")
    assert timeless([r.event for r in journal.read(f"run-{run_id}")]) == timeless(reference.events)
    assert flight.replay(journal, run_id).identical


# --- each callback's part ------------------------------------------------------------------


def at(session: Session, cls, t: float, **fields) -> None:
    session.emit(session.new(cls, t=t, **fields))


def request(session: Session) -> int:
    sent_at = session.position
    at(session, MessageSent, 100.0, message_id="m-001", performative="request",
       sender="orchestrator", recipient="reviewer", task_id="T1")  # fmt: skip
    return sent_at


def due(session: Session, sent_at: int, **limits) -> Due:
    return Due(session, "reviewer", "T1", "m-001", sent_at, Deadline(**limits))


def answered(session: Session, t: float) -> None:
    at(session, ModelResponded, t, agent="reviewer", text="", tool_calls=[], usage=Usage(total=1))


def test_a_deadline_taken_up_mid_stop_counts_what_the_uninterrupted_one_counts():
    session = Session(MemoryJournal(), "r-1")
    sent_at = request(session)
    answered(session, 102.0)
    at(session, RunInterrupted, 103.0, by="ann", reason="lunch")
    first = due(session, sent_at, seconds=5.0)
    kept = first.keep()  # in the middle of the stop: its start is carried
    at(session, RunResumed, 3703.0, by="ann")
    answered(session, 3704.0)
    again = due(session, sent_at, seconds=5.0)
    assert again.fits(kept)
    again.take(kept)
    assert again.elapsed() == first.elapsed() == 4.0
    assert again.check(2) is None


@pytest.mark.parametrize(
    "other",
    [
        {"request": "m-002"},
        {"sent_at": 1},
        {"limits": [3, 5.0]},
        {"scanned": "3"},
        {"paused": None},
    ],
)
def test_a_deadline_does_not_take_up_another_requests_state(other):
    session = Session(MemoryJournal(), "r-1")
    sent_at = request(session)
    answered(session, 102.0)
    kept = due(session, sent_at, seconds=5.0).keep()
    assert due(session, sent_at, seconds=5.0).fits(kept)
    assert not due(session, sent_at, seconds=5.0).fits({**kept, **other})


def test_a_mailbox_taken_up_does_not_hand_over_the_same_mail_twice():
    def office():
        post = PostOffice(Session(MemoryJournal(), "r-1"))
        post.send(Performative.REQUEST, "orchestrator", "coder", "T1", {"brief": "fix it"})
        return post

    post = office()
    box = post.mailbox("coder")
    assert [m.content.split("]")[0] for m in box()] == ["[REQUEST from orchestrator on T1, m-001"]
    kept = box.keep()
    assert kept == {"agent": "coder", "began": 1, "taken": ["m-001"]}

    resumed = office()  # the harness replayed up to the loop's start: the REQUEST is waiting
    again = resumed.mailbox("coder")
    assert again.fits(kept) and not resumed.mailbox("tester").fits(kept)
    again.take(kept)
    assert again() == [] and again.keep() == kept

    other = office()
    other.inboxes["coder"].clear()  # not the mail the snapshot's run took
    assert not other.mailbox("coder").fits(kept)


def test_a_mailbox_whose_office_sent_mail_while_the_agent_ran_keeps_nothing():
    post = PostOffice(Session(MemoryJournal(), "r-1"))
    box = post.mailbox("coder")
    post.send(Performative.INFORM, "orchestrator", "coder", "T1", {"note": "mid-run"})
    assert box.keep() is None


def test_the_registrys_ledger_is_kept_and_taken_up_whole():
    registry = WorkRegistry(Session(MemoryJournal(), "r-1"))
    registry.ledger.feed([], offset=0)
    kept = {"seen": 7, "pending": {"c-1": ["write:a.py", "coder", "T1"]},
            "done": {"write:b.py": ["tester", "T2"]}}  # fmt: skip
    assert registry.fits(kept)
    registry.take(kept)
    assert registry.ledger.state() == kept
    for bad in ({**kept, "seen": "7"}, {**kept, "done": {"k": ["only one"]}}, [], None):
        assert not Ledger.sound(bad)


# --- which loops keep snapshots --------------------------------------------------------------


def reads(**_: object) -> str:
    return "x" * 50


def drive(snapshots, **hooks):
    steps = [call("read_file", 40, path=f"f{i}.py") for i in range(6)]
    steps.append(call("done", 10, summary="read"))
    agent = loop.Agent(
        "coder",
        ScriptedClient(steps, "coder"),
        Toolbox([Tool("read_file", "Read.", schema({"path": {"type": "string"}}), reads)]),
        "You read files.",
        max_turns=10,
    )
    session = Session(MemoryJournal(), "r-1", snapshots=snapshots, snapshot_every=2)
    with contextlib.suppress(StepComplete):
        loop.run(agent, "Read.", session, Budget(10**6), **hooks)


class Unkept:
    """A deadline that keeps state but cannot say what it is right now."""

    def __call__(self, turn: int) -> None:
        return None

    def keep(self) -> None:
        return None

    def fits(self, state: object) -> bool:
        return True

    def take(self, state: object) -> None:
        pass


@pytest.mark.parametrize(
    ("hooks", "kept"),
    [
        ({}, True),
        ({"mail": lambda: []}, False),  # a plain function: its state is not the loop's to keep
        ({"deadline": Unkept()}, False),  # a Kept callback that says "not now"
    ],
)
def test_a_loop_keeps_snapshots_only_when_every_callback_keeps_its_state(hooks, kept):
    snapshots = MemorySnapshots()
    drive(snapshots, **hooks)
    assert bool(snapshots.stored) == kept
