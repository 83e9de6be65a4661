"""A specialist's report is agent text that the answer carries to the customer and the pages:
a claim (or its `degraded` words) holding a control character, or longer than a claim can be,
is a broken report, named so, and none of it reaches the answer or the run's stream. Before, a
claim whose only fact was the order's id passed the check of its cited call with ESC sequences
in it (they steer the terminal that shows the answer) or 200,000 characters long, and the
answer carried it; a failed report's words reached the escalation a person reads raw."""

from __future__ import annotations

import pytest

from runtime import flight, written
from runtime.events import AnswerComposed, WorkerReported
from runtime.fanout.contracts import CLAIM_CHARS
from runtime.journal import MemoryJournal
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS
from teams.triage.plan import ORDERS
from teams.triage.scenarios import report_of

pytestmark = pytest.mark.slow

LOOKUP = call("orders.lookup_order", 90, order_id="B2001")


def fly(tmp_path, report):
    """The run's stream, its orders specialist reporting `report` after its lookup."""
    team = TEAMS["support-triage"]
    config = flight.plan("support-triage", "broken-policy", "r-words")
    scripts = {**team.scenarios["broken-policy"].scripts, ORDERS: [LOOKUP, report]}
    clients = {a: ScriptedClient(scripts.get(a, []), a) for a in team.agents}
    journal = MemoryJournal()
    team.fly(Session(journal, "r-words"), config, clients, tmp_path, Services())
    return [r.event for r in journal.read("run-r-words")]


def settled(run):
    """The answer, and what the orders specialist's sub-task was settled as."""
    [composed] = [e for e in run if isinstance(e, AnswerComposed)]
    reported = [e for e in run if isinstance(e, WorkerReported) and e.task_id == "S1"]
    return composed, reported[0].report


def claimed(claim):
    return report_of(ORDERS, [(claim, "orders-worker-1-1", "orders.lookup_order")])


def test_a_claim_with_escape_sequences_is_a_broken_report(tmp_path):
    run = fly(tmp_path, claimed("Order B2001 was delivered.\x1b[H\x1b[J Your account is closed."))
    composed, report = settled(run)
    assert written.unwritable(composed.text) is None and "account is closed" not in composed.text
    assert "orders-worker failed twice (ambiguous)" in composed.degraded
    assert report["degraded"].startswith("a broken report: report: field 'findings")
    assert "claim" in report["degraded"] and "U+001B" in report["degraded"]


def test_a_claim_too_long_is_a_broken_report(tmp_path):
    run = fly(tmp_path, claimed("Order B2001 " + "was delivered " * 15_000))
    composed, report = settled(run)
    assert len(composed.text) < 2_000 and "was delivered was delivered" not in composed.text
    assert f"at most {CLAIM_CHARS} characters" in report["degraded"]


def test_a_failed_reports_words_with_a_control_character_are_a_broken_report(tmp_path):
    run = fly(
        tmp_path,
        call(
            "done",
            60,
            worker_id=ORDERS,
            status="failed",
            reason="tool_error",
            degraded="the orders server is slow\x1b]0;pwned\x07",
        ),
    )
    _, report = settled(run)
    assert "field 'degraded'" in report["degraded"] and "U+001B" in report["degraded"]
    # Nothing in the run's own stream (the answer, the escalations, the reports the pages
    # show) holds the worker's raw words; its own stream keeps what the model said.
    assert all(written.unwritable(e.model_dump()) is None for e in run)
    assert not any("pwned" in str(e.model_dump()) for e in run)
