"""A person's ruling on a parked conflict goes through the mutation gate: a stale one (the order
moved on, the ticket's intent was superseded) and one by a role that may not rule are refused
with MutationRefused naming the check, and nothing is decided or committed; the same ruling
posted twice is applied once."""

from __future__ import annotations

import pytest

from desk.models import Order
from desk.services import TableOrders
from journal_store.models import RunSummary, StoredEvent
from runtime.coordination.gates import Intents
from runtime.events import ConflictParked, FactChanged, MutationRefused
from services import conflict_errors, review
from tests.conftest import on_every_backend
from tests.coordination.test_desk_db import fly

pytestmark = on_every_backend(transaction=True)


def parked_of(journal, run_id):
    [parked] = [r.event for r in journal.read_prefix("conflict-") if r.event.run_id == run_id]
    assert isinstance(parked, ConflictParked)
    cancel = next(c["claim_id"] for c in parked.claims if c["value"] == "cancelled")
    return parked, cancel


def refusals(journal, run_id):
    return [r.event for r in journal.read(f"gate-{run_id}") if isinstance(r.event, MutationRefused)]


def test_a_ruling_on_an_order_that_moved_on_is_refused_at_the_gate(alias, tmp_path):
    journal, run_id, order_id, _ = fly(alias, tmp_path, "lost-update")
    parked, cancel = parked_of(journal, run_id)
    TableOrders(journal, alias).set_status(order_id, "delivered", 2, "order-agent")
    with pytest.raises(conflict_errors.StaleRuling, match="parked at version 2") as caught:
        review.resolve(parked.conflict_id, cancel, "ann", "late", using=alias)
    assert isinstance(
        caught.value, conflict_errors.ConflictMoved
    )  # still a 409 "moved" to the pages
    assert (caught.value.refused.check, caught.value.refused.actor) == ("evidence", "reviewer")
    assert refusals(journal, run_id) == [caught.value.refused]
    assert journal.version(f"conflict-{parked.conflict_id}") == 1  # nothing decided
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version) == ("delivered", 3)  # nothing overwritten


def test_a_ruling_under_a_superseded_intent_is_refused_and_nothing_is_committed(alias, tmp_path):
    journal, run_id, order_id, _ = fly(alias, tmp_path, "lost-update")
    parked, cancel = parked_of(journal, run_id)
    assert parked.commit["intent"] == {"id": f"ticket-{order_id}", "version": 1}
    Intents(journal).declare(f"ticket-{order_id}", "keep it", "bob", "the customer called back")
    before = StoredEvent.objects.using(alias).count()
    with pytest.raises(conflict_errors.StaleRuling) as caught:
        review.resolve(parked.conflict_id, cancel, "ann", "she asked first", using=alias)
    refused = caught.value.refused
    assert (refused.check, refused.held, refused.current) == ("intent", 1, 2)
    # who superseded it and why: the intent's stream is no run's, so the audit learns it here
    assert "which bob has since superseded with version 2 (the customer called back)" in str(
        caught.value
    )
    assert StoredEvent.objects.using(alias).count() == before + 1  # the refusal, in gate-<run>
    assert refusals(journal, run_id) == [refused]
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version) == ("shipped", 2)


def test_a_role_that_may_not_rule_is_refused_at_the_gate(alias, tmp_path):
    journal, run_id, order_id, _ = fly(alias, tmp_path, "lost-update")
    parked, cancel = parked_of(journal, run_id)
    with pytest.raises(conflict_errors.RulingNotAllowed) as caught:
        review.resolve(parked.conflict_id, cancel, "eve", "me", using=alias, role="viewer")
    assert (caught.value.refused.check, caught.value.refused.held) == ("authority", "viewer")
    assert journal.version(f"conflict-{parked.conflict_id}") == 1
    assert Order.objects.using(alias).get(order_id=order_id).version == 2


def test_the_same_ruling_posted_twice_is_applied_once(alias, tmp_path):
    journal, run_id, order_id, _ = fly(alias, tmp_path, "lost-update")
    parked, cancel = parked_of(journal, run_id)
    first = review.resolve(
        parked.conflict_id, cancel, "ann", "she asked first", using=alias, ruling_id="rl-click"
    )
    again = review.resolve(
        parked.conflict_id, cancel, "ann", "she asked first", using=alias, ruling_id="rl-click"
    )
    assert again == first and first.ruling_id == "rl-click"
    assert journal.version(f"conflict-{parked.conflict_id}") == 2  # one decision
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version) == ("cancelled", 3)  # one commit
    by_reviewer = [
        r.event
        for r in journal.read(f"subject-order:{order_id}")
        if isinstance(r.event, FactChanged) and r.event.by == "reviewer:ann"
    ]
    assert len(by_reviewer) == 1
    # the same ruling's id for another choice: one key, one request
    shipped = next(c["claim_id"] for c in parked.claims if c["value"] == "shipped")
    with pytest.raises(conflict_errors.RulingRefused) as caught:
        review.resolve(parked.conflict_id, shipped, "ann", "no", using=alias, ruling_id="rl-click")
    assert caught.value.refused.check == "idempotency"
    assert journal.version(f"conflict-{parked.conflict_id}") == 2
    assert Order.objects.using(alias).get(order_id=order_id).version == 3
    # another ruling on the decided conflict is "already decided", as before
    with pytest.raises(conflict_errors.ConflictAlreadyDecided):
        review.resolve(parked.conflict_id, cancel, "bob", "again", using=alias)


def test_rejecting_both_claims_closes_a_conflict_whose_intent_was_superseded(alias, tmp_path):
    # Committing a claim decided under the old intent is refused; rejecting both commits
    # nothing, and is the only way the conflict (and its run, waiting on it) can end.
    journal, run_id, order_id, _ = fly(alias, tmp_path, "lost-update")
    parked, cancel = parked_of(journal, run_id)
    Intents(journal).declare(f"ticket-{order_id}", "keep it", "bob", "the customer called back")
    with pytest.raises(conflict_errors.StaleRuling, match="rejecting both claims"):
        review.resolve(parked.conflict_id, cancel, "ann", "she asked first", using=alias)
    decision = review.resolve(
        parked.conflict_id, review.NONE, "ann", "the ticket changed", using=alias
    )
    assert (decision.choice, decision.committed) == (review.NONE, None)
    assert journal.version(f"conflict-{parked.conflict_id}") == 2  # decided
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version) == ("shipped", 2)  # nothing committed
    summary = RunSummary.objects.using(alias).get(run_id=run_id)
    assert summary.status == "resolved"
