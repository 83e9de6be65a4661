"""The beat's effect reconciler (services/effects.py) reads the effects in flight from their
read model (journal_store/open_effects.py) and each one's own stream, which decides: a round
costs what is in flight, where it read every effect stream ever written. A settled effect is
neither read nor asked about, a row the read model still holds for a settled one settles
nothing, and the outcome goes at the version read. The provider is the desk's refunds table."""

from __future__ import annotations

import time

import pytest

from desk import services as desk
from desk.models import Refund
from journal_store import open_effects, projection
from journal_store.journal import DjangoJournal
from journal_store.models import OpenEffect
from runtime.coordination.effects import Ledger
from runtime.coordination.reconciler import unsettled
from runtime.events import EffectFailed, EffectResumed, EffectStarted, EffectSucceeded
from services import effects
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting

pytestmark = on_every_backend()
LONG_AGO = time.time() - 3_600  # past any wait: the effect's performer is long gone


def started(key: str, t: float = LONG_AGO) -> EffectStarted:
    return EffectStarted(
        key=key, effect_type="refund", target="order:o-1", request_hash="h", run_id="r-1", t=t
    )


def succeeded(key: str) -> EffectSucceeded:
    return EffectSucceeded(key=key, result={"refund_id": "rf"}, run_id="r-1")


def watched(monkeypatch, alias: str) -> tuple[list[str], list[Counting]]:
    """The keys the provider is asked about, and the journals the service reads through."""
    asked: list[str] = []
    journals: list[Counting] = []

    def effect_status(effect, using="default"):
        asked.append(effect.key)
        return desk.effect_status(effect, using)

    def journal(using="default"):
        journals.append(Counting(DjangoJournal(using)))
        return journals[-1]

    monkeypatch.setattr(effects, "effect_status", effect_status)
    monkeypatch.setattr(effects, "DjangoJournal", journal)
    return asked, journals


def test_an_effect_never_settled_is_reconciled_after_its_wait(alias, monkeypatch):
    asked, _ = watched(monkeypatch, alias)
    journal = DjangoJournal(alias)
    journal.append("effect-fx-late", [started("fx-late", t=time.time())], 0)
    projection.catch_up([open_effects.NAME], using=alias)
    assert list(OpenEffect.objects.using(alias).values_list("stream", flat=True)) == [
        "effect-fx-late"
    ]
    assert effects.reconcile(older_than=600, using=alias) == []  # not yet past its wait
    assert asked == []
    # The worker died after the provider took it; later, past the wait, the provider is asked.
    journal.append("effect-fx-lost", [started("fx-lost")], 0)
    Refund.objects.using(alias).create(key="fx-lost", order_id="o-1", amount_cents=5)
    projection.catch_up([open_effects.NAME], using=alias)
    assert effects.reconcile(older_than=600, using=alias) == [("fx-lost", "succeeded")]
    assert asked == ["fx-lost"]
    [_, outcome] = [r.event for r in journal.read("effect-fx-lost")]
    assert isinstance(outcome, EffectSucceeded) and outcome.reconciled
    assert list(OpenEffect.objects.using(alias).values_list("stream", flat=True)) == [
        "effect-fx-late"  # the settled one's row went with the reconciler's catch-up
    ]


def test_many_settled_effects_are_neither_read_nor_asked_about(alias, monkeypatch):
    journal = DjangoJournal(alias)
    for n in range(60):
        journal.append(f"effect-fx-{n}", [started(f"fx-{n}"), succeeded(f"fx-{n}")], 0)
    journal.append("effect-fx-open", [started("fx-open")], 0)
    # Some applied by the read model, the rest journalled after its checkpoint: both are read.
    projection.catch_up([open_effects.NAME], using=alias)
    for n in range(60, 80):
        journal.append(f"effect-fx-{n}", [started(f"fx-{n}"), succeeded(f"fx-{n}")], 0)
    journal.append("effect-fx-newer", [started("fx-newer")], 0)
    asked, journals = watched(monkeypatch, alias)
    assert sorted(effects.reconcile(older_than=60, using=alias)) == [
        ("fx-newer", "unknown"),
        ("fx-open", "unknown"),
    ]
    assert asked == ["fx-open", "fx-newer"]  # oldest taking first
    [read] = journals
    assert set(read.handed) == {"effect-fx-open", "effect-fx-newer"}
    assert max(read.handed.values()) <= 2  # each stream's first and last records, never more
    for key in ("fx-open", "fx-newer"):
        outcome = journal.read(f"effect-{key}")[-1].event
        assert isinstance(outcome, EffectFailed) and outcome.error.type == "NeverReached"


def test_a_row_left_for_a_settled_effect_settles_nothing(alias, monkeypatch):
    journal = DjangoJournal(alias)
    journal.append("effect-fx-done", [started("fx-done")], 0)
    projection.catch_up([open_effects.NAME], using=alias)
    journal.append("effect-fx-done", [succeeded("fx-done")], 1)
    assert open_effects.candidates(alias) == []  # the outcome after the checkpoint counts
    # A read model that says otherwise (the outcome not yet applied, read before it landed):
    projection.catch_up([open_effects.NAME], using=alias)
    OpenEffect.objects.using(alias).create(stream="effect-fx-done", run_id="r-1", position=1)
    assert open_effects.candidates(alias) == ["fx-done"]
    asked, _ = watched(monkeypatch, alias)
    assert effects.reconcile(older_than=0, using=alias) == []
    assert asked == []  # the stream said it was settled
    assert [type(r.event) for r in journal.read("effect-fx-done")] == [
        EffectStarted,
        EffectSucceeded,
    ]


def test_an_effect_taken_over_while_its_provider_is_asked_stays_its_taker_s(alias, monkeypatch):
    journal = DjangoJournal(alias)
    journal.append("effect-fx-taken", [started("fx-taken")], 0)
    projection.catch_up([open_effects.NAME], using=alias)

    def effect_status(effect, using="default"):
        # Another performer takes it over (its lease lapsed) while the provider is asked.
        resumed = EffectResumed(key=effect.key, lease="lease-r-2", epoch=1, run_id="r-1")
        journal.append("effect-fx-taken", [resumed], 1)
        return desk.effect_status(effect, using)

    monkeypatch.setattr(effects, "effect_status", effect_status)
    assert effects.reconcile(older_than=0, using=alias) == []  # at the version read: refused
    assert [type(r.event) for r in journal.read("effect-fx-taken")] == [
        EffectStarted,
        EffectResumed,
    ]
    projection.catch_up([open_effects.NAME], using=alias)
    [row] = OpenEffect.objects.using(alias).all()
    assert (row.stream, row.position) == (
        "effect-fx-taken",
        journal.last("effect-fx-taken").position,
    )


def test_rebuild_equals_the_incremental_path(alias):
    journal = DjangoJournal(alias)
    error = {"type": "Declined", "message": "no"}
    histories = {
        "fx-a": [started("fx-a")],
        "fx-b": [started("fx-b"), succeeded("fx-b")],
        "fx-c": [started("fx-c"), EffectFailed(key="fx-c", error=error, run_id="r-1")],
        "fx-d": [
            started("fx-d"),
            EffectFailed(key="fx-d", error=error, run_id="r-1"),
            EffectResumed(key="fx-d", lease="lease-r-1", epoch=2, run_id="r-1"),
        ],
        "fx-e": [started("fx-e"), EffectResumed(key="fx-e", lease="lease-r-1", epoch=2)],
    }
    # Interleaved one record at a time, caught up in batches of two as it goes.
    for i in range(3):
        for key, history in histories.items():
            if i < len(history):
                journal.append(
                    f"effect-{key}", [history[i].model_copy(update={"run_id": "r-1"})], i
                )
                projection.catch_up([open_effects.NAME], using=alias, batch=2)
    # An effect's kind on a stream that is no effect's opens nothing.
    resumed = EffectResumed(key="fx-z", lease="lease-r-1", epoch=1, run_id="r-1")
    journal.append("coordination-r-1", [resumed], 0)
    projection.catch_up([open_effects.NAME], using=alias, batch=2)

    def rows():
        return list(OpenEffect.objects.using(alias).order_by("stream").values_list())

    incremental = rows()
    assert [stream for stream, *_ in incremental] == ["effect-fx-a", "effect-fx-d", "effect-fx-e"]
    assert open_effects.candidates(alias) == ["fx-a", "fx-e", "fx-d"]  # by their last taking
    projection.rebuild([open_effects.NAME], using=alias)
    assert rows() == incremental


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_store_whose_read_model_never_ran_still_finds_its_effects(alias, checkpoint):
    journal = DjangoJournal(alias)
    journal.append("effect-fx-a", [started("fx-a")], 0)
    journal.append("effect-fx-b", [started("fx-b"), succeeded("fx-b")], 0)
    if checkpoint:
        projection.catch_up([open_effects.NAME], using=alias)
    assert open_effects.candidates(alias) == ["fx-a"]
    # The runtime's whole read (the memory's and the file's journals) finds the same.
    ledger = Ledger(journal)
    found = unsettled(ledger, 0, open_effects.candidates(alias))
    assert found == unsettled(ledger, 0)
