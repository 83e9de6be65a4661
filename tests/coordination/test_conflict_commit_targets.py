"""Where a reviewer's decision is committed is a registry: the review service knows no orders,
the desk registers its own target when its app is ready, and a conflict naming a target nobody
registered is refused with a typed error, deciding nothing."""

from __future__ import annotations

import pytest

from desk import conflicts
from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims
from runtime.events import ClaimsReconciled, ConflictParked, ConflictResolved
from services import conflict_errors, review

pytestmark = pytest.mark.django_db(transaction=True)


def parked_on(kind: str, conflict_id: str = "cf-1") -> ConflictParked:
    conflict = ConflictParked(
        run_id="r-0123456789ab",
        conflict_id=conflict_id,
        subject="bin:7",
        predicate="count",
        conflict_type="value",
        claims=[{"claim_id": "c1", "value": 3}, {"claim_id": "c2", "value": 4}],
        commit={"service": kind, "key": "bin:7", "version": 1},
    )
    review.park(conflict)
    return conflict


def test_a_conflict_whose_target_nobody_registered_is_refused_and_nothing_is_decided():
    parked_on("warehouse")
    journal = DjangoJournal()
    with pytest.raises(conflict_errors.UnknownCommitTarget, match="'warehouse'") as refused:
        review.resolve("cf-1", "c1", "ann", "three were counted")
    assert refused.value.kind == "warehouse"
    assert "registered: facts, orders" in str(refused.value)
    assert isinstance(
        refused.value, conflict_errors.ConflictError
    )  # answered as a refusal, not a crash
    assert journal.version("conflict-cf-1") == 1  # no decision
    assert not any(
        isinstance(r.event, ClaimsReconciled) for r in journal.read(Claims.stream("bin:7"))
    )


def test_rejecting_every_claim_commits_nothing_and_so_needs_no_target():
    parked_on("warehouse")
    decision = review.resolve("cf-1", review.NONE, "ann", "neither count is right")
    assert decision.committed is None
    assert DjangoJournal().version("conflict-cf-1") == 2


def test_the_desk_registers_its_orders_target_when_its_app_is_ready():
    assert review.TARGETS["orders"] is conflicts.commit_status
    assert review.TARGETS["facts"] is review.commit_fact


def test_a_newly_registered_target_is_committed_to_without_changing_the_review_service(
    monkeypatch,
):
    written: list[tuple[str, object, str]] = []

    def commit_count(parked, value, by, journal):
        written.append((parked.commit["key"], value, by))
        return {"service": "bins", "key": parked.commit["key"], "version": 2}

    monkeypatch.setitem(review.TARGETS, "bins", commit_count)
    parked_on("bins")
    decision = review.resolve("cf-1", "c2", "ann", "recounted: four")
    assert written == [("bin:7", 4, "ann")]
    [_, resolved] = [r.event for r in DjangoJournal().read("conflict-cf-1")]
    assert isinstance(resolved, ConflictResolved)
    assert (
        resolved.committed
        == decision.committed
        == {"service": "bins", "key": "bin:7", "version": 2}
    )


def test_a_second_function_for_a_registered_kind_is_refused():
    with pytest.raises(ValueError, match="'orders' is registered already"):
        review.register_commit_target("orders", review.commit_fact)
    assert review.TARGETS["orders"] is conflicts.commit_status
