"""Livelock: a fact flipping back and forth is stopped by the harness's watch
(LivelockDetected); tasks reopened and conflicts met again show as livelock in journals from
before the watch, and count in livelock_rate."""

from __future__ import annotations

from runtime import events as ev
from runtime.diagnose import diagnose
from runtime.metrics import metrics
from tests.coordination.drills import flown, recorded, replay


def test_two_agents_flipping_a_fact_are_stopped_by_the_watch():
    run = flown("flip-flop")
    assert run.finished.status == "escalated"
    assert run.kinds() == ["LivelockDetected", "TeamFinished"]
    [detected] = [e for e in run.events if e.kind == "LivelockDetected"]
    [signal] = detected.signals
    assert (signal["signal"], signal["key"], signal["count"]) == (
        "oscillating",
        "oscillating:order:B2001.status",
        2,
    )
    # stopped at the fourth write: A, B, A (back once), B (back twice)
    changes = [r.event.value for r in run.journal.read("subject-order:B2001")]
    assert changes == ["refund_pending", "closed", "refund_pending", "closed"]
    [found] = diagnose(run.records)
    assert found["kind"] == "livelock" and found["signal"] == "oscillating"
    assert "the harness stopped it" in found["summary"]
    assert metrics(run.records)["livelock_rate"]["value"] == 1.0
    assert replay(run)


def test_a_task_reopened_again_and_again_is_a_livelock_in_an_old_journal():
    def request():
        return ev.MessageSent(
            performative="request", sender="orchestrator", recipient="coder", task_id="T1"
        )

    def integrated():
        return ev.Integrated(
            task_id="T1", branch="candidate/T1", commit="c", approval="m", approved_by="reviewer"
        )

    records = recorded([request(), integrated(), request(), integrated(), request()])
    [found] = diagnose(records)
    assert found["kind"] == "livelock" and found["signal"] == "reopened"
    assert found["about"] == "T1" and found["positions"] == [3, 5]
    rate = metrics(records)["livelock_rate"]
    assert (rate["value"], rate["livelocked"]) == (1.0, 1)


def test_the_same_conflict_met_a_third_time_is_a_livelock_and_a_second_is_not():
    def parked(n):
        return ev.ConflictParked(
            conflict_id=f"k{n}",
            subject="order:B2001",
            predicate="status",
            conflict_type="state",
            claims=[],
        )

    assert diagnose(recorded([parked(1), parked(2)])) == []
    [found] = diagnose(recorded([parked(1), parked(2), parked(3)]))
    assert found["kind"] == "livelock" and found["signal"] == "conflict"
    assert found["about"] == "parked:order:B2001.status"
