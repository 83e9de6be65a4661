"""The desk's verdict reads what became of each refund from its typed status, never from the
wording of the problems the harness wrote down."""

from __future__ import annotations

from runtime.events import DeskChecked, FactReconciled
from runtime.loop import AgentResult
from teams.desk.harness import verdict

DONE = {"order-agent": AgentResult("done", 2), "support-agent": AgentResult("done", 3)}
DECIDED = FactReconciled(subject="order:o-1", predicate="status", status="decided", rule="")
ORDER = {"order_id": "o-1", "status": "refunded", "version": 2}


def checked(effects, problems) -> DeskChecked:
    return DeskChecked(
        order=ORDER,
        refund_calls=1,
        effects=effects,
        provider_refunds=[],
        refunded_cents=0,
        problems=problems,
    )


def test_a_refund_still_in_flight_escalates_whatever_the_problem_says():
    check = checked([{"key": "fx-1", "status": "in flight"}], ["refund fx-1: no answer yet"])
    assert verdict(DONE, DECIDED, check)[0] == "escalated"


def test_a_problem_that_merely_mentions_in_flight_is_a_failure():
    check = checked(
        [{"key": "fx-1", "status": "succeeded"}],
        ["refunded 9998 cents on an order of 4999 (the second was in flight elsewhere)"],
    )
    status, reason = verdict(DONE, DECIDED, check)
    assert status == "failed" and "9998 cents" in reason
