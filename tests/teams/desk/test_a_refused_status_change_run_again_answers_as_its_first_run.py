"""set_order_status refused at the gate, run again under the same call (a resumed step's: the
worker died after the refusal was journalled, before the call's ToolReturned was), answers the
refusal its first run had, in the same words, and journals nothing more. It used to judge the
mutation again: a second MutationRefused in the gate's log, in words that said the record as it
stood then, and, where the record had moved to let it through, a change the call's first run
was refused. Keyed by the call: another call asking the same is a new decision, judged anew.
On SQLite and PostgreSQL, as its change's and claim's counterpart
(test_a_status_change_run_again_answers_as_its_first_run.py)."""

from __future__ import annotations

import pytest

from desk.models import Order as OrderRow
from desk.services import TableOrders
from runtime.coordination.claims import Claims
from runtime.coordination.gates import Intents
from runtime.coordination.mutation import GateRefused
from runtime.events import MutationRefused
from runtime.tools import Call
from teams.desk.services import subject
from teams.desk.tools import gate_log
from tests.conftest import on_every_backend
from tests.coordination.desk_tools import desk_tools


def refusals(journal, run_id) -> list[MutationRefused]:
    return [r.event for r in journal.read(gate_log(run_id))]


@on_every_backend(transaction=True)
def test_a_refusal_run_again_is_the_same_refusal_even_where_the_record_now_lets_it_through(
    alias,
):
    journal, run_id, tools = desk_tools(alias, "o-refused")
    call = Call(f"run-{run_id}", 7)
    # Decided from a version the order never had: refused (evidence).
    with pytest.raises(GateRefused) as first:
        tools.set_order_status("cancelled", 2, "she cancelled", call=call)
    assert first.value.refused.check == "evidence"
    assert "never had version 2 (it is at 1)" in str(first.value)
    # Meanwhile the order reaches that version: judged again, the call would now pass and win
    # its compare-and-swap, a change its first run was refused.
    TableOrders(journal, alias).set_status("o-refused", "shipped", 1, "order-agent")
    with pytest.raises(GateRefused) as again:
        tools.set_order_status("cancelled", 2, "she cancelled", call=call)
    assert str(again.value) == str(first.value)
    assert again.value.refused == first.value.refused
    assert refusals(journal, run_id) == [first.value.refused]  # journalled once
    assert first.value.refused.call == call.ref
    row = OrderRow.objects.using(alias).get(order_id="o-refused")
    assert (row.status, row.version) == ("shipped", 2)  # not cancelled by the call run again
    assert Claims(journal).all(subject("o-refused")) == []  # a refused call claims nothing

    # Another call asking the same is a new decision: judged as the record stands now.
    changed = tools.set_order_status("cancelled", 2, "she cancelled", call=Call(call.stream, 9))
    assert (changed["status"], changed["version"], changed["changed"]) == ("cancelled", 3, True)
    assert refusals(journal, run_id) == [first.value.refused]


@on_every_backend(transaction=True)
def test_an_intent_refusal_run_again_answers_in_its_first_words(alias):
    journal, run_id, tools = desk_tools(alias, "o-stale")
    ticket = "ticket-o-stale"
    Intents(journal).declare(ticket, "keep the order as it is", "customer", based_on=1)
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(GateRefused) as first:
        tools.set_order_status("refunded", 1, "refunded in full", call=call)
    assert first.value.refused.check == "intent"
    assert "superseded with version 2" in str(first.value)
    # Superseded once more before the call runs again: its first refusal named version 2.
    Intents(journal).declare(ticket, "cancel it after all", "customer", based_on=2)
    with pytest.raises(GateRefused) as again:
        tools.set_order_status("refunded", 1, "refunded in full", call=call)
    assert str(again.value) == str(first.value)
    assert refusals(journal, run_id) == [first.value.refused]
    # Without a call (a caller that names none) every run is judged and journalled, as before.
    for _ in range(2):
        with pytest.raises(GateRefused, match="superseded with version 3"):
            tools.set_order_status("refunded", 1, "refunded in full")
    assert len(refusals(journal, run_id)) == 3


@on_every_backend(transaction=True)
def test_a_refused_call_run_again_journals_nothing_more(alias):
    journal, run_id, tools = desk_tools(alias, "o-twice")
    call = Call(f"run-{run_id}", 7)
    said = []
    for _ in range(2):
        with pytest.raises(GateRefused) as refused:
            tools.set_order_status("cancelled", 5, "she cancelled", call=call)
        said.append(str(refused.value))
    assert said[0] == said[1] and "never had version 5" in said[0]
    assert len(refusals(journal, run_id)) == 1
