"""The audit holds a run's money steps: the desk's refund with its amount, the agent who decided
it and the provider's ledger entry; the refund saga's steps with their amounts and the
reversals that undid them."""

from __future__ import annotations

from runtime import views
from runtime.jsonl import JsonlJournal


def every_stream(flown):
    return JsonlJournal(flown.path).read_all()


def test_the_desks_refund_is_one_audit_entry_with_its_amount_who_decided_and_the_ledger(
    fly_team,
):
    flown = fly_team("double-refund", team="support-desk")
    entries = views.audit(every_stream(flown))
    refunds = [a for a in entries if a["what"] == "refund"]
    # Two refund calls (the second a retry after a timeout), one effect: one money step.
    assert len(refunds) == 1
    [refund] = refunds
    assert refund["who"] == "support-agent"
    assert refund["task_id"] == "T2"
    assert refund["why"] == "arrived broken"
    effect = refund["effect"]
    assert effect["amount_cents"] == 4999
    assert effect["outcome"] == "succeeded"
    assert effect["target"] == f"order:o-{flown.run_id.removeprefix('r-')}"
    assert effect["tool"] == "issue_refund"
    assert effect["call"] == "support-agent-2-1"
    assert effect["ledger"] == {"refund_id": effect["ledger"]["refund_id"]}
    assert effect["ledger"]["refund_id"].startswith("rf-")
    assert effect["settled"] > effect["started"] == refund["position"]


def test_a_refund_still_in_flight_is_audited_as_such(fly_team):
    flown = fly_team("double-refund", team="support-desk")
    records = every_stream(flown)
    settled = next(i for i, r in enumerate(records) if r.event.kind == "EffectSucceeded")
    [refund] = [a for a in views.audit(records[:settled]) if a["what"] == "refund"]
    assert refund["effect"]["outcome"] == "in flight"
    assert "ledger" not in refund["effect"]


def test_the_sagas_money_steps_and_their_reversals_carry_amounts_and_ledger_entries(fly_team):
    flown = fly_team("refund-saga", team="support-triage")
    entries = views.audit(every_stream(flown))
    done = {a["step"]: a for a in entries if a["what"] == "SagaStepCompleted"}
    undone = {a["step"]: a for a in entries if a["what"] == "SagaCompensated"}
    assert done["credit"]["amount_cents"] == 3900
    assert done["credit"]["ledger"]["credit_id"].startswith("CR-B2001")
    assert done["label"]["ledger"]["label_id"].startswith("RL-B2001")
    assert undone["credit"]["ledger"] == {"reversed": done["credit"]["ledger"]["credit_id"]}
    assert undone["label"]["ledger"] == {"voided": done["label"]["ledger"]["label_id"]}
    # The saga's effects are its steps: not audited a second time as bare effects.
    assert not [a for a in entries if "effect" in a]


def test_an_old_journals_tool_calls_without_ids_fold_into_the_audit_without_a_money_step():
    from runtime.events import ToolDispatched, ToolReturned
    from runtime.journal import Recorded

    returned = ToolReturned(run_id="r-old", agent="coder", tool="run_tests", attempt=1)
    records = [
        Recorded("run-r-old", 1, 1, returned),  # a result with no dispatch before it
        Recorded("run-r-old", 2, 2, ToolDispatched(run_id="r-old", agent="coder", tool="t")),
        Recorded("run-r-old", 3, 3, returned),
        Recorded("run-r-old", 4, 4, returned),
    ]
    assert views.audit(records) == []
