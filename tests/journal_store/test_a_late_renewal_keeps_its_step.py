"""A renewal that lands late (after its lease's expiry, held up by another writer's lock) keeps
the lease when nobody took it meanwhile: the stream had not moved under its compare-and-swap,
so the epoch is the holder's still. The heartbeat's watch took the lease for lost at the
expiry, and the step ended `lost` however the renewal answered: a slow commit or a lock let go
a moment late cost the whole step. Now the lease is overdue at the expiry (the writer waits,
the children are ended) and the landing lets the step go on; a lease another worker took (a
higher epoch) still ends it.

A real lock on every backend: another transaction in the middle of its append."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from runtime.coordination.leases import Leases
from runtime.events import BudgetDebited, LeaseGranted, LeaseReleased, LeaseRenewed
from runtime.fenced import Fenced
from runtime.journal import LeaseLost
from services import control, runs, steps
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.test_a_renewal_hung_on_a_lock_loses_its_lease import (
    hold_the_append_lock,
)

TTL = 2.0  # seconds: the test's own short lease


def until(check, what: str, seconds: float = 30) -> None:
    """Wait for `check` (a guard against hanging, never a measure)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


class Locked:
    """Another writer's transaction in the middle of its append, from `__enter__` to `let_go`."""

    def __init__(self, alias: str) -> None:
        self.locked, self.unlock = threading.Event(), threading.Event()
        args = (alias, self.locked, self.unlock)
        self.thread = threading.Thread(target=hold_the_append_lock, args=args)

    def __enter__(self) -> Locked:
        self.thread.start()
        assert self.locked.wait(10)
        return self

    def let_go(self) -> None:
        self.unlock.set()
        self.thread.join(30)

    def __exit__(self, *exc: object) -> None:
        self.let_go()


def write(writer: Fenced, out: list[object]) -> threading.Thread:
    """An append under the writer's fence, on a thread of its own; what came of it in `out`."""

    def run() -> None:
        try:
            version = writer.version("run-r1")
            out.append(writer.append("run-r1", [BudgetDebited(run_id="r1", amount=1)], version))
        except LeaseLost as exc:
            out.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@on_every_backend(transaction=True)
def test_a_renewal_that_lands_after_the_expiry_keeps_the_lease(alias, settings):
    settings.STEP_LEASE_SECONDS = TTL
    journal = DjangoJournal(alias)
    leases = Leases(journal, "r1")
    lease = leases.acquire("r1", "w1", TTL)
    writer = Fenced(journal, lease.stream, lease.epoch)
    written: list[object] = []
    with Locked(alias) as lock:
        beat = control.heartbeat(leases, lease, writer=writer)
        try:
            until(lambda: beat.overdue or beat.lost, "the lease to expire unrenewed")
            assert beat.overdue == [lease] and beat.lost == []
            waiting = write(writer, written)  # waits on the lease, not refused
            lock.let_go()  # the renewal lands, after the expiry
            until(lambda: beat.kept, "the late renewal to land")
            waiting.join(30)
        finally:
            [held] = beat.stop()
    assert beat.lost == [] and beat.overdue == []
    assert len(written) == 1 and not isinstance(written[0], LeaseLost)  # it went on
    renewal = leases.last("r1").event
    assert isinstance(renewal, LeaseRenewed) and renewal.epoch == lease.epoch
    assert renewal.t > lease.expires  # it landed after the expiry, nobody having taken it
    assert held.expires == renewal.expires
    assert leases.release(held, "stepped") is True


class Gated(DjangoJournal):
    """The database journal whose appends wait at a gate (a renewal held up on its way, as by
    a connection slow to answer); other writers' journals go straight through."""

    def __init__(self, alias: str) -> None:
        super().__init__(alias)
        self.gate = threading.Event()

    def append(self, *args, **kw):
        assert self.gate.wait(30)
        return super().append(*args, **kw)


@on_every_backend(transaction=True)
def test_a_lease_taken_while_its_renewal_hung_is_lost(alias, settings):
    settings.STEP_LEASE_SECONDS = TTL
    journal = Gated(alias)
    leases = Leases(journal, "r1")
    journal.gate.set()
    lease = leases.acquire("r1", "w1", TTL)
    journal.gate.clear()
    writer = Fenced(DjangoJournal(alias), lease.stream, lease.epoch)
    written: list[object] = []
    beat = control.heartbeat(leases, lease, writer=writer)
    try:
        until(lambda: beat.overdue or beat.lost, "the lease to expire unrenewed")
        waiting = write(writer, written)
        # Another worker takes the expired lease while the renewal is on its way.
        grant = LeaseGranted(run_id="r1", resource="r1", holder="w2", expires=9e9)
        DjangoJournal(alias).append(lease.stream, [grant], lease.version)
        journal.gate.set()  # the renewal arrives: refused, the stream moved under it
        until(lambda: beat.lost, "the renewal to find the lease taken")
        waiting.join(30)
    finally:
        journal.gate.set()
        beat.stop()
    assert beat.lost == [lease] and beat.kept == 0
    assert isinstance(written[0], LeaseLost)  # it wrote nothing
    assert leases.current("r1").holder == "w2"


@pytest.mark.usefixtures("nowhere")  # tests/conftest.py: the test drives each step
@on_every_backend(transaction=True)
def test_a_step_whose_renewal_lands_late_goes_on(alias, settings, monkeypatch):
    """A whole step: it waits at its first tool call (a fault), its lease's renewal waits on
    another writer's lock past the expiry, and lands once the lock is let go: the step is not
    `lost`, and the run goes on from where it was."""
    if alias != "default":
        pytest.skip("the steps' own journal is the default database's")
    settings.STEP_LEASE_SECONDS = TTL
    settings.FAULT = f"hang:ToolDispatched#1:{3 * TTL:g}"
    beats: list[object] = []
    real = steps.heartbeat

    def watched(*args, **kw):
        beats.append(real(*args, **kw))
        return beats[-1]

    monkeypatch.setattr(steps, "heartbeat", watched)  # the step's beat, to see it overdue
    run_id = runs.start_run("repo-fix", "first-flight")
    journal = DjangoJournal()
    outcomes: list[str] = []

    def worker() -> None:
        try:
            while not outcomes or outcomes[-1] == "stepped":
                outcomes.append(steps.drive_step(run_id, "w1"))
        finally:
            connections.close_all()

    driving = threading.Thread(target=worker)
    driving.start()
    try:
        until(
            lambda: any(r.event.kind == "ToolDispatched" for r in journal.read(f"run-{run_id}")),
            "the step to reach its first tool call",
            120,
        )
        with Locked(alias) as lock:
            until(lambda: beats[-1].overdue or beats[-1].lost, "the lease to expire unrenewed")
            lock.let_go()
            until(lambda: beats[-1].kept or beats[-1].lost, "the late renewal to answer")
    finally:
        driving.join(120)
    assert [b.kept for b in beats].count(1) == 1 and all(b.lost == [] for b in beats)
    assert outcomes[-1] == "done" and "lost" not in outcomes, outcomes
    released = [r.event for r in journal.read(f"lease-{run_id}")][-1]
    assert isinstance(released, LeaseReleased) and released.holder == "w1"
