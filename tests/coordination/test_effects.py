"""Side effects exactly once, with real concurrency on SQLite and PostgreSQL."""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections import Counter

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from runtime.coordination.effect_records import seen
from runtime.coordination.effects import (
    EffectInProgress,
    EffectKeyReused,
    EffectPreviouslyFailed,
    Ledger,
)
from runtime.coordination.keys import effect_key
from runtime.coordination.reconciler import ProviderStatus, reconcile
from runtime.events import EffectStarted
from tests.coordination import child
from tests.journal_store import child as journal_child
from tests.journal_store.conftest import on_every_backend

REPS = 50


class Provider:
    """A payment provider that deduplicates on the key it is given, as real ones do."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    def refund(self, key: str, amount: int = 5) -> dict:
        with self.lock:
            self.calls[key] += 1
        return {"refund_id": f"rf-{key[-6:]}", "amount": amount}


def test_the_key_comes_from_the_intent_not_from_a_model():
    a = effect_key("r-1", "T1", "order:4471", {"amount": 5})
    assert a == effect_key("r-1", "T1", "order:4471", {"amount": 5})
    assert a != effect_key("r-1", "T1", "order:4471", {"amount": 6})
    assert a != effect_key("r-1", "T2", "order:4471", {"amount": 5})


@on_every_backend()
def test_a_duplicate_gets_the_recorded_result_and_the_provider_is_called_once(alias):
    ledger, provider = Ledger(DjangoJournal(alias)), Provider()
    key = effect_key("r-1", "T1", "order:4471", {"amount": 5})
    first = ledger.perform(key, "refund", "order:4471", {"amount": 5}, provider.refund)
    again = ledger.perform(key, "refund", "order:4471", {"amount": 5}, provider.refund)
    assert first == again and provider.calls[key] == 1


@on_every_backend()
def test_the_same_key_with_another_payload_is_refused(alias):
    ledger = Ledger(DjangoJournal(alias))
    ledger.perform("fx-k", "refund", "order:1", {"amount": 5}, Provider().refund)
    with pytest.raises(EffectKeyReused):
        ledger.perform("fx-k", "refund", "order:1", {"amount": 500}, Provider().refund)


@on_every_backend()
def test_a_failed_effect_is_not_retried_under_the_same_key(alias):
    ledger = Ledger(DjangoJournal(alias))

    def declined(key: str) -> None:
        raise RuntimeError("card declined")

    with pytest.raises(RuntimeError):
        ledger.perform("fx-f", "refund", "order:1", {"amount": 5}, declined)
    provider = Provider()
    with pytest.raises(EffectPreviouslyFailed, match="card declined"):
        ledger.perform("fx-f", "refund", "order:1", {"amount": 5}, provider.refund)
    assert provider.calls == Counter()


@on_every_backend(transaction=True)
def test_two_threads_firing_the_same_trigger_50_times_make_one_effect_each_time(alias):
    provider = Provider()
    outcomes: list[tuple[int, str]] = []
    barrier = threading.Barrier(2)
    gate = threading.Event()

    def racer() -> None:
        ledger = Ledger(DjangoJournal(alias))
        try:
            for rep in range(REPS):
                key = f"fx-thread-{rep}"

                def slow_refund(k: str) -> dict:
                    gate.wait(0.01)  # long enough for the other caller to arrive mid-flight
                    return provider.refund(k)

                barrier.wait()
                try:
                    ledger.perform(key, "refund", "order:1", {"amount": 5}, slow_refund)
                    outcomes.append((rep, "result"))
                except EffectInProgress:
                    outcomes.append((rep, "in_progress"))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=racer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(provider.calls[f"fx-thread-{rep}"] == 1 for rep in range(REPS))
    assert len(outcomes) == 2 * REPS
    assert Counter(kind for _, kind in outcomes)["in_progress"] >= 1  # some really overlapped


@pytest.mark.slow
@on_every_backend(transaction=True)
def test_two_processes_firing_the_same_trigger_50_times_make_one_effect_each_time(alias, tmp_path):
    provider = tmp_path / "provider.log"
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    env = journal_child.env_for(alias)
    procs = [
        ctx.Process(
            target=child.effect_racer, args=(env, alias, barrier, results, str(provider), REPS, w)
        )
        for w in ("a", "b")
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in range(2 * REPS)]
    assert journal_child.exit_codes(procs) == [0, 0]
    made = Counter(provider.read_text().splitlines())
    assert all(made[f"fx-proc-{rep}"] == 1 for rep in range(REPS)), made
    for rep in range(REPS):
        mine = [o for o in outcomes if o[0] == rep]
        results_ = [o[2] for o in mine if o[1] == "result"]
        assert len(mine) == 2 and results_, mine
        assert all(r == results_[0] for r in results_)  # whoever got a result got the original


@pytest.mark.slow
@on_every_backend(transaction=True)
def test_a_crash_after_the_provider_accepted_still_makes_one_effect(alias, tmp_path):
    provider = tmp_path / "provider.log"
    ctx = multiprocessing.get_context("spawn")
    crashed = ctx.Process(
        target=child.crash_after_the_provider_accepted,
        args=(journal_child.env_for(alias), alias, str(provider)),
    )
    crashed.start()
    assert journal_child.exit_codes([crashed]) == [-signal.SIGKILL]
    ledger = Ledger(DjangoJournal(alias))
    calls = Provider()
    with pytest.raises(EffectInProgress):  # a retry finds it in flight, and does not do it again
        ledger.perform("fx-crash", "refund", "order:1", {"amount": 5}, calls.refund)

    def status_of(started: EffectStarted) -> ProviderStatus:
        seen = started.key in provider.read_text().split()
        return (
            ProviderStatus("succeeded", {"refund_id": "rf-crash"})
            if seen
            else ProviderStatus("unknown")
        )

    assert reconcile(ledger, status_of, older_than=0) == [("fx-crash", "succeeded")]
    assert ledger.perform("fx-crash", "refund", "order:1", {"amount": 5}, calls.refund) == {
        "refund_id": "rf-crash"
    }
    assert provider.read_text().split() == ["fx-crash"] and calls.calls == Counter()
    assert reconcile(ledger, status_of, older_than=0) == []  # settled once


@on_every_backend()
def test_reconciliation_fails_an_effect_the_provider_never_saw(alias):
    journal = DjangoJournal(alias)
    journal.append(
        "effect-fx-lost",
        [EffectStarted(key="fx-lost", effect_type="refund", target="order:1", request_hash="h")],
        0,
    )
    ledger = Ledger(journal)
    assert reconcile(ledger, lambda s: ProviderStatus("unknown"), older_than=0) == [
        ("fx-lost", "unknown")
    ]
    with pytest.raises(EffectPreviouslyFailed, match="NeverReached"):
        ledger.answer("fx-lost", "h", seen(journal, "effect-fx-lost"))
