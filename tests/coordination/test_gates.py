"""Intents, leases and message delivery at the mutation boundary, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Intents, Leases, Stale
from runtime.coordination.inbox import Inbox
from runtime.events import MessageSent
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


@on_every_backend()
def test_a_message_of_a_superseded_intent_is_rejected(alias):
    journal = DjangoJournal(alias)
    intents, inbox = Intents(journal), Inbox(journal)
    intents.declare("refund-4471", "refund the missing item", "ann")
    message = MessageSent(
        message_id="m-1",
        performative="request",
        sender="orders",
        recipient="support",
        task_id="T1",
        payload={"refund": 5},
    )
    intents.declare("refund-4471", "do not refund: the item arrived", "ann", reason="stock came in")
    with pytest.raises(Stale, match="version 1 of intent refund-4471"):
        inbox.deliver(message, intent=("refund-4471", 1))
    assert inbox.received("support") == []
    kinds = [r.event.kind for r in journal.read("inbox-support")]
    assert kinds == ["StaleWorkRejected"]
    fresh = message.model_copy(update={"message_id": "m-2"})
    assert inbox.deliver(fresh, intent=("refund-4471", 2)) is True


@on_every_backend(transaction=True)
def test_a_message_delivered_twice_at_once_acts_once(alias):
    message = MessageSent(
        message_id="m-dup", performative="request", sender="a", recipient="b", task_id="T1"
    )
    barrier, acted = threading.Barrier(2), []

    def deliver() -> None:
        try:
            barrier.wait()
            acted.append(Inbox(DjangoJournal(alias)).deliver(message))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(acted) == [False, True]
    inbox = [r.event for r in DjangoJournal(alias).read("inbox-b")]
    assert [e.kind for e in inbox] == ["MessageSent", "MessageDelivered"] or [
        e.kind for e in inbox
    ] == ["MessageDelivered", "MessageSent"]
    assert [e.duplicate for e in inbox if e.kind == "MessageDelivered"] == [True]
