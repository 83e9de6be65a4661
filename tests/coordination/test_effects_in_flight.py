"""The effect reconciler and a call still in flight: a provider that does not know the key yet
has not said the effect never happened. The reconciler records it as failed only once the
lease its performer started it under no longer stands, and a performer whose call comes back
after the reconciler recorded an outcome answers by the record. The reconciler's round is run
from inside the provider's call (the interleaving, injected); nothing waits on a clock."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.effects import EffectDisputed, Ledger
from runtime.coordination.leases import Leases
from runtime.coordination.reconciler import ProviderStatus, reconcile
from runtime.events import EffectFailed, EffectStarted, EffectSucceeded, parse_event
from runtime.fenced import Fenced
from tests.conftest import on_every_backend

KEY = "fx-flight"
RECEIPT = {"refund_id": "rf-flight", "amount_cents": 100}


def unknown(started):
    return ProviderStatus("unknown")  # the provider has not finished it: it knows no such key


def kinds(ledger):
    return [type(e).__name__ for e in ledger.recorded(KEY)]


@on_every_backend()
def test_a_fenced_performer_s_refund_in_flight_is_left_to_it_by_the_reconciler(alias):
    journal = DjangoJournal(alias)
    lease = Leases(journal).acquire("r-1", "worker-1", ttl=60)
    ledger = Ledger(Fenced(journal, *lease.fence), DjangoJournal(alias))
    rounds = []

    def provider(key):
        rounds.append(reconcile(Ledger(DjangoJournal(alias)), unknown, older_than=0))
        return RECEIPT

    assert ledger.perform(KEY, "refund", "order:o-1", {"n": 100}, provider) == RECEIPT
    assert rounds == [[]]  # asked while its performer held the lease: left alone
    assert kinds(ledger) == ["EffectStarted", "EffectSucceeded"]
    started = ledger.recorded(KEY)[0]
    assert (started.lease, started.epoch) == lease.fence


@on_every_backend()
def test_an_effect_whose_performer_lost_its_lease_is_failed_when_the_provider_never_saw_it(
    alias,
):
    journal = DjangoJournal(alias)
    leases = Leases(journal)
    lease = leases.acquire("r-1", "worker-1", ttl=60)
    started = EffectStarted(
        key=KEY, effect_type="refund", target="order:o-1", request_hash="h", lease=lease.stream
    )
    journal.append(Ledger.stream(KEY), [started.model_copy(update={"epoch": lease.epoch})], 0)
    ledger = Ledger(journal)
    assert reconcile(ledger, unknown, older_than=0) == []  # its performer may still be at it
    leases.release(lease, outcome="crashed")
    assert reconcile(ledger, unknown, older_than=0) == [(KEY, "unknown")]
    [_, failed] = ledger.recorded(KEY)
    assert isinstance(failed, EffectFailed) and failed.error.type == "NeverReached"


@on_every_backend()
def test_a_call_that_comes_back_after_the_reconciler_failed_it_is_said_to_be_disputed(alias):
    # Unfenced (the command line's, a journal from before the fence was recorded): its age is
    # all the reconciler goes by, and here it was asked too soon.
    ledger = Ledger(DjangoJournal(alias))

    def provider(key):
        assert reconcile(ledger, unknown, older_than=0) == [(KEY, "unknown")]
        return RECEIPT

    with pytest.raises(EffectDisputed, match="a person must settle it") as caught:
        ledger.perform(KEY, "refund", "order:o-1", {"n": 100}, provider)
    assert caught.value.result == RECEIPT  # not told it succeeded where the ledger says failed
    assert kinds(ledger) == ["EffectStarted", "EffectFailed"]


@on_every_backend()
def test_a_call_that_failed_after_the_reconciler_found_it_made_answers_the_recorded_result(
    alias,
):
    ledger = Ledger(DjangoJournal(alias))

    def provider(key):  # the provider made it; our client gave up before its answer came back
        made = ProviderStatus("succeeded", RECEIPT)
        assert reconcile(ledger, lambda s: made, older_than=0) == [(KEY, "succeeded")]
        raise TimeoutError("the provider did not answer in time")

    assert ledger.perform(KEY, "refund", "order:o-1", {"n": 100}, provider) == RECEIPT
    [_, succeeded] = ledger.recorded(KEY)
    assert isinstance(succeeded, EffectSucceeded) and succeeded.reconciled


def test_an_effect_started_before_the_fence_was_recorded_still_reads():
    line = {"kind": "EffectStarted", "key": KEY, "effect_type": "refund", "target": "order:1"}
    started = parse_event({**line, "request_hash": "h", "run_id": "r-1", "t": 1.0})
    assert isinstance(started, EffectStarted) and (started.lease, started.epoch) == (None, None)
    assert EffectStarted.v == 3 and started.call is None  # (through v2: no call either)
