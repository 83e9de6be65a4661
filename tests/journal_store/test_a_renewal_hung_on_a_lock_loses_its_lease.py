"""A step's lease renewal kept waiting on another writer's lock (a PostgreSQL session holding
the append lock, SQLite's busy wait on the write lock: both wait up to 30 s or more) past its
lease's expiry is taken for lost at the expiry, while it still waits: the heartbeat ends the
step's children then, not once the database answers. Until then the heartbeat thread sat in
the renewal, and the step's git and tool runs went on after another worker could have taken
the run over.

At the expiry the lease is overdue (the step's writer waits, its children are ended): a
renewal that lands after all keeps the step (test_a_late_renewal_keeps_its_step.py); one that
has not answered another lease later loses it, the lock still held.

A real lock on every backend: another transaction in the middle of its append."""

from __future__ import annotations

import threading
import time

from django.db import connections, transaction

from journal_store.journal import DjangoJournal
from runtime.coordination.leases import Leases
from runtime.events import BudgetDebited
from services.control import heartbeat
from tests.journal_store.conftest import on_every_backend

TTL = 1.0  # seconds: the test's own short lease


def hold_the_append_lock(alias: str, locked: threading.Event, unlock: threading.Event) -> None:
    """Another writer's transaction, in the middle of its append, until `unlock`."""
    try:
        with transaction.atomic(using=alias):
            DjangoJournal(alias).append("run-other", [BudgetDebited(run_id="o", amount=1)], 0)
            locked.set()
            assert unlock.wait(60)
    finally:
        connections.close_all()


@on_every_backend(transaction=True)
def test_a_renewal_hung_on_another_writers_lock_loses_the_lease_at_its_expiry(alias, settings):
    settings.STEP_LEASE_SECONDS = TTL
    leases = Leases(DjangoJournal(alias), "r1")
    lease = leases.acquire("r1", "w1", TTL)
    locked, unlock = threading.Event(), threading.Event()
    other = threading.Thread(target=hold_the_append_lock, args=(alias, locked, unlock))
    other.start()
    assert locked.wait(10)
    beat = heartbeat(leases, lease)
    try:
        deadline = time.monotonic() + 10 * TTL
        while not beat.overdue and not beat.lost and time.monotonic() < deadline:
            time.sleep(0.01)
        assert beat.overdue == [lease] and beat.lost == []  # its holder waits, its children end
        while not beat.lost and time.monotonic() < deadline:
            time.sleep(0.01)
        assert beat.lost == [lease]  # while the lock is still held: not once it is let go
        assert time.time() >= lease.expires
        assert beat.renewals == 0  # its renewal is still waiting on the lock
    finally:
        unlock.set()
        other.join(30)
        beat.stop()
    assert beat.renewals == 0  # what landed after the loss does not bring the lease back
