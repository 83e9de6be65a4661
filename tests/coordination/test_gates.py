"""Intents and leases at the mutation gate, on SQLite and PostgreSQL: a stale lease epoch and a
superseded intent version are refused even when their holder is alive and sure of itself."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Intents, Leases
from runtime.coordination.mutation import Authority, Evidence, GateRefused, Mutation, MutationGate
from tests.journal_store.conftest import on_every_backend

ALLOWED = Authority.of({"set_status": {"support-agent"}})


def setting_status(lease, intent=("ticket-4471", 1)):
    return Mutation(
        what="set status",
        actor="support-agent",
        capability="set_status",
        intent=intent,
        lease=lease.fence,
        evidence=(Evidence("order 4471 read", True),),
        key="fx-1",
    )


@on_every_backend()
def test_a_stale_epoch_is_rejected_after_the_lease_moves_even_if_its_owner_is_alive(alias):
    journal = DjangoJournal(alias)
    Intents(journal).declare("ticket-4471", "refund", by="ann")
    leases = Leases(journal)
    first = leases.acquire("order:4471", "orders-agent", ttl=-1)  # already expired
    second = leases.acquire("order:4471", "support-agent", ttl=60)
    assert second.epoch == first.epoch + 1
    assert leases.acquire("order:4471", "third", ttl=60) is None  # live and held by another
    gate = MutationGate(journal, ALLOWED, "log-order:4471")
    gate.check(setting_status(second))
    with pytest.raises(GateRefused, match="carries epoch 1 of lease-order:4471, which stands at"):
        gate.check(setting_status(first))
    [rejected] = [r.event for r in journal.read("log-order:4471")]
    assert (rejected.check, rejected.held, rejected.current) == ("lease", 1, 2)


@on_every_backend()
def test_a_superseded_intent_is_rejected_at_the_gate(alias):
    journal = DjangoJournal(alias)
    intents = Intents(journal)
    intents.declare("ticket-4471", "refund", by="ann")
    intents.declare("ticket-4471", "replace instead", by="ann", based_on=1)
    lease = Leases(journal).acquire("order:4471", "support-agent", ttl=60)
    gate = MutationGate(journal, ALLOWED, "log-order:4471")
    with pytest.raises(GateRefused, match="under version 1 of intent ticket-4471"):
        gate.check(setting_status(lease))
    gate.check(setting_status(lease, ("ticket-4471", 2)))
    [rejected] = [r.event for r in journal.read("log-order:4471")]
    assert (rejected.check, rejected.held, rejected.current) == ("intent", 1, 2)
