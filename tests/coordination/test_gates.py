"""Intents, leases and message delivery at the mutation boundary, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Leases, Stale
from tests.journal_store.conftest import on_every_backend


@on_every_backend()
def test_a_stale_epoch_is_rejected_after_the_lease_moves_even_if_its_owner_is_alive(alias):
    journal = DjangoJournal(alias)
    leases = Leases(journal)
    first = leases.acquire("order:4471", "orders-agent", ttl=-1)  # already expired
    second = leases.acquire("order:4471", "support-agent", ttl=60)
    assert second.epoch == first.epoch + 1
    assert leases.acquire("order:4471", "third", ttl=60) is None  # live and held by another
    leases.check("order:4471", second.epoch, "set status", "log-order:4471")
    with pytest.raises(
        Stale, match="carries epoch 1 of the lease on order:4471, which is at epoch 2"
    ):
        leases.check("order:4471", first.epoch, "set status", "log-order:4471")
    [rejected] = [r.event for r in journal.read("log-order:4471")]
    assert (rejected.gate, rejected.held, rejected.current) == ("lease", 1, 2)
