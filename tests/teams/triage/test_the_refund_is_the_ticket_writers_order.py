"""The refund saga moves money only on an order of the customer who wrote the ticket, and one
that exists: the order's id is read from the ticket, which anyone may write. Before, a ticket
from grace naming ada's order had ada's order refunded (a label made, a credit issued), and a
ticket naming no such order ended the run with a KeyError. Over the real servers; the flight's
specialists are scripted."""

from __future__ import annotations

import sqlite3

import pytest

from runtime import flight
from runtime.events import SagaSettled
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from teams.triage.services import TriageServices
from teams.triage.surface import default_surface

pytestmark = pytest.mark.slow


def refund(tmp_path, task):
    run_id = flight.new_run_id()
    book = tmp_path / "book.sqlite3"
    journal = JsonlJournal(tmp_path / f"{run_id}.jsonl")
    config = flight.plan("support-triage", "refund-saga", run_id, task=task)
    services = Services(provided=(TriageServices(mcp=lambda: default_surface(book)),))
    outcome = flight.fly(journal, config, run_id, tmp_path, services=services)
    [settled] = [r.event for r in journal.read_all() if isinstance(r.event, SagaSettled)]
    made = (
        sqlite3.connect(book).execute("SELECT kind FROM operation").fetchall()
        if (book.exists())
        else []
    )
    return outcome, settled, [kind for (kind,) in made]


def test_a_ticket_from_one_customer_does_not_refund_anothers_order(tmp_path):
    outcome, settled, made = refund(
        tmp_path, "From grace@example.com: my kettle from order A1001 broke. Refund it please."
    )
    assert made == []  # no label, no credit on ada's order
    assert settled.completed == [] and settled.failed_step == "label"
    assert "order A1001 is ada@example.com's, not grace@example.com's" in settled.error
    assert outcome.status == "done"  # the specialists' answer stands; the refund says why not


def test_a_ticket_naming_no_customer_refunds_nothing(tmp_path):
    _, settled, made = refund(tmp_path, "Order A1001 broke. Refund it please.")
    assert made == []
    assert "the ticket names no customer" in settled.error


def test_a_ticket_naming_an_order_that_does_not_exist_refunds_nothing(tmp_path):
    _, settled, made = refund(tmp_path, "From grace@example.com: refund order Z9999.")
    assert made == []
    assert "no order with id Z9999" in settled.error and "'s, not" not in settled.error
