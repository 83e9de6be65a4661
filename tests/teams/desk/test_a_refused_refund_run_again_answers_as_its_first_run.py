"""issue_refund refused at the gate, run again under the same call (a resumed step's: the worker
died after the refusal was journalled, before the call's ToolReturned was), answers the refusal
its first run had, in the same words, and journals nothing more. It used to judge the refund
again: a second MutationRefused in the gate's log, in the words of the record as it stood then,
and, where the order's total had been refunded since, RefundRefused (the amount checked before
the gate) where the first run was refused at the gate. Keyed by the call: another call asking
the same is a new decision, judged anew. On SQLite and PostgreSQL, as set_order_status's
counterpart (test_a_refused_status_change_run_again_answers_as_its_first_run.py)."""

from __future__ import annotations

import pytest

from desk.services import TableRefunds
from runtime.coordination.effects import Ledger
from runtime.coordination.gates import Intents
from runtime.coordination.mutation import GateRefused
from runtime.events import MutationRefused
from runtime.journal import Recorded
from runtime.tools import Call
from teams.desk.services import RefundRefused
from teams.desk.tools import gate_log
from tests.conftest import on_every_backend
from tests.coordination.desk_tools import desk_tools


def refusals(journal, run_id) -> list[MutationRefused]:
    return [r.event for r in journal.read(gate_log(run_id))]


def started(journal) -> list[str]:
    return [r.stream for r in journal.read_prefix("effect-")]


def supersede(journal, order_id: str, based_on: int) -> None:
    Intents(journal).declare(
        f"ticket-{order_id}", "keep it as it is", "customer", based_on=based_on
    )


@on_every_backend(transaction=True)
def test_a_refused_refund_run_again_answers_in_its_first_words_and_journals_nothing_more(alias):
    journal, run_id, tools = desk_tools(alias, "o-refund-stale")
    supersede(journal, "o-refund-stale", 1)
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(GateRefused) as first:
        tools.issue_refund(4999, "arrived broken", call=call)
    assert first.value.refused.check == "intent"
    assert "superseded with version 2" in str(first.value)
    assert first.value.refused.call == call.ref
    # Superseded once more before the call runs again: its first refusal named version 2.
    supersede(journal, "o-refund-stale", 2)
    with pytest.raises(GateRefused) as again:
        tools.issue_refund(4999, "arrived broken", call=call)
    assert str(again.value) == str(first.value)
    assert again.value.refused == first.value.refused
    assert refusals(journal, run_id) == [first.value.refused]  # journalled once
    assert started(journal) == [] and TableRefunds(alias).refunds("o-refund-stale") == []

    # Another call asking the same is a new decision: judged as the record stands now.
    with pytest.raises(GateRefused, match="superseded with version 3"):
        tools.issue_refund(4999, "arrived broken", call=Call(call.stream, 9))
    assert len(refusals(journal, run_id)) == 2
    # Without a call (a caller that names none) every run is judged and journalled, as before.
    for _ in range(2):
        with pytest.raises(GateRefused, match="superseded with version 3"):
            tools.issue_refund(4999, "arrived broken")
    assert len(refusals(journal, run_id)) == 4


@on_every_backend(transaction=True)
def test_a_refused_refund_run_again_is_not_refused_otherwise_once_the_order_is_refunded(alias):
    journal, run_id, tools = desk_tools(alias, "o-refund-taken")
    supersede(journal, "o-refund-taken", 1)
    call = Call(f"run-{run_id}", 7)
    with pytest.raises(GateRefused) as first:
        tools.issue_refund(4999, "arrived broken", call=call)
    # Meanwhile the whole order is refunded by somebody else: checked before the gate, the
    # amount would now be refused as too much, where the call's first run was refused at the
    # gate.
    TableRefunds(alias).refund("rf-elsewhere", "o-refund-taken", 4999)
    with pytest.raises(RefundRefused):
        tools.issue_refund(4999, "arrived broken", call=Call(call.stream, 9))
    with pytest.raises(GateRefused) as again:
        tools.issue_refund(4999, "arrived broken", call=call)
    assert str(again.value) == str(first.value)
    assert refusals(journal, run_id) == [first.value.refused]


class Counting:
    """The ledger's outcomes journal, counting the records of effect streams it hands out."""

    def __init__(self, journal) -> None:
        self.journal = journal
        self.handed = 0

    def __getattr__(self, name):
        return getattr(self.journal, name)

    def count(self, found):
        records = found if isinstance(found, list) else [found] if found is not None else []
        self.handed += sum(
            1 for r in records if isinstance(r, Recorded) and r.stream.startswith("effect-")
        )
        return found

    def read(self, stream, after=0):
        return self.count(self.journal.read(stream, after))

    def read_range(self, stream, after, until):
        return self.count(self.journal.read_range(stream, after, until))

    def last(self, stream):
        return self.count(self.journal.last(stream))


@on_every_backend(transaction=True)
def test_a_refund_asks_whether_its_effect_was_started_by_reading_none_of_its_records(alias):
    journal, run_id, tools = desk_tools(alias, "o-refund-read")
    made = tools.issue_refund(4999, "arrived broken", call=Call(f"run-{run_id}", 7))
    key = made["idempotency_key"]
    assert len(journal.read(Ledger.stream(key))) == 2  # started, succeeded
    counting = Counting(tools.ledger.outcomes)
    tools.ledger.outcomes = counting
    # The same refund asked again (a retry after a timeout): answered its receipt, and whether
    # its effect was started is asked of the outcomes journal by its stream's version, not by
    # reading the stream (it read both records).
    again = tools.issue_refund(4999, "the first attempt timed out", call=Call(f"run-{run_id}", 9))
    assert again == made
    assert counting.handed == 0
