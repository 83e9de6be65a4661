"""An effect left started and unsettled by a performer that is gone (its lease no longer
stands), where the provider deduplicates on the key (`perform(..., resend=True)`): taken over
in the journal (EffectResumed, at the version read), sent again under its key, and recorded
with the provider's first answer. Left alone, as before: an effect whose performer's lease
still stands, one started unfenced, and one whose provider does not deduplicate. A resumer
racing the reconciler, or another resumer: exactly one of them acts, one outcome."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.effects import EffectInProgress, Ledger
from runtime.coordination.leases import Leases
from runtime.coordination.reconciler import ProviderStatus, reconcile
from runtime.events import EffectResumed, EffectStarted, EffectSucceeded
from runtime.fenced import Fenced
from tests.conftest import on_every_backend
from tests.coordination.dying import Died, dies

KEY = "fx-again"
PAYLOAD = {"amount_cents": 100}


class Provider:
    """Deduplicates on the key, as the orders server and the payment provider do: one effect
    per key, the first answer to every call."""

    def __init__(self) -> None:
        self.book: dict[str, dict] = {}
        self.calls = 0

    def __call__(self, key: str) -> dict:
        self.calls += 1
        if key not in self.book:
            self.book[key] = {"refund_id": f"rf-{len(self.book) + 1}"}
        return self.book[key]

    def status(self, started: EffectStarted) -> ProviderStatus:
        if started.key in self.book:
            return ProviderStatus("succeeded", self.book[started.key])
        return ProviderStatus("unknown")


def kinds(ledger):
    return [type(e).__name__ for e in ledger.recorded(KEY)]


def crashed(alias, provider: Provider, fenced: bool = True):
    """A performer that started the effect, had the provider make it, and died before writing
    its outcome (its lease left to run out, as a dead worker's is); returns the journal."""
    journal = DjangoJournal(alias)
    lease = Leases(journal).acquire("r-1", "worker-1", ttl=0)
    first = Ledger(Fenced(journal, *lease.fence) if fenced else journal)

    with pytest.raises(Died):
        first.perform(KEY, "refund", "order:o-1", PAYLOAD, dies(provider), resend=True)
    return journal


def taker(journal, holder="worker-2"):
    lease = Leases(journal).acquire("r-1", holder, ttl=60)
    return Ledger(Fenced(journal, *lease.fence)), lease


@on_every_backend()
def test_a_refund_whose_performer_died_is_sent_again_and_recorded_as_first_answered(alias):
    provider = Provider()
    journal = crashed(alias, provider)
    ledger, lease = taker(journal)
    result = ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True)
    assert result == {"refund_id": "rf-1"} and len(provider.book) == 1  # one refund
    assert kinds(ledger) == ["EffectStarted", "EffectResumed", "EffectSucceeded"]
    resumed = ledger.recorded(KEY)[1]
    assert (resumed.lease, resumed.epoch, resumed.after_epoch) == (lease.stream, 2, 1)
    # Asked again, it is answered by the record: the provider is not called.
    calls = provider.calls
    assert ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True) == result
    assert provider.calls == calls


@on_every_backend()
def test_an_effect_under_a_standing_lease_is_still_in_progress(alias):
    provider = Provider()
    journal = DjangoJournal(alias)
    lease = Leases(journal).acquire("r-1", "worker-1", ttl=60)
    ledger = Ledger(Fenced(journal, *lease.fence))
    other = Ledger(Fenced(journal, *Leases(journal).acquire("r-2", "w", ttl=60).fence))

    def asked_meanwhile(key):
        # Its performer still holds its lease: it may be waiting on the provider right now.
        with pytest.raises(EffectInProgress):
            other.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True)
        return provider(key)

    ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, asked_meanwhile, resend=True)
    assert provider.calls == 1
    assert kinds(ledger) == ["EffectStarted", "EffectSucceeded"]


@on_every_backend()
def test_an_effect_whose_provider_does_not_deduplicate_is_never_sent_again(alias):
    provider = Provider()
    journal = crashed(alias, provider)
    ledger, _ = taker(journal)
    with pytest.raises(EffectInProgress):
        ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, provider)  # not declared resend
    assert provider.calls == 1
    assert kinds(ledger) == ["EffectStarted"]


@on_every_backend()
def test_an_effect_started_unfenced_is_left_to_the_reconciler(alias):
    provider = Provider()
    journal = crashed(alias, provider, fenced=False)
    ledger, _ = taker(journal)
    with pytest.raises(EffectInProgress):
        ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True)
    assert provider.calls == 1 and kinds(ledger) == ["EffectStarted"]


@on_every_backend()
def test_the_reconciler_leaves_an_effect_taken_over_to_its_new_performer(alias):
    provider = Provider()
    journal = crashed(alias, provider)
    ledger, _ = taker(journal)
    rounds = []

    def provider_slow(key):
        # The reconciler's round while the new performer waits: the provider does not know
        # the key yet (`unknown`), and the new performer's lease stands.
        rounds.append(reconcile(Ledger(DjangoJournal(alias)), unknown, older_than=0))
        return provider(key)

    ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, provider_slow, resend=True)
    assert rounds == [[]]
    assert kinds(ledger) == ["EffectStarted", "EffectResumed", "EffectSucceeded"]


def unknown(started):
    return ProviderStatus("unknown")


@on_every_backend()
def test_a_resumer_taking_over_while_the_reconciler_decides_leaves_one_outcome(alias):
    provider = Provider()
    journal = crashed(alias, provider)
    ledger, _ = taker(journal)
    results = []

    def status_of(started):
        # The reconciler read the effect unsettled at version 1, its performer gone; before
        # it writes, a resumer takes the effect over and settles it.
        results.append(ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True))
        return ProviderStatus("unknown")  # stale: what the reconciler read before

    assert reconcile(Ledger(DjangoJournal(alias)), status_of, older_than=0) == []
    assert kinds(ledger) == ["EffectStarted", "EffectResumed", "EffectSucceeded"]
    assert results == [provider.book[KEY]]


@on_every_backend()
def test_a_reconciler_settling_first_leaves_the_resumer_nothing_to_send(alias):
    provider = Provider()
    journal = crashed(alias, provider)
    assert reconcile(Ledger(DjangoJournal(alias)), provider.status, older_than=0) == [
        (KEY, "succeeded")
    ]
    ledger, _ = taker(journal)
    calls = provider.calls
    assert ledger.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True) == {
        "refund_id": "rf-1"
    }
    assert provider.calls == calls and kinds(ledger) == ["EffectStarted", "EffectSucceeded"]


@on_every_backend()
def test_two_resumers_reading_at_once_take_the_effect_over_once(alias):
    provider = Provider()
    journal = crashed(alias, provider)
    first, _ = taker(journal, "worker-2")
    lease = Leases(journal).acquire("r-other", "worker-3", ttl=60)

    class ReadThenRaced(Fenced):
        """The second resumer's journal: right after its first read of the effect (whichever
        read the ledger makes: its last record, then its first), which found it unsettled, the
        first resumer takes it over and settles it."""

        raced = False

        def race(self, stream, found):
            if stream == Ledger.stream(KEY) and not self.raced:
                self.raced = True
                first.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True)
            return found

        def read(self, stream, after=0):
            return self.race(stream, super().read(stream, after))

        def read_range(self, stream, after, until):
            return self.race(stream, super().read_range(stream, after, until))

        def last(self, stream):
            return self.race(stream, super().last(stream))

    second = Ledger(ReadThenRaced(journal, *lease.fence))
    result = second.perform(KEY, "refund", "order:o-1", PAYLOAD, provider, resend=True)
    assert result == {"refund_id": "rf-1"}
    recorded = first.recorded(KEY)
    assert [type(e) for e in recorded] == [EffectStarted, EffectResumed, EffectSucceeded]
    assert recorded[1].epoch == 2  # the first resumer's; the second's append lost
    assert provider.calls == 2  # the dead performer's call and the first resumer's
