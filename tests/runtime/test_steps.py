"""Runs driven one step at a time (as Celery workers drive them), hard ceilings, and work
parked in the dead-letter queue until a person decides."""

from __future__ import annotations

import time

import pytest

from runtime import flight
from runtime.events import DeadLetterDiscarded, DeadLetterRetried
from runtime.journal import MemoryJournal
from runtime.session import Session
from tests.runtime.helpers import facts

pytestmark = pytest.mark.slow


def step_through(journal, config, run_id, root, limit=200, **slice_):
    """Drive the run one live turn per session (or as `slice_` says) until it stops stepping."""
    outcomes = []
    for _ in range(limit):
        session = Session(journal, run_id, **(slice_ or {"steps": 1}))
        outcome = flight.drive(session, config, root)
        outcomes.append(outcome.status)
        if outcome.status != "stepped":
            return outcomes
    raise AssertionError("the run never finished")


def test_a_run_driven_one_turn_per_session_ends_with_the_journal_of_a_single_flight(
    tmp_path, fly_team
):
    reference = fly_team("first-flight")
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", reference.run_id)
    outcomes = step_through(journal, config, reference.run_id, tmp_path)
    assert outcomes[-1] == "done" and set(outcomes[:-1]) == {"stepped"}
    assert len(outcomes) == reference.kinds().count("ModelCalled")  # one turn per session
    assert facts([r.event for r in journal.read(f"run-{reference.run_id}")]) == facts(
        reference.events
    )


def test_sessions_of_several_turns_write_the_journal_of_a_single_flight(tmp_path, fly_team):
    reference = fly_team("first-flight")
    turns = reference.kinds().count("ModelCalled")
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", reference.run_id)
    outcomes = step_through(journal, config, reference.run_id, tmp_path, steps=3)
    assert outcomes[-1] == "done" and len(outcomes) == -(-turns // 3)  # three turns a session
    assert facts([r.event for r in journal.read(f"run-{reference.run_id}")]) == facts(
        reference.events
    )


def test_a_session_past_its_time_slice_still_starts_one_turn_and_then_stops(tmp_path, fly_team):
    reference = fly_team("first-flight")
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", reference.run_id)
    spent = step_through(journal, config, reference.run_id, tmp_path, until=time.monotonic() - 1)
    assert len(spent) == reference.kinds().count("ModelCalled")  # never zero turns: it ends
    assert facts([r.event for r in journal.read(f"run-{reference.run_id}")]) == facts(
        reference.events
    )


def test_a_wall_clock_ceiling_halts_the_run_with_its_reason(tmp_path):
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", "r-clock", max_seconds=0.001)
    outcome = flight.fly(journal, config, "r-clock", tmp_path)
    assert outcome.status == "halted" and "seconds ceiling" in outcome.reason
    events = [r.event for r in journal.read("run-r-clock")]
    assert [e.kind for e in events][-2:] == ["CeilingReached", "TeamFinished"]
    assert flight.replay(journal, "r-clock").identical  # the breach replays from the journal


def test_a_turn_ceiling_counts_every_agents_model_calls(tmp_path):
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", "r-turns", max_run_turns=3)
    outcome = flight.fly(journal, config, "r-turns", tmp_path)
    events = [r.event for r in journal.read("run-r-turns")]
    assert outcome.status == "halted" and [e.kind for e in events].count("ModelCalled") == 3
    ceiling = next(e for e in events if e.kind == "CeilingReached")
    assert (ceiling.ceiling, ceiling.limit, ceiling.value) == ("turns", 3, 3)


def parked_run(tmp_path, run_id):
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "silent-dropout", run_id, park=True)
    outcome = flight.fly(journal, config, run_id, tmp_path)
    return journal, config, outcome


def test_an_escalation_waits_in_the_dead_letter_queue_and_resuming_changes_nothing(tmp_path):
    journal, config, outcome = parked_run(tmp_path, "r-park")
    assert outcome.status == "dead-lettered"
    events = [r.event for r in journal.read("run-r-park")]
    letter = events[-1]
    assert letter.kind == "DeadLettered" and letter.letter_id == "r-park:1"
    assert "reviewer did not reply" in letter.reason and letter.attempts == 2
    again = flight.drive(Session(journal, "r-park"), config, tmp_path)
    assert again.status == "dead-lettered" and journal.version("run-r-park") == len(events)


def test_a_discarded_letter_finishes_the_run_escalated(tmp_path):
    journal, config, _ = parked_run(tmp_path, "r-discard")
    version = journal.version("run-r-discard")
    journal.append(
        "run-r-discard",
        [
            DeadLetterDiscarded(
                run_id="r-discard", letter_id="r-discard:1", by="ann", reason="reviewer retired"
            )
        ],
        version,
    )
    outcome = flight.drive(Session(journal, "r-discard"), config, tmp_path)
    assert outcome.status == "escalated" and "discarded" in outcome.reason
    assert flight.replay(journal, "r-discard").identical


def test_a_retried_letter_asks_again(tmp_path):
    journal, config, _ = parked_run(tmp_path, "r-retry")
    version = journal.version("run-r-retry")
    journal.append(
        "run-r-retry",
        [
            DeadLetterRetried(
                run_id="r-retry", letter_id="r-retry:1", by="ann", reason="reviewer is back"
            )
        ],
        version,
    )
    outcome = flight.drive(Session(journal, "r-retry"), config, tmp_path)
    events = [r.event for r in journal.read("run-r-retry")]
    kinds = [e.kind for e in events]
    # two more requests to the (still absent) reviewer, then a second letter
    assert kinds.count("DeadLettered") == 2 and outcome.status == "dead-lettered"
    assert events[-1].letter_id == "r-retry:2"
    assert sum(1 for e in events if e.kind == "MessageSent" and e.recipient == "reviewer") == 4
