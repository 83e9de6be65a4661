"""The ledger learns an effect's state from two records of its stream, never the whole of it:
the first (the EffectStarted, whose request hash says which request the key is for) and the
last (the outcome when settled, else the latest taking: the EffectStarted or the last
EffectResumed). A stream holds nothing else, in that order, and nothing follows an outcome: every
append goes at the version read. Here a stream of several takings over, then an outcome, is
answered as it always was, and by reading those two records."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.effects import (
    EffectInProgress,
    EffectKeyReused,
    EffectPreviouslyFailed,
    Ledger,
)
from runtime.coordination.leases import Leases
from runtime.events import EffectResumed
from runtime.fenced import Fenced
from runtime.journal import Journal, MemoryJournal, Recorded
from tests.conftest import on_every_backend
from tests.coordination.dying import Died, dies

KEY = "fx-several"
TARGET = "order:o-1"
PAYLOAD = {"amount_cents": 100}


class Provider:
    """Deduplicates on the key: one effect per key, the first answer to every call."""

    def __init__(self) -> None:
        self.book: dict[str, dict] = {}
        self.calls = 0

    def __call__(self, key: str) -> dict:
        self.calls += 1
        return self.book.setdefault(key, {"refund_id": f"rf-{len(self.book) + 1}"})


class Counting(MemoryJournal):
    """Counts the records of the effect's stream every read hands out."""

    def __init__(self) -> None:
        super().__init__()
        self.handed = 0

    def count(self, stream: str, found: list[Recorded]) -> list[Recorded]:
        if stream == Ledger.stream(KEY):
            self.handed += len(found)
        return found

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        return self.count(stream, super().read(stream, after))

    def read_range(self, stream: str, after: int, until: int) -> list[Recorded]:
        return self.count(stream, super().read_range(stream, after, until))


def performer(journal: Journal, holder: str, ttl: float) -> Ledger:
    lease = Leases(journal).acquire("r-1", holder, ttl=ttl)
    assert lease is not None
    return Ledger(Fenced(journal, *lease.fence))


def taken_over_twice(journal: Journal, provider: Provider) -> None:
    """Started by a performer that died, taken over by two more that died (each lease left to
    lapse): EffectStarted, EffectResumed, EffectResumed, unsettled."""
    for n in (1, 2, 3):
        with pytest.raises(Died):
            performer(journal, f"worker-{n}", ttl=0).perform(
                KEY, "refund", TARGET, PAYLOAD, dies(provider), resend=True
            )


def kinds(journal: Journal) -> list[str]:
    return [r.event.kind for r in journal.read(Ledger.stream(KEY))]


def answers_a_stream_of_several_records(journal: Journal) -> None:
    provider = Provider()
    taken_over_twice(journal, provider)
    assert kinds(journal) == ["EffectStarted", "EffectResumed", "EffectResumed"]
    third = journal.read(Ledger.stream(KEY))[2].event
    assert isinstance(third, EffectResumed) and third.epoch == 3

    # Unsettled: in progress for whoever may not send it again; the same key for another
    # request is refused by the first record, however many follow it.
    bystander = Ledger(journal)
    with pytest.raises(EffectInProgress):
        bystander.perform(KEY, "refund", TARGET, PAYLOAD, provider)
    with pytest.raises(EffectKeyReused):
        bystander.perform(KEY, "refund", TARGET, {"amount_cents": 5}, provider)

    # A fourth performer takes it over from the last taking (not the first) and records the
    # outcome after it, at version 5.
    fourth = performer(journal, "worker-4", ttl=60)
    result = fourth.perform(KEY, "refund", TARGET, PAYLOAD, provider, resend=True)
    assert result == {"refund_id": "rf-1"} and len(provider.book) == 1
    records = journal.read(Ledger.stream(KEY))
    assert [r.event.kind for r in records] == [
        "EffectStarted",
        "EffectResumed",
        "EffectResumed",
        "EffectResumed",
        "EffectSucceeded",
    ]
    resumed = records[3].event
    assert isinstance(resumed, EffectResumed)
    assert (resumed.after_lease, resumed.after_epoch, resumed.epoch) == (third.lease, 3, 4)
    assert records[4].version == 5

    # Settled: the recorded result for everyone, the provider not called again; another
    # request under the key is still refused.
    calls = provider.calls
    assert bystander.perform(KEY, "refund", TARGET, PAYLOAD, provider) == result
    assert fourth.perform(KEY, "refund", TARGET, PAYLOAD, provider, resend=True) == result
    assert provider.calls == calls
    with pytest.raises(EffectKeyReused):
        bystander.perform(KEY, "refund", TARGET, {"amount_cents": 5}, provider)
    assert not bystander.failed(KEY)
    assert bystander.wait(KEY, 0) == [r.event for r in records]


def test_a_stream_of_several_records_is_answered_as_ever_in_memory() -> None:
    answers_a_stream_of_several_records(MemoryJournal())


@on_every_backend()
def test_a_stream_of_several_records_is_answered_as_ever_in_the_database(alias) -> None:
    answers_a_stream_of_several_records(DjangoJournal(alias))


def test_a_failure_after_takings_over_is_answered_as_a_failure() -> None:
    journal = MemoryJournal()
    provider = Provider()
    taken_over_twice(journal, provider)

    def refused(key: str) -> dict:
        raise RuntimeError("card declined")

    fourth = performer(journal, "worker-4", ttl=60)
    with pytest.raises(RuntimeError):
        fourth.perform(KEY, "refund", TARGET, PAYLOAD, refused, resend=True)
    assert kinds(journal)[-1] == "EffectFailed"
    assert fourth.failed(KEY)
    with pytest.raises(EffectPreviouslyFailed):
        Ledger(journal).perform(KEY, "refund", TARGET, PAYLOAD, provider)


def test_the_ledger_reads_two_records_of_a_stream_of_five() -> None:
    journal = Counting()
    provider = Provider()
    taken_over_twice(journal, provider)
    performer(journal, "worker-4", ttl=60).perform(
        KEY, "refund", TARGET, PAYLOAD, provider, resend=True
    )
    assert journal.version(Ledger.stream(KEY)) == 5
    ledger = Ledger(journal)
    journal.handed = 0
    assert ledger.perform(KEY, "refund", TARGET, PAYLOAD, provider) == {"refund_id": "rf-1"}
    assert journal.handed <= 2  # its first record and its last
    journal.handed = 0
    assert not ledger.failed(KEY)
    assert journal.handed == 1  # its last
