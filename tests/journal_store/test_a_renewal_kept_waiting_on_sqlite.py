"""A lease renewed while another connection holds SQLite's write lock stands for its ttl from
when it lands: it was built before, and a renewal kept waiting 7 s on a 6 s lease landed
already expired, so the reconciler handed a run whose worker was alive to another worker,
which ran the tool in flight a second time."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from django.db import connection, connections

from journal_store.journal import DjangoJournal
from runtime.coordination.leases import Leases, standing
from tests.runtime.test_a_renewal_counts_from_its_landing import Clock

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_renewal_kept_waiting_on_the_write_lock_stands_for_its_ttl_from_its_landing():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write lock")
    clock = Clock(1000.0)
    leases = Leases(DjangoJournal(), clock=clock)
    lease = leases.acquire("run-stall", "w1", ttl=6)
    clock.read.clear()
    renewed = []

    def renew() -> None:
        try:
            renewed.append(leases.renew(lease, ttl=6))
        finally:
            connections.close_all()  # this thread's own connection

    holder = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    renewing = threading.Thread(target=renew)
    try:
        renewing.start()
        assert clock.read.wait(10)  # the renewal is built; its transaction waits for the lock
        clock.now += 7  # longer than the whole lease
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    renewing.join(30)
    [held] = renewed
    assert held.expires == 1013.0
    last = leases.last("run-stall")
    assert last.event.expires == 1013.0 and standing(last).live(clock())
    assert leases.acquire("run-stall", "w2", ttl=6) is None
