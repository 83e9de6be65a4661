"""An order is never refunded more than it was paid, however many refunds are asked at once: a
refund holds its amount (EffectReserved on `reserved-<order>`) in the same write as its
EffectStarted, at the version of the holds it checked, and a refund in flight counts as much as
one done. The interleavings are injected: a refund held at the provider until the test lets it
go, another effect's hold taken between a check and its write."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from desk.services import TableRefunds
from journal_store.journal import DjangoJournal
from runtime.coordination.effects import Ledger
from runtime.coordination.gates import Intents
from runtime.coordination.holds import hold, holds, reserved
from runtime.coordination.mutation import Authority, Evidence, Mutation, MutationGate
from runtime.events import EffectReserved, EffectStarted
from runtime.journal import MemoryJournal
from teams.desk.services import RefundRefused
from tests.conftest import on_every_backend
from tests.coordination.desk_tools import desk_tools

TOTAL = "order:o-1"


class Refused(Exception):
    pass


def holding(ledger, key, amount, limit=100, meanwhile=None):
    """A `reserve` for the ledger: the holds read, then (once) `meanwhile` run, then the check."""

    def reserve():
        at, held = holds(ledger, TOTAL)
        if meanwhile:
            meanwhile.pop()()
        if sum(held.values()) + amount > limit:
            raise Refused(f"{sum(held.values())} held of {limit}: {amount} more is too much")
        return hold(TOTAL, key, amount, limit, at)

    return reserve


@pytest.fixture(params=["memory", "default", "postgres"], ids=["memory", "sqlite", "postgres"])
def journal(request, settings):
    if request.param == "memory":
        return MemoryJournal()
    if request.param not in settings.DATABASES:
        pytest.skip("PostgreSQL is not available here")
    return DjangoJournal(request.param)


def gated(journal):
    """A ledger behind the mutation gate, and the mutation its refunds pass as (the holds'
    races go with the intent's guard)."""
    Intents(journal).declare("ticket-o-1", "refund the broken parcel", "customer")
    gate = MutationGate(journal, Authority.of({"refund": {"support-agent"}}), "gate-r-1")
    mutation = Mutation(
        what="support-agent refunding on o-1",
        actor="support-agent",
        capability="refund",
        intent=("ticket-o-1", 1),
        evidence=(Evidence("read_order", True),),
    )
    return Ledger(journal, gate=gate), mutation


@on_every_backend()
def test_a_hold_taken_between_the_check_and_the_start_makes_the_effect_check_again(journal):
    ledger, mutation = gated(journal)
    calls = []

    def refund(key, amount, meanwhile=None):
        reserve = holding(ledger, key, amount, meanwhile=meanwhile)
        return ledger.perform(
            key, "refund", TOTAL, {"n": amount}, calls.append, mutation=mutation, reserve=reserve
        )

    with pytest.raises(Refused, match="100 held of 100"):
        # another effect on the same total holds it all, and is made, after this one's read
        refund("fx-a", 60, meanwhile=[lambda: refund("fx-b", 100)])
    assert calls == ["fx-b"]  # the first effect's provider was never asked
    assert ledger.recorded("fx-a") == []
    holds = [r.event for r in journal.read(reserved(TOTAL))]
    assert [(e.key, e.amount, e.limit) for e in holds] == [("fx-b", 100, 100)]


@on_every_backend()
def test_a_failed_effect_gives_back_its_hold_and_a_hold_is_never_without_its_start(journal):
    ledger = Ledger(journal)

    def declined(key):
        raise RuntimeError("card declined")

    with pytest.raises(RuntimeError):
        ledger.perform(
            "fx-a", "refund", TOTAL, {"n": 100}, declined, reserve=holding(ledger, "fx-a", 100)
        )
    assert holds(ledger, TOTAL) == (1, {})
    assert (
        ledger.perform(
            "fx-b",
            "refund",
            TOTAL,
            {"n": 100},
            lambda k: "done",
            reserve=holding(ledger, "fx-b", 100),
        )
        == "done"
    )
    started = {
        r.event.key for r in journal.read_prefix("effect-") if isinstance(r.event, EffectStarted)
    }
    held = {
        r.event.key for r in journal.read(reserved(TOTAL)) if isinstance(r.event, EffectReserved)
    }
    assert started == held == {"fx-a", "fx-b"}


class HeldProvider(TableRefunds):
    """The payment provider, which holds the first refund it is asked for until `go` is set:
    that refund is in flight, its key unknown to the provider, for as long as the test likes."""

    def __init__(self, alias):
        super().__init__(alias)
        self.asked, self.go = threading.Event(), threading.Event()

    def refund(self, key, order_id, amount_cents):
        if not self.asked.is_set():
            self.asked.set()
            assert self.go.wait(60), "the test never let the first refund go"
        return super().refund(key, order_id, amount_cents)


def in_flight(tools, amount_cents, out):
    """Refund in a thread of its own (as a tool does); returns the thread."""

    def refund():
        try:
            out.append(tools.issue_refund(amount_cents, "arrived broken"))
        except Exception as exc:  # the outcome is the test's to judge
            out.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=refund)
    thread.start()
    return thread


def refused_while_in_flight(alias, provider, order, first_tools, then) -> None:
    """A refund of 4999 held at the provider while `then` (another refund of the same order)
    is refused for it; then the first is let through, and is the order's one refund."""
    first: list = []
    thread = in_flight(first_tools, 4999, first)
    assert provider.asked.wait(60)
    with pytest.raises(RefundRefused, match="4999 held for refunds in flight"):
        then()
    provider.go.set()
    thread.join(60)
    assert first[0]["refund"]["amount_cents"] == 4999
    assert [r["amount_cents"] for r in TableRefunds(alias).refunds(order)] == [4999]


@on_every_backend(transaction=True)
def test_a_refund_retried_with_another_amount_while_the_first_is_in_flight_is_refused(alias):
    provider = HeldProvider(alias)
    _, _, tools = desk_tools(alias, "o-retry", payments=provider)
    retry = lambda: tools.issue_refund(4998, "the first attempt timed out: retry")  # noqa: E731
    refused_while_in_flight(alias, provider, "o-retry", tools, retry)


@on_every_backend(transaction=True)
def test_two_runs_refunding_one_order_at_once_refund_it_once(alias):
    provider = HeldProvider(alias)
    _, _, one = desk_tools(alias, "o-shared", run_id="r-one", payments=provider)
    _, _, other = desk_tools(alias, "o-shared", run_id="r-other", payments=provider)
    refused_while_in_flight(
        alias, provider, "o-shared", one, lambda: other.issue_refund(4999, "arrived broken")
    )
