"""The desk's rounds call the livelock watch: two agents writing the order's status back and
forth (each write a proper compare-and-swap) trip it, the run journals LivelockDetected with
its reason and stops, escalated, before a third round."""

from __future__ import annotations

from runtime import flight
from runtime.diagnose import diagnose
from runtime.events import FactChanged, LivelockDetected, TaskEscalated, ToolReturned
from runtime.jsonl import JsonlJournal
from tests.teams.desk.test_desk import order_id_of


def test_a_status_flipped_back_and_forth_trips_the_livelock_watch(fly_team):
    flown = fly_team("flip-flop", team="support-desk")
    journal = JsonlJournal(flown.path)
    run = [r.event for r in journal.read(f"run-{flown.run_id}")]
    writes = [e for e in run if isinstance(e, ToolReturned) and e.tool == "set_order_status"]
    assert [w.error for w in writes] == [None] * 4  # every write a won compare-and-swap
    order = f"order:{order_id_of(flown.run_id)}"
    changes = [r.event for r in journal.read(f"subject-{order}")]
    assert [e.value for e in changes if isinstance(e, FactChanged) and e.predicate == "status"] == [
        "shipped",
        "cancelled",
        "shipped",
        "cancelled",
    ]
    [stopped] = [e for e in run if isinstance(e, LivelockDetected)]
    [signal] = stopped.signals
    assert (signal["signal"], signal["key"], signal["count"]) == (
        "oscillating",
        f"oscillating:{order}.status",
        2,
    )
    # it stopped there: the watch's event, the escalation and the verdict end the run
    assert [e.kind for e in run[-3:]] == ["LivelockDetected", "TaskEscalated", "TeamFinished"]
    [escalated] = [e for e in run if isinstance(e, TaskEscalated)]
    assert escalated.reason == f"LIVELOCK: {stopped.reason}"
    assert flown.outcome.status == "escalated"
    assert flown.outcome.reason.startswith(f"LIVELOCK: {order}.status went back to")
    [found] = diagnose(flight.run_records(journal, flown.run_id))
    assert found["kind"] == "livelock" and "the harness stopped it" in found["summary"]
    assert flight.replay(journal, flown.run_id).identical
