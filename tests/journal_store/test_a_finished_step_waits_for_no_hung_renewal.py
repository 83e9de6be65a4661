"""A step that finished gives its lease back without waiting for a renewal hung in the
database (another writer's lock, a connection that does not answer): the heartbeat's `stop()`
waited for its thread, so the step sat in a renewal it no longer needed for as long as the
database kept it (SQLite's busy wait, 30 s). The renewal still in flight writes nothing that
matters: the release moves the lease stream under it, and nothing is reported after the stop
(no `on_lost` ending the children or giving up the writer of what the thread does next).

A real lock on every backend: another transaction in the middle of its append."""

from __future__ import annotations

import threading

from journal_store.journal import DjangoJournal
from runtime import children
from runtime.coordination.leases import Leases
from runtime.events import LeaseReleased
from runtime.fenced import Fenced
from services.control import heartbeat
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.test_a_renewal_hung_on_a_lock_loses_its_lease import (
    hold_the_append_lock,
)

TTL = 3.0  # seconds of the test's clock, which stands still: the lease never runs out


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Watched(DjangoJournal):
    """The database journal, saying when an append has been asked of it."""

    def __init__(self, alias: str) -> None:
        super().__init__(alias)
        self.asked = threading.Event()

    def append(self, *args, **kw):
        self.asked.set()
        return super().append(*args, **kw)


@on_every_backend(transaction=True)
def test_a_stopped_heartbeat_leaves_its_hung_renewal_and_reports_nothing(alias, settings):
    settings.STEP_LEASE_SECONDS = TTL
    clock = Clock(1000.0)
    journal = Watched(alias)
    leases = Leases(journal, "r1", clock=clock)
    lease = leases.acquire("r1", "w1", TTL)
    writer = Fenced(journal, lease.stream, lease.epoch)
    locked, unlock = threading.Event(), threading.Event()
    other = threading.Thread(target=hold_the_append_lock, args=(alias, locked, unlock))
    other.start()
    assert locked.wait(10)
    journal.asked.clear()
    clock.now = 1002.5  # past a third of the lease: the first beat is due at once
    beats: list[object] = []
    stopped: list[object] = []

    def step() -> None:
        """The step's thread: its heartbeat, and its stop once the renewal is in flight."""
        beats.append(heartbeat(leases, lease, writer=writer))
        assert journal.asked.wait(10)  # the renewal is in the database, waiting on the lock
        stopped.append(beats[0].stop())

    stepping = threading.Thread(target=step)
    try:
        stepping.start()
        stepping.join(10)  # a guard, not a measure: the lock is held far longer than this
        assert stopped, "stop() waited for the renewal hung on another writer's lock"
        beat = beats[0]
        assert beat._thread.is_alive()  # the renewal is still waiting
    finally:
        unlock.set()
        other.join(30)
        stepping.join(30)
    [held] = stopped[0]
    assert leases.release(held, "stepped") is True  # ours to give back: nobody took it
    beat._thread.join(30)  # the stray renewal answers (refused, or landed before the release)
    writer.fence = ("lease-r1", 99)  # the flight's writer moved on to the next step's lease
    writer.refuse_if_given_up()  # nothing gave it up after the stop
    assert beat.lost == [] and children.holding() is None
    last = leases.last("r1")
    assert isinstance(last.event, LeaseReleased) and last.event.outcome == "stepped"
