"""Two runs on one order, sharing the orders server's book as the workers do: while the first
run's credit stands (its driver died after the server issued it), the second run's saga is
refused its credit by the book, turns back and voids its label; the first, resumed, goes on as
it would have. Before, the second run's key was its own and the order was credited twice."""

from __future__ import annotations

import sqlite3

import pytest

from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.events import SagaSettled
from tests.teams.triage.test_a_saga_step_killed_before_its_outcome import Killed, fly, resume

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def settled(journal, run_id):
    [saga] = [r.event for r in journal.read(f"run-{run_id}") if isinstance(r.event, SagaSettled)]
    return saga


def test_a_second_run_on_an_order_whose_credit_stands_is_refused_its_credit(tmp_path):
    journal = DjangoJournal()
    book = tmp_path / "shared-book.sqlite3"
    first = flight.new_run_id()
    with pytest.raises(Killed):
        fly(journal, first, tmp_path, book, "orders.issue_credit")  # its credit stands

    second = flight.new_run_id()
    fly(journal, second, tmp_path, book)
    saga = settled(journal, second)
    assert saga.failed_step == "credit" and saga.compensated == ["label"]
    assert "order B2001 was paid 3900 cents, 3900 are credited already" in saga.error

    resume(journal, first, tmp_path, book)
    assert settled(journal, first).compensated == ["credit", "label"]
    kinds = [k for (k,) in sqlite3.connect(book).execute("SELECT kind FROM operation")]
    assert sorted(kinds) == ["credit", "label", "label", "reversal", "void", "void"]
