"""set_order_status that passed the gate in its first run (its claim, made after the gate, says
so), run again under the same call by a resumed step, is not judged at the gate again: it goes
on as its first run went on, to its compare-and-swap, with the guards its first run was given.
An uninterrupted call past the gate is refused only by its write's guards, and its write checks
the order's version first: an order that moved is OrderMoved, whatever became of the intent.
Judged again, a call whose first run lost the compare-and-swap (OrderMoved) was refused at the
gate where the intent had been superseded since: a refusal after the call's own claim, which no
uninterrupted run journals for an order that had moved. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from desk.models import Order as OrderRow
from desk.services import TableOrders
from runtime.coordination.claims import Claims
from runtime.coordination.gates import Intents
from runtime.coordination.mutation import GateRefused
from runtime.events import MutationRefused
from runtime.tools import Call
from teams.desk.services import OrderMoved, subject
from teams.desk.tools import gate_log
from tests.conftest import on_every_backend
from tests.coordination.desk_tools import desk_tools


class Killed(BaseException):
    """The worker dies (no `except Exception` outlives it)."""


def refusals(journal, run_id) -> list[MutationRefused]:
    return [r.event for r in journal.read(gate_log(run_id))]


def supersede(journal, order_id: str) -> None:
    Intents(journal).declare(f"ticket-{order_id}", "do NOT change it", "ceo", "fraud")


def row(alias, order_id):
    found = OrderRow.objects.using(alias).get(order_id=order_id)
    return found.status, found.version


def dies_before_its_write(monkeypatch, tools) -> None:
    """The worker dies after the call's claim, before its compare-and-swap (once)."""
    orders = tools.desk.orders
    write = orders.set_status
    died = []

    def dying(*args, **kwargs):
        if not died:
            died.append(True)
            raise Killed()
        return write(*args, **kwargs)

    monkeypatch.setattr(orders, "set_status", dying)


@on_every_backend(transaction=True)
def test_a_lost_compare_and_swap_run_again_after_the_intent_moved_is_lost_again(alias):
    journal, run_id, tools = desk_tools(alias, "o-lost-then-stale")
    TableOrders(journal, alias).set_status("o-lost-then-stale", "shipped", 1, "order-agent")
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(OrderMoved, match="decided from version 1, it is at version 2") as first:
        tools.set_order_status("cancelled", 1, "she cancelled first", call=call)
    # A person supersedes the ticket's intent before the call runs again: judged again at the
    # gate, it was refused there, a refusal journalled after the claim of a call whose first
    # run passed the gate and lost its compare-and-swap.
    supersede(journal, "o-lost-then-stale")
    with pytest.raises(OrderMoved) as again:
        tools.set_order_status("cancelled", 1, "she cancelled first", call=call)
    assert str(again.value) == str(first.value)
    assert refusals(journal, run_id) == []
    [claim] = Claims(journal).all(subject("o-lost-then-stale"))
    assert claim.call == call.ref
    assert row(alias, "o-lost-then-stale") == ("shipped", 2)

    # Another call asking the same is a new decision: judged at the gate, and refused.
    with pytest.raises(GateRefused, match="superseded with version 2"):
        tools.set_order_status("cancelled", 1, "she cancelled first", call=Call(call.stream, 9))
    assert len(refusals(journal, run_id)) == 1


@on_every_backend(transaction=True)
def test_a_call_killed_before_its_write_is_refused_by_its_first_guards_where_the_intent_moved(
    alias, monkeypatch
):
    journal, run_id, tools = desk_tools(alias, "o-killed-stale")
    dies_before_its_write(monkeypatch, tools)
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(Killed):
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    supersede(journal, "o-killed-stale")
    # Not judged at the gate again; its write, under its first run's guards, is refused by them
    # (the intent moved) and the call is refused then, as an uninterrupted one that reached its
    # write now would be: nothing written under a superseded intent.
    with pytest.raises(GateRefused) as again:
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    assert (again.value.refused.check, again.value.refused.current) == ("intent", 2)
    assert refusals(journal, run_id) == [again.value.refused]
    assert row(alias, "o-killed-stale") == ("delivered", 1)
    # Run once more, it answers that refusal, journalled once.
    with pytest.raises(GateRefused) as third:
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    assert third.value.refused == again.value.refused
    assert len(refusals(journal, run_id)) == 1


@on_every_backend(transaction=True)
def test_a_call_killed_before_its_write_where_the_order_and_the_intent_moved_is_order_moved(
    alias, monkeypatch
):
    journal, run_id, tools = desk_tools(alias, "o-killed-moved")
    dies_before_its_write(monkeypatch, tools)
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(Killed):
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    TableOrders(journal, alias).set_status("o-killed-moved", "shipped", 1, "order-agent")
    supersede(journal, "o-killed-moved")
    # The uninterrupted call's write finds the order moved before its guards are looked at.
    with pytest.raises(OrderMoved, match="decided from version 1, it is at version 2"):
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    assert refusals(journal, run_id) == []
    assert row(alias, "o-killed-moved") == ("shipped", 2)


@on_every_backend(transaction=True)
def test_a_call_killed_before_its_write_changes_the_order_where_nothing_moved(alias, monkeypatch):
    journal, run_id, tools = desk_tools(alias, "o-killed-still")
    dies_before_its_write(monkeypatch, tools)
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(Killed):
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    changed = tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    assert (changed["status"], changed["version"], changed["changed"]) == ("cancelled", 2, True)
    [claim] = Claims(journal).all(subject("o-killed-still"))
    assert changed["claim_id"] == claim.claim_id
    assert refusals(journal, run_id) == []


@on_every_backend(transaction=True)
def test_a_call_refused_by_its_write_guards_run_again_answers_that_refusal(alias, monkeypatch):
    journal, run_id, tools = desk_tools(alias, "o-guarded")
    claim = Claims.claim

    def person_first(self, *args, **kwargs):  # the claim is made between the gate and the write
        if journal.version("intent-ticket-o-guarded") == 1:
            supersede(journal, "o-guarded")
        return claim(self, *args, **kwargs)

    monkeypatch.setattr(Claims, "claim", person_first)
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(GateRefused) as first:
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    supersede(journal, "o-guarded")  # version 3: the first refusal named 2
    with pytest.raises(GateRefused) as again:
        tools.set_order_status("cancelled", 1, "she cancelled", call=call)
    assert str(again.value) == str(first.value)
    assert refusals(journal, run_id) == [first.value.refused]
    assert row(alias, "o-guarded") == ("delivered", 1)
