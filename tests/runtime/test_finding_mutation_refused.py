"""diagnose finds the work the mutation gate refused, in journals written with the gate
(MutationRefused) and before it (StaleWorkRejected); a merge refused after a REJECT is the
review protocol at work, not a finding."""

from __future__ import annotations

from runtime import events as ev
from runtime.diagnose import diagnose
from runtime.journal import Recorded


def records(*events):
    return [Recorded("run-r-1", i, i, e) for i, e in enumerate(events, start=1)]


def refused(check, capability="refund", actor="support-agent"):
    return ev.MutationRefused(
        run_id="r-1",
        what=f"{actor} refunding 4999 cents on o-1",
        actor=actor,
        capability=capability,
        check=check,
        held=1,
        current=2,
        reason=f"refused: {check}",
    )


def test_each_refusal_is_found_once_per_actor_capability_and_check():
    found = diagnose(records(refused("intent"), refused("intent"), refused("authority")))
    assert [(f["kind"], f["check"], f["positions"]) for f in found] == [
        ("mutation_refused", "intent", [1, 2]),
        ("mutation_refused", "authority", [3]),
    ]
    assert found[0]["summary"] == (
        "the mutation gate refused support-agent refunding 4999 cents on o-1 (intent) "
        "(2 times): refused: intent"
    )


def test_a_merge_refused_for_want_of_an_accept_is_not_a_finding():
    assert diagnose(records(refused("evidence", "integrate", "coder"))) == []
    [found] = diagnose(records(refused("intent", "integrate", "coder")))
    assert found["check"] == "intent"


def test_stale_work_in_a_journal_from_before_the_gate_is_found_too():
    old = ev.StaleWorkRejected(
        run_id="r-1",
        what="support-agent refunding 4999 cents on o-1",
        gate="intent",
        held=1,
        current=2,
        reason="decided under version 1 of intent ticket-o-1",
    )
    [found] = diagnose(records(old))
    assert (found["kind"], found["check"]) == ("mutation_refused", "intent")
    assert "support-agent refunding 4999 cents on o-1" in found["summary"]
