"""Commitments have one owner, who acknowledges, releases or hands them on; a lost lease moves
them to the lease's new holder; one left open at the finish is an orphan, and so is a request
an agent took up and dropped in a journal that keeps no commitments."""

from __future__ import annotations

import pytest

from runtime import events as ev
from runtime.coordination.commitments import CommitmentRefused, Commitments
from runtime.diagnose import diagnose
from runtime.journal import MemoryJournal
from runtime.metrics import metrics
from runtime.session import Session
from tests.coordination.drills import flown, recorded, replay


def test_a_commitment_forgotten_by_its_owner_stops_the_run_finishing_and_is_an_orphan():
    run = flown("forgetful-owner")
    assert run.finished.status == "escalated"
    assert "c-refund (refunds-agent: refund B2001 or say why not)" in run.finished.reason
    assert run.kinds() == [
        "CommitmentMade",
        "CommitmentAcknowledged",
        "MessageSent",
        "TeamFinished",
    ]
    [found] = diagnose(run.records)
    assert found["kind"] == "orphaned_commitment" and found["commitment"] == "c-refund"
    assert found["agents"] == ["refunds-agent"] and "still open" in found["summary"]
    assert metrics(run.records)["commitment_orphan_rate"]["value"] == 1.0
    assert replay(run)


def test_a_lost_lease_moves_the_commitment_to_the_new_holder_who_releases_it():
    run = flown("stalled-owner")
    assert run.finished.status == "done"
    [moved] = [e for e in run.events if e.kind == "CommitmentTransferred"]
    assert (moved.from_owner, moved.to_owner, moved.lease, moved.epoch) == (
        "orders-agent",
        "support-agent",
        "order:B2001",
        2,
    )
    assert "orders-agent lost the lease on order:B2001" in moved.reason
    [released] = [e for e in run.events if e.kind == "CommitmentReleased"]
    assert (released.by, released.outcome) == ("support-agent", "fulfilled")
    assert diagnose(run.records) == []
    assert metrics(run.records)["commitment_orphan_rate"]["value"] == 0.0
    assert replay(run)


def test_only_the_owner_may_act_on_a_commitment_and_a_refusal_writes_nothing():
    journal = MemoryJournal()
    session = Session(journal, "r-1")
    ledger = Commitments(session)
    ledger.make("c-1", "orders-agent", "refund B2001")
    written = journal.version("run-r-1")
    with pytest.raises(CommitmentRefused, match="support-agent does not own commitment c-1"):
        ledger.release("c-1", "support-agent")
    with pytest.raises(CommitmentRefused, match="no commitment c-9"):
        ledger.acknowledge("c-9", "orders-agent")
    ledger.transfer("c-1", "orders-agent", "support-agent", "going off shift")
    with pytest.raises(CommitmentRefused, match="orders-agent does not own"):
        ledger.release("c-1", "orders-agent")  # handed on: no longer its to release
    assert journal.version("run-r-1") == written + 1  # the transfer, and nothing refused


def test_a_transfer_never_acknowledged_is_named_in_the_orphan_finding():
    session = Session(MemoryJournal(), "r-1")
    ledger = Commitments(session)
    ledger.make("c-1", "orders-agent", "refund B2001")
    ledger.transfer("c-1", "orders-agent", "support-agent", "going off shift")
    session.emit(session.new(ev.TeamFinished, status="done"))
    [found] = diagnose(session.journal.read_all())
    assert found["agents"] == ["support-agent"]
    assert "handed on by orders-agent, never acknowledged" in found["summary"]


def test_a_journal_without_commitments_shows_a_request_taken_up_and_dropped():
    # written before commitments: the coder took the request up, its model failed, and the
    # run was finished with nobody given the task back
    records = recorded(
        [
            ev.MessageSent(
                performative="request", sender="orchestrator", recipient="coder", task_id="T1"
            ),
            ev.RunStarted(agent="coder", task_id="T1", task="fix it"),
            ev.ModelFailed(agent="coder", task_id="T1", error={"type": "X", "message": "down"}),
            ev.TeamFinished(status="done", reason="shipped"),
        ]
    )
    [found] = diagnose(records)
    assert found["kind"] == "orphaned_commitment" and found["agents"] == ["coder"]
    assert found["positions"] == [1, 2, 4]
    orphans = metrics(records)["commitment_orphan_rate"]
    assert (orphans["value"], orphans["counted"]) == (1.0, "requests taken up")
