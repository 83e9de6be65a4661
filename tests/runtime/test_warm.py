"""Warm flights: a run driven step after step on one parked thread writes what one session
writes, and a flight that is dropped writes nothing and leaves the run to a cold replay."""

from __future__ import annotations

import threading

import pytest

from runtime import flight
from runtime import session as session_module
from runtime.events import MessageSent
from runtime.journal import MemoryJournal
from runtime.session import Session
from runtime.warm import WarmFlight, WarmFlights
from tests.runtime.helpers import facts

pytestmark = pytest.mark.slow


def warm_flight(journal, config, run_id, root, on_exit=None):
    recorded = [r.event for r in journal.read(f"run-{run_id}")]
    session = Session(journal, run_id, recorded=recorded)
    return WarmFlight(session, lambda s: flight.drive(s, config, root), on_exit=on_exit)


def events_of(journal, run_id):
    return [r.event for r in journal.read(f"run-{run_id}")]


def test_a_warm_flight_stepped_one_turn_at_a_time_writes_the_journal_of_one_session(
    tmp_path, fly_team
):
    reference = fly_team("first-flight")
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", reference.run_id)
    warm = warm_flight(journal, config, reference.run_id, tmp_path)
    outcomes = []
    while not outcomes or outcomes[-1] == "stepped":
        before = journal.version(f"run-{reference.run_id}")
        outcomes.append(warm.step(1, None).status)
        # parked between steps: nothing is written while it waits
        assert (
            outcomes[-1] != "stepped"
            or warm.version == journal.version(f"run-{reference.run_id}") > before
        )
    assert outcomes[-1] == "done"
    assert len(outcomes) == reference.kinds().count("ModelCalled")  # one live turn a step
    assert facts(events_of(journal, reference.run_id)) == facts(reference.events)


def test_a_dropped_flight_writes_nothing_and_a_cold_session_finishes_the_run_the_same(
    tmp_path, fly_team
):
    reference = fly_team("first-flight")
    run_id = reference.run_id
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", run_id)
    exited = threading.Event()
    warm = warm_flight(journal, config, run_id, tmp_path, on_exit=exited.set)
    for _ in range(3):
        assert warm.step(1, None).status == "stepped"
    version = journal.version(f"run-{run_id}")
    warm.abandon()
    assert exited.is_set() and not warm.parked  # its thread has ended
    assert journal.version(f"run-{run_id}") == version  # unwinding wrote nothing
    cold = flight.drive(Session(journal, run_id), config, tmp_path)
    assert cold.status == "done"
    assert facts(events_of(journal, run_id)) == facts(reference.events)


def test_a_parked_flight_is_not_taken_once_someone_else_wrote_to_the_run(tmp_path):
    journal = MemoryJournal()
    run_id = "r-moved"
    config = flight.plan("repo-fix", "first-flight", run_id)
    flights = WarmFlights()
    warm = warm_flight(journal, config, run_id, tmp_path)
    assert warm.step(1, None).status == "stepped"
    flights.keep(warm)
    stream = f"run-{run_id}"
    assert flights.take(run_id, journal.version(stream) + 1) is None  # not where it left it
    assert not warm.parked and len(flights) == 0  # dropped, its thread unwound
    flights.keep(second := warm_flight(journal, config, run_id, tmp_path))  # a new, unstarted one
    assert flights.take(run_id, journal.version(stream)) is None  # never started: not parked
    assert second.version == journal.version(stream)


def test_a_process_keeps_a_bounded_number_of_parked_flights(tmp_path):
    journal = MemoryJournal()
    flights = WarmFlights(size=2)
    parked = []
    for i in range(3):
        run_id = f"r-many-{i}"
        warm = warm_flight(
            journal, flight.plan("repo-fix", "first-flight", run_id), run_id, tmp_path
        )
        assert warm.step(1, None).status == "stepped"
        flights.keep(warm)
        parked.append(warm)
    assert len(flights) == 2 and not parked[0].parked  # the least recently used was dropped
    assert flights.take("r-many-2", parked[2].version) is parked[2]


def test_what_a_flight_raises_reaches_the_caller_of_its_step(tmp_path):
    journal = MemoryJournal()
    run_id = "r-raises"
    config = flight.plan("repo-fix", "first-flight", run_id)
    warm = warm_flight(journal, config, run_id, tmp_path)
    assert warm.step(1, None).status == "stepped"
    stream = f"run-{run_id}"
    # Someone writes behind the flight's back: its next append finds the wrong version.
    journal.append(
        stream,
        [MessageSent(run_id=run_id, sender="x", recipient="y", performative="INFORM")],
        journal.version(stream),
    )
    with pytest.raises(Exception, match="version"):
        warm.step(1, None)


def test_a_parked_flight_lets_go_of_old_events_and_reads_them_back_when_asked(
    tmp_path, fly_team, monkeypatch
):
    # Where a flight parks it keeps only the newest KEEP events (Session.trim); the run it
    # writes is the same, and a look at the events it let go of reads them back.
    monkeypatch.setattr(session_module, "KEEP", 6)
    reference = fly_team("first-flight")
    run_id = reference.run_id
    journal = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", run_id)
    warm = warm_flight(journal, config, run_id, tmp_path)
    outcomes, resident = [], []
    while not outcomes or outcomes[-1] == "stepped":
        outcomes.append(warm.step(1, None).status)
        if outcomes[-1] == "stepped":
            resident.append((warm.session.record.resident, warm.session.position))
            looked = warm.session.record.stored(1)  # the run's first event, let go of long ago
            assert looked.same_as(events_of(journal, run_id)[0])
            warm.session.trim()  # and let go of again (the flight trims where it parks)
    assert outcomes[-1] == "done"
    assert facts(events_of(journal, run_id)) == facts(reference.events)
    assert all(held <= 6 for held, _ in resident)
    assert max(position for _, position in resident) > 60  # it held a tenth of the run, or less
