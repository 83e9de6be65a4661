"""The wait-for graph refuses the wait that would close a cycle (the youngest), journalled as
DeadlockDetected; a journal from before it shows a cycle of open requests as a deadlock that
nothing broke."""

from __future__ import annotations

from runtime import events as ev
from runtime.diagnose import diagnose
from runtime.metrics import metrics
from tests.coordination.drills import flown, recorded, replay


def test_a_pair_holding_each_others_lease_is_broken_by_refusing_the_youngest_wait():
    run = flown("lease-pair")
    assert run.finished.status == "done"
    assert run.finished.reason.startswith("deadlock broken (youngest-wait-refused)")
    assert run.kinds() == ["LeaseAwaited", "LeaseAwaited", "DeadlockDetected", "TeamFinished"]
    [detected] = [e for e in run.events if e.kind == "DeadlockDetected"]
    assert detected.cycle == ["coder", "migrator"] and detected.refused == "migrator"
    assert [(w["waiter"], w["holder"]) for w in detected.waits] == [
        ("coder", "migrator"),
        ("migrator", "coder"),
    ]
    # the refused agent gave its lease back, and the one that waited first has it
    db = [r.event for r in run.journal.read("lease-db")]
    assert [(e.kind, e.holder) for e in db] == [
        ("LeaseGranted", "migrator"),
        ("LeaseReleased", "migrator"),
        ("LeaseGranted", "coder"),
    ]
    [found] = diagnose(run.records)
    assert found["kind"] == "deadlock" and found["refused"] == "migrator"
    assert found["summary"].startswith("deadlock broken: coder waits for migrator")
    assert metrics(run.records)["deadlock_rate"]["value"] == 0.5
    assert replay(run)


def test_a_request_that_would_close_a_cycle_is_never_sent():
    run = flown("asking-pair")
    assert run.finished.status == "done"
    requests = [e for e in run.events if e.kind == "MessageSent" and e.performative == "request"]
    assert [(e.sender, e.recipient) for e in requests] == [("planner", "tester")]
    [detected] = [e for e in run.events if e.kind == "DeadlockDetected"]
    assert detected.refused == "tester" and detected.rule == "youngest-wait-refused"
    [found] = diagnose(run.records)
    assert found["kind"] == "deadlock" and found["agents"] == ["planner", "tester"]
    assert metrics(run.records)["deadlock_rate"]["value"] == 0.5  # one of two waits
    assert replay(run)


def request(sender, recipient, task, message_id):
    return ev.MessageSent(
        performative="request",
        sender=sender,
        recipient=recipient,
        task_id=task,
        message_id=message_id,
    )


def test_a_journal_from_before_the_graph_shows_the_cycle_nothing_broke():
    records = recorded(
        [
            request("planner", "tester", "T1", "m1"),
            request("tester", "planner", "T2", "m2"),
            ev.TeamFinished(status="escalated", reason="no reply"),
        ]
    )
    [found] = diagnose(records)
    assert found["kind"] == "deadlock" and found["refused"] is None
    assert found["positions"] == [1, 2]
    assert "nothing broke the cycle" in found["summary"]
    assert metrics(records)["deadlock_rate"]["value"] == 0.5


def test_an_answered_request_is_no_longer_a_wait():
    records = recorded(
        [
            request("planner", "tester", "T1", "m1"),
            ev.MessageSent(performative="done", sender="tester", recipient="planner", task_id="T1"),
            request("tester", "planner", "T2", "m2"),
        ]
    )
    assert diagnose(records) == []
