"""The support desk on the project's database: orders in a table with a version column that
moves in step with the order's subject stream, refunds at a provider table keyed by our
idempotency key, and conflicts whose resolution commits by compare-and-swap."""

from __future__ import annotations

import pytest

from desk.models import Order, Refund
from desk.services import TableOrders, database_desk
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.coordination.claims import Claims
from runtime.events import ClaimsReconciled, ConflictResolved, EffectStarted, EffectSucceeded
from runtime.team import Services
from services import conflict_errors, effects, review
from teams.desk.services import DeskServices
from teams.desk.tools import SUPPORT_AGENT
from tests.conftest import on_every_backend

pytestmark = on_every_backend(transaction=True)


def fly(alias, tmp_path, scenario, **settings):
    run_id = flight.new_run_id()
    config = flight.plan("support-desk", scenario, run_id, **settings)
    journal = DjangoJournal(alias)
    outcome = flight.fly(
        journal,
        config,
        run_id,
        tmp_path,
        services=Services(provided=(DeskServices(desk=database_desk(alias)),)),
    )
    return journal, run_id, "o-" + run_id.removeprefix("r-"), outcome


def test_a_retried_refund_on_the_database_is_one_refund(alias, tmp_path):
    journal, _, order_id, outcome = fly(alias, tmp_path, "double-refund")
    assert outcome.status == "done", outcome.reason
    [refund] = Refund.objects.using(alias).filter(order_id=order_id)
    [started] = [
        r.event for r in journal.read_prefix("effect-") if isinstance(r.event, EffectStarted)
    ]
    assert refund.key == started.key and refund.amount_cents == 4999
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version, row.updated_by) == ("refunded", 2, SUPPORT_AGENT)
    assert journal.version(f"subject-order:{order_id}") == row.version  # in step


def test_a_parked_conflict_resolved_commits_the_choice_by_cas_and_audits_it(alias, tmp_path):
    journal, run_id, order_id, outcome = fly(alias, tmp_path, "lost-update")
    assert outcome.status == "escalated" and "HUMAN_REQUIRED" in outcome.reason
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version) == ("shipped", 2)  # the loser overwrote nothing
    [parked] = [r.event for r in journal.read_prefix("conflict-") if r.event.run_id == run_id]
    cancel = next(c["claim_id"] for c in parked.claims if c["value"] == "cancelled")
    decision = review.resolve(
        parked.conflict_id, cancel, "ann", "she asked before it left", using=alias
    )
    assert decision.committed == {"service": "orders", "key": order_id, "version": 3}
    row.refresh_from_db(using=alias)
    assert (row.status, row.version, row.updated_by) == ("cancelled", 3, "reviewer:ann")
    fact = journal.read(f"subject-order:{order_id}")[-1].event
    assert (fact.value, fact.based_on, fact.by) == ("cancelled", 2, "reviewer:ann")
    [resolved] = [r.event for r in journal.read(f"conflict-{parked.conflict_id}")][1:]
    assert isinstance(resolved, ConflictResolved) and resolved.reason == "she asked before it left"
    settled = [
        r.event
        for r in journal.read(f"claims-order:{order_id}")
        if isinstance(r.event, ClaimsReconciled)
    ]
    assert settled[-1].winner == cancel and len(settled[-1].losers) == 1  # the loser stays
    assert len(Claims(journal).all(f"order:{order_id}")) == 2
    assert Claims(journal).live(f"order:{order_id}", "status") == []
    with pytest.raises(conflict_errors.ConflictAlreadyDecided):
        review.resolve(parked.conflict_id, cancel, "bob", "again", using=alias)


def test_a_resolution_is_refused_when_the_order_moved_since_it_was_parked(alias, tmp_path):
    journal, run_id, order_id, _ = fly(alias, tmp_path, "lost-update")
    [parked] = [r.event for r in journal.read_prefix("conflict-") if r.event.run_id == run_id]
    TableOrders(journal, alias).set_status(order_id, "delivered", 2, "order-agent")
    cancel = next(c["claim_id"] for c in parked.claims if c["value"] == "cancelled")
    with pytest.raises(conflict_errors.ConflictMoved, match="parked at version 2"):
        review.resolve(parked.conflict_id, cancel, "ann", "late", using=alias)
    assert journal.version(f"conflict-{parked.conflict_id}") == 1  # nothing decided
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version) == ("delivered", 3)  # nothing overwritten


def test_the_effect_reconciler_asks_the_provider_about_refunds_left_in_flight(alias):
    journal = DjangoJournal(alias)
    for key in ("fx-accepted", "fx-never-seen"):
        started = EffectStarted(
            key=key, effect_type="refund", target="order:o-1", request_hash="h", run_id="r-1"
        )
        journal.append(f"effect-{key}", [started], 0)
    # The worker died after the provider accepted the first and before the ledger heard.
    Refund.objects.using(alias).create(key="fx-accepted", order_id="o-1", amount_cents=5)
    assert sorted(effects.reconcile(older_than=0, using=alias)) == [
        ("fx-accepted", "succeeded"),
        ("fx-never-seen", "unknown"),
    ]
    [_, outcome] = [r.event for r in journal.read("effect-fx-accepted")]
    assert isinstance(outcome, EffectSucceeded) and outcome.reconciled
    assert outcome.result["refund_id"] == "rf-accepted"
    assert effects.reconcile(older_than=0, using=alias) == []  # settled once
