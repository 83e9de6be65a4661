"""The refund saga moves money only on evidence found in the record, each piece checked at the
mutation gate as the order's owner is: the ticket names one order, the order was delivered, the
ticket came within its 14-day return window (judged on the run's day, not the machine's), and
the policy specialist gave its verdict. Before, any ticket naming an order had it refunded in
full when `refund` was on: a still-processing order, one delivered months before, one the
policy specialist had no word on, and in "not B2001 but B2002" the first order named. Over the
real servers; the flight's specialists are scripted. A refusal reaches the customer's answer."""

from __future__ import annotations

import sqlite3

import pytest

from runtime import flight
from runtime.events import AnswerComposed, SagaSettled, TeamStarted, ToolReturned
from runtime.fanout.contracts import Finding, Report
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from teams.triage import eligible
from teams.triage.plan import handoffs
from teams.triage.services import TriageServices
from teams.triage.surface import default_surface

GRACE = "From grace@example.com: "


def refund(tmp_path, task, scenario="refund-saga", **settings):
    run_id = flight.new_run_id()
    book = tmp_path / "book.sqlite3"
    journal = JsonlJournal(tmp_path / f"{run_id}.jsonl")
    config = flight.plan("support-triage", scenario, run_id, task=task, **settings)
    services = Services(provided=(TriageServices(mcp=lambda: default_surface(book)),))
    flight.fly(journal, config, run_id, tmp_path, services=services)
    events = [r.event for r in journal.read_all()]
    [settled] = [e for e in events if isinstance(e, SagaSettled)]
    [answer] = [e for e in events if isinstance(e, AnswerComposed)]
    made = sqlite3.connect(book).execute("SELECT kind FROM operation") if book.exists() else []
    return settled, answer.text, [kind for (kind,) in made], events


def refused(settled, answer, made, why):
    assert made == []  # no label, no credit, nothing to undo
    assert settled.completed == [] and settled.failed_step == "label"
    assert why in settled.error
    assert why in answer  # the customer is told why nothing was refunded


@pytest.mark.slow
def test_an_order_still_processing_is_not_refunded(tmp_path):
    settled, answer, made, _ = refund(
        tmp_path, GRACE + "cancel my office chair, order B2002, and give me my money back."
    )
    refused(settled, answer, made, "order B2002 is processing, not delivered")
    assert "order B2002 has no delivery date in the orders book" in settled.error


@pytest.mark.slow
def test_an_order_past_its_return_window_is_not_refunded(tmp_path):
    settled, answer, made, _ = refund(
        tmp_path,
        GRACE + "the desk lamp from order B2001 has a cracked shade. Refund it.",
        received_on="2025-05-10",
    )
    why = (
        "order B2001 was delivered on 2025-04-18: its return window closed on 2025-05-02, "
        "the ticket came on 2025-05-10"
    )
    refused(settled, answer, made, why)


@pytest.mark.slow
def test_the_window_is_judged_on_the_day_the_run_started_by_its_journal(tmp_path):
    # No day set: the run's own (its TeamStarted's), which a resume and a replay read alike.
    settled, answer, made, events = refund(
        tmp_path, GRACE + "order B2001's lamp is cracked. Refund it.", "broken-policy", refund=True
    )
    [started] = [e for e in events if isinstance(e, TeamStarted)]
    refused(settled, answer, made, f"the ticket came on {eligible.day_of(started.t)}")


@pytest.mark.slow
def test_a_ticket_naming_two_orders_refunds_neither_and_asks_which(tmp_path):
    settled, answer, made, _ = refund(
        tmp_path, GRACE + "not B2001 but B2002 is the one I want refunded."
    )
    refused(
        settled,
        answer,
        made,
        "the ticket names 2 orders (B2001, B2002): the customer is asked which one",
    )
    assert "looked up" not in settled.error  # neither was looked up nor refunded


@pytest.mark.slow
def test_no_verdict_from_the_policy_specialist_moves_no_money(tmp_path):
    # The liar reports ok on calls that failed: its findings are dropped, and with them any
    # word on the refund; nothing falls back on the cached rules.
    settled, answer, made, _ = refund(
        tmp_path,
        GRACE + "the desk lamp from order B2001 has a cracked shade. Refund it.",
        "liar",
        refund=True,
        received_on="2025-04-25",
    )
    refused(settled, answer, made, "the policy specialist gave no verdict on refunding order B2001")


# --- the verdict, read from the policy service's answer the specialist cited ----------------

POLICY = next(h for _, h in handoffs(GRACE + "B2001", 8, 1000, 60.0) if "policy" in h.worker_id)


def answered(result, tool="policy.check_refund_policy"):
    finding = Finding(
        claim="Refunding B2001 is within policy.", source_call_id="c1", source_tool=tool
    )
    report = Report(worker_id=POLICY.worker_id, status="ok", findings=[finding])
    returned = ToolReturned(tool=tool, call_id="c1", result=result, agent=POLICY.worker_id)
    return eligible.policy_verdict("B2001", POLICY, (report, None, None), [returned])


def test_the_policy_services_yes_for_the_order_is_a_verdict():
    assert answered({"order_id": "B2001", "eligible": True}).holds
    assert answered('{"order_id": "B2001", "eligible": true}').holds  # as JSON text


def test_the_policy_services_no_is_refused_with_its_reason():
    found = answered({"order_id": "B2001", "eligible": False, "why": "reported after 14 days"})
    assert not found.holds
    assert found.why == "the policy service found order B2001 not eligible: reported after 14 days"


def test_a_yes_for_another_order_or_from_another_tool_is_no_verdict():
    assert not answered({"order_id": "B2002", "eligible": True}).holds
    assert not answered({"order_id": "B2001", "eligible": True}, tool="policy.policy_for").holds
