from __future__ import annotations

from collections.abc import Sequence

import pytest

from runtime.coordination.effects import EffectFailed, EffectInProgress, EffectSucceeded, Ledger
from runtime.events import Event, SagaAborted, SagaCompensated, SagaStepCompleted
from runtime.fanout.saga import (
    CompensationFailed,
    MissingCompensation,
    Saga,
    SagaClosed,
    StepConflict,
)
from runtime.journal import MemoryJournal, Recorded
from runtime.jsonl import JsonlJournal


class Declined(Exception):
    pass


class Crash(BaseException):
    """A process dying: not an Exception, so nothing on the way up records it."""


class Provider:
    """Three services a booking touches, counting every call made to them."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.keys: dict[str, str] = {}

    def act(self, name: str, fail: bool = False):
        def action(key: str):
            self.log.append(name)
            self.keys[name] = key
            if fail:
                raise Declined(f"{name} declined")
            return {"ref": f"{name}-ref"}

        return action

    def undo(self, name: str):
        def compensation(key: str, result):
            self.log.append(f"undo {name}")
            self.keys[f"undo {name}"] = key
            return {"undid": result["ref"]}

        return compensation


def run_booking(saga: Saga, provider: Provider, fail_at: str | None = None) -> None:
    """The driver's code: the same on the first run and on every resume."""
    for name in ["hold", "charge", "notify"]:
        saga.step(
            name,
            provider.act(name, fail=name == fail_at),
            provider.undo(name),
            payload={"order": "A-4471", "step": name},
        )


def saga_stream(journal) -> list[Event]:
    return [r.event for r in journal.read("saga-b1")]


@pytest.fixture(params=["memory", "jsonl"])
def journal(request, tmp_path):
    return MemoryJournal() if request.param == "memory" else JsonlJournal(tmp_path / "j.jsonl")


def test_steps_run_once_and_are_recorded_in_order(journal):
    provider = Provider()
    saga = Saga(journal, "b1", run_id="r-1")
    run_booking(saga, provider)
    assert provider.log == ["hold", "charge", "notify"]
    assert saga.completed == ["hold", "charge", "notify"]
    events = saga_stream(journal)
    assert all(isinstance(e, SagaStepCompleted) for e in events)
    assert events[0].result == {"ref": "hold-ref"}  # type: ignore[attr-defined]
    assert events[0].run_id == "r-1"
    # Replaying the driver acts on nothing and answers from the record.
    run_booking(Saga(journal, "b1"), provider)
    assert provider.log == ["hold", "charge", "notify"]


def test_a_failure_at_step_three_compensates_two_then_one_exactly_once(journal):
    provider = Provider()
    saga = Saga(journal, "b1", run_id="r-1")
    with pytest.raises(Declined):
        run_booking(saga, provider, fail_at="notify")
    assert saga.compensate(reason="notify declined", failed_step="notify") == ["charge", "hold"]
    assert provider.log == ["hold", "charge", "notify", "undo charge", "undo hold"]

    kinds = [(type(e).__name__, getattr(e, "step", None)) for e in saga_stream(journal)]
    assert kinds == [
        ("SagaStepCompleted", "hold"),
        ("SagaStepCompleted", "charge"),
        ("SagaAborted", None),
        ("SagaCompensating", "charge"),  # begun, before its call
        ("SagaCompensated", "charge"),
        ("SagaCompensating", "hold"),
        ("SagaCompensated", "hold"),
    ]
    aborted = saga_stream(journal)[2]
    assert isinstance(aborted, SagaAborted) and aborted.failed_step == "notify"
    # The failed step's effect is on record as failed; it owes no compensation.
    ledger = Ledger(journal)
    notify = ledger.recorded(saga.step_key("notify", {"order": "A-4471", "step": "notify"}))
    assert isinstance(notify[-1], EffectFailed)

    # Compensating again, on the same object or a fresh one, undoes nothing twice.
    assert saga.compensate() == []
    fresh = Saga(journal, "b1")
    assert fresh.compensate() == []
    assert provider.log.count("undo charge") == 1 and provider.log.count("undo hold") == 1


def test_a_compensation_gets_the_step_result_and_its_own_key(journal):
    provider = Provider()
    saga = Saga(journal, "b1")
    with pytest.raises(Declined):
        run_booking(saga, provider, fail_at="charge")
    saga.compensate()
    assert provider.keys["undo hold"] == saga.undo_key("hold", provider.keys["hold"])
    assert provider.keys["undo hold"] != provider.keys["hold"]
    compensated = saga_stream(journal)[-1]
    assert isinstance(compensated, SagaCompensated)
    assert compensated.result == {"undid": "hold-ref"}


class CrashingJournal:
    """Dies right after the undo of `step` took effect, before the saga wrote that down."""

    def __init__(self, inner, step: str) -> None:
        self.inner = inner
        self.step = step

    def append(self, stream: str, events: Sequence[Event], expected_version: int, **kw):
        for e in events:
            if isinstance(e, SagaCompensated) and e.step == self.step:
                raise Crash()
        return self.inner.append(stream, events, expected_version, **kw)

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        return self.inner.read(stream, after)

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        return self.inner.read_all(after, limit)

    def version(self, stream: str) -> int:
        return self.inner.version(stream)


def test_a_resumed_saga_finishes_compensating_without_repeating_anything(tmp_path):
    path = tmp_path / "journal.jsonl"
    provider = Provider()
    first = Saga(CrashingJournal(JsonlJournal(path), step="hold"), "b1", run_id="r-1")
    with pytest.raises(Declined):
        run_booking(first, provider, fail_at="notify")
    with pytest.raises(Crash):
        first.compensate(reason="notify declined")
    assert provider.log[-2:] == ["undo charge", "undo hold"]  # both undos ran, one unrecorded

    # A new process: a new journal object on the same file, a new saga on the same id.
    journal = JsonlJournal(path)
    resumed = Saga(journal, "b1", run_id="r-1")
    assert resumed.completed == ["hold", "charge"]
    assert resumed.compensated == ["charge"]
    assert resumed.aborted
    with pytest.raises(SagaClosed):  # replaying the driver registers undos, then stops
        run_booking(resumed, provider, fail_at="notify")
    assert resumed.compensate() == ["hold"]  # recorded now, from the effect's own record
    assert provider.log == ["hold", "charge", "notify", "undo charge", "undo hold"]
    assert resumed.compensated == ["charge", "hold"]

    again = Saga(JsonlJournal(path), "b1")
    again.undo("hold", provider.undo("hold"))
    again.undo("charge", provider.undo("charge"))
    assert again.compensate() == []
    assert provider.log.count("undo hold") == 1 and provider.log.count("undo charge") == 1


def test_a_resumed_saga_without_its_compensations_refuses_before_undoing_anything(journal):
    provider = Provider()
    with pytest.raises(Declined):
        run_booking(Saga(journal, "b1"), provider, fail_at="notify")
    fresh = Saga(journal, "b1")
    fresh.undo("charge", provider.undo("charge"))
    with pytest.raises(MissingCompensation, match="hold"):
        fresh.compensate()
    assert "undo charge" not in provider.log  # all or nothing about what can be undone


def test_an_aborted_saga_takes_no_new_steps(journal):
    provider = Provider()
    saga = Saga(journal, "b1")
    saga.step("hold", provider.act("hold"), provider.undo("hold"))
    saga.compensate(reason="customer cancelled")
    with pytest.raises(SagaClosed):
        saga.step("charge", provider.act("charge"), provider.undo("charge"))
    assert "charge" not in provider.log


def test_a_step_name_cannot_come_back_with_another_payload(journal):
    provider = Provider()
    saga = Saga(journal, "b1")
    saga.step("hold", provider.act("hold"), provider.undo("hold"), payload={"seats": 2})
    with pytest.raises(StepConflict):
        saga.step("hold", provider.act("hold"), provider.undo("hold"), payload={"seats": 3})
    assert provider.log == ["hold"]


def test_a_failed_compensation_stops_the_walk_back_and_is_not_retried(journal):
    provider = Provider()
    saga = Saga(journal, "b1")
    calls = []

    def broken_undo(key, result):
        calls.append(key)
        raise Declined("refund API down")

    saga.step("hold", provider.act("hold"), provider.undo("hold"))
    saga.step("charge", provider.act("charge"), broken_undo)
    with pytest.raises(CompensationFailed, match=r"charge.*refund API down"):
        saga.compensate()
    assert "undo hold" not in provider.log  # the earlier step stands while a later one does
    with pytest.raises(CompensationFailed, match="charge"):
        saga.compensate()
    assert len(calls) == 1


def test_an_undo_in_doubt_is_reported_as_such(journal):
    provider = Provider()
    saga = Saga(journal, "b1")
    saga.step("hold", provider.act("hold"), provider.undo("hold"))

    def dies(key, result):
        raise Crash()

    saga.undo("hold", dies)
    with pytest.raises(Crash):
        saga.compensate()
    resumed = Saga(journal, "b1")
    resumed.undo("hold", provider.undo("hold"))
    with pytest.raises(EffectInProgress):  # started, never settled: reconcile first
        resumed.compensate()
    assert "undo hold" not in provider.log


def test_keys_are_derived_from_the_saga_the_step_and_the_payload():
    a, b = Saga(MemoryJournal(), "b1"), Saga(MemoryJournal(), "b1")
    assert a.step_key("hold", {"x": 1}) == b.step_key("hold", {"x": 1})
    assert a.step_key("hold", {"x": 1}) != a.step_key("hold", {"x": 2})
    assert a.step_key("hold", {"x": 1}) != Saga(MemoryJournal(), "b2").step_key("hold", {"x": 1})
    assert a.step_key("hold") != a.step_key("charge")


def test_the_effect_streams_hold_one_outcome_per_key(journal):
    provider = Provider()
    saga = Saga(journal, "b1")
    with pytest.raises(Declined):
        run_booking(saga, provider, fail_at="notify")
    saga.compensate()
    saga.compensate()
    ledger = Ledger(journal)
    for name in ["hold", "charge"]:
        step_key = saga.step_key(name, {"order": "A-4471", "step": name})
        for key in [step_key, saga.undo_key(name, step_key)]:
            recorded = ledger.recorded(key)
            assert len(recorded) == 2 and isinstance(recorded[1], EffectSucceeded)
