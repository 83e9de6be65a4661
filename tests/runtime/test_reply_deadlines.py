"""A reply's deadline in turns and seconds, measured between journalled times: the clock is
the journal's, time a person held the run stopped does not count, and the record decides."""

from __future__ import annotations

import pytest

from runtime.coordination.deadlines import Deadline, Due
from runtime.events import (
    MessageSent,
    ModelResponded,
    ReplyOverdue,
    RunInterrupted,
    RunResumed,
    Usage,
)
from runtime.journal import MemoryJournal
from runtime.session import Session


def asked(session: Session, at: float) -> Due:
    sent_at = len(session.emitted)
    session.emit(
        session.new(
            MessageSent,
            t=at,
            message_id="m-001",
            performative="request",
            sender="orchestrator",
            recipient="reviewer",
            task_id="T1",
        )
    )
    return sent_at


def answered(session: Session, at: float) -> None:
    session.emit(
        session.new(
            ModelResponded, t=at, agent="reviewer", text="", tool_calls=[], usage=Usage(total=1)
        )
    )


def due(session, sent_at, **limits):
    return Due(session, "reviewer", "T1", "m-001", sent_at, Deadline(**limits))


def test_the_seconds_are_counted_between_journalled_times():
    journal = MemoryJournal()
    session = Session(journal, "r-1")
    sent_at = asked(session, 100.0)
    answered(session, 104.0)
    assert due(session, sent_at, seconds=5.0).check(1) is None
    answered(session, 106.5)
    overdue = due(session, sent_at, seconds=5.0).check(2)
    assert isinstance(overdue, ReplyOverdue)
    assert (overdue.elapsed, overdue.max_seconds, overdue.request) == (6.5, 5.0, "m-001")
    assert [r.event.kind for r in journal.read("run-r-1")][-1] == "ReplyOverdue"


def test_time_a_person_held_the_run_stopped_does_not_count():
    session = Session(MemoryJournal(), "r-1")
    sent_at = asked(session, 100.0)
    answered(session, 102.0)
    session.emit(session.new(RunInterrupted, t=103.0, by="ann", reason="lunch"))
    session.emit(session.new(RunResumed, t=3703.0, by="ann"))
    answered(session, 3704.0)
    assert due(session, sent_at, seconds=5.0).elapsed() == 4.0
    assert due(session, sent_at, seconds=5.0).check(2) is None


def test_the_turns_are_the_recipients_own():
    session = Session(MemoryJournal(), "r-1")
    sent_at = asked(session, 100.0)
    assert due(session, sent_at, turns=3).check(2) is None
    overdue = due(session, sent_at, turns=3).check(3)
    assert overdue is not None and "took 3 turns" in overdue.reason and overdue.turns == 3


def test_in_the_record_the_record_decides_and_no_clock_is_read():
    journal = MemoryJournal()
    session = Session(journal, "r-1")
    sent_at = asked(session, 100.0)
    answered(session, 101.0)
    decided = due(session, sent_at, seconds=0.5).check(1)
    recorded = [r.event for r in journal.read("run-r-1")]
    assert recorded[-1] == decided

    again = Session(MemoryJournal(), "r-1", recorded=recorded, replay=True)
    asked(again, 5_000.0)  # re-made events carry new times: the record's are the ones read
    answered(again, 9_000.0)
    assert due(again, sent_at, seconds=60.0).check(1) == decided  # the record decided

    in_time = [*recorded[:2], recorded[1].model_copy(update={"t": 101.2})]
    replay = Session(MemoryJournal(), "r-1", recorded=in_time, replay=True)
    asked(replay, 100.0)
    answered(replay, 101.0)
    assert not replay.live and due(replay, sent_at, seconds=0.5).check(1) is None


@pytest.mark.parametrize("limits", [{"turns": 0}, {"seconds": 0.0}])
def test_a_deadline_of_nothing_is_refused(limits):
    with pytest.raises(ValueError, match="deadline"):
        Deadline(**limits)
