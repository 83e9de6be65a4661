"""A claim settled by another conflict's ruling while a ruling choosing it is under way.

Two runs on one order share its claims stream, so the second run's conflict holds the first
run's claims too. A ruling reads which of its claims were settled since its conflict was
parked, then writes its decision: another ruling could settle the chosen claim in between,
and the journal said the claim lost (the other ruling) and then won (this one), and this one's
value was committed. The target's compare-and-swap did not catch it when the other ruling
rejected both claims, which commits nothing. The decision is now appended to the claims stream
at the version its check read: the ruling that comes second checks again, and is refused
(ClaimSettled) when its claim was settled, or goes on without naming the claims settled since.
Each test stops one ruling between its check and its write and runs the other in between.
"""

from __future__ import annotations

from typing import Any

import pytest

from desk.models import Order
from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims
from runtime.events import ClaimsReconciled, ConflictParked, ConflictResolved
from services import conflict_errors, review
from tests.conftest import on_every_backend
from tests.coordination.test_desk_db import fly

pytestmark = on_every_backend(transaction=True)


def two_conflicts(alias, tmp_path, order: str) -> tuple[ConflictParked, ConflictParked]:
    """The first run's conflict and the second's, both on `order` (the second holds the first
    run's two claims beside its own)."""
    parked = []
    for _ in range(2):
        journal, run_id, _, outcome = fly(alias, tmp_path, "lost-update", desk={"order_id": order})
        assert outcome.status == "escalated", outcome.reason
        [conflict] = [
            r.event
            for r in journal.read_prefix("conflict-")
            if isinstance(r.event, ConflictParked) and r.event.run_id == run_id
        ]
        parked.append(conflict)
    first, second = parked
    assert {c["claim_id"] for c in first.claims} < {c["claim_id"] for c in second.claims}
    return first, second


def claim_of(parked: ConflictParked, value: str) -> str:
    (found,) = [
        c["claim_id"] for c in parked.claims if c["value"] == value and c["run_id"] == parked.run_id
    ]
    return found


def meanwhile(monkeypatch, other: Any) -> None:
    """Run `other()` once, in the first ruling's window between its check and its write."""
    real = review.decide
    pending = [other]

    def decide(*args: Any, **kwargs: Any) -> ConflictResolved:
        if pending:
            pending.pop()()
        return real(*args, **kwargs)

    monkeypatch.setattr(review, "decide", decide)


def decisions_on(journal: DjangoJournal, order: str, claim: str) -> list[ClaimsReconciled]:
    return [
        r.event
        for r in journal.read(f"claims-order:{order}")
        if isinstance(r.event, ClaimsReconciled) and claim in (r.event.winner, *r.event.losers)
    ]


def test_a_claim_rejected_while_it_was_being_chosen_is_refused_and_nothing_is_written(
    alias, tmp_path, monkeypatch
):
    first, second = two_conflicts(alias, tmp_path, "R-1")
    journal = DjangoJournal(alias)
    chosen = claim_of(first, "cancelled")
    row = Order.objects.using(alias).get(order_id="R-1")
    events = len(journal.read_all())

    # Reviewer B rejects both claims on the second conflict (it holds the first run's claims)
    # while reviewer A's ruling choosing one of them is between its check and its write.
    meanwhile(
        monkeypatch,
        lambda: review.resolve(second.conflict_id, review.NONE, "bea", "neither", using=alias),
    )
    with pytest.raises(conflict_errors.ClaimSettled) as refused:
        review.resolve(first.conflict_id, chosen, "ann", "she asked first", using=alias)

    assert f"claim {chosen} ('cancelled' by support" in str(refused.value)
    assert f"by a ruling in run {second.run_id}" in str(refused.value)
    [rejected] = decisions_on(journal, "R-1", chosen)  # B's alone: nothing of A's
    assert rejected.winner == review.NONE and rejected.run_id == second.run_id
    assert journal.version(f"conflict-{first.conflict_id}") == 1  # still open
    after = Order.objects.using(alias).get(order_id="R-1")
    assert (after.status, after.version) == (row.status, row.version)  # nothing committed
    written = journal.read_all(after=0)[events:]
    # B's ruling, with its note of the claims live after it
    assert [r.event.kind for r in written] == [
        "ConflictResolved",
        "ClaimsReconciled",
        "LiveClaimsNoted",
    ]
    assert {r.stream for r in written} == {
        f"conflict-{second.conflict_id}",
        "claims-order:R-1",
    }


def test_rejecting_both_while_a_claim_is_chosen_elsewhere_leaves_that_claim_as_it_was_chosen(
    alias, tmp_path, monkeypatch
):
    first, second = two_conflicts(alias, tmp_path, "R-2")
    journal = DjangoJournal(alias)
    chosen = claim_of(first, "cancelled")
    other = claim_of(first, "shipped")
    ours = [claim_of(second, "shipped"), claim_of(second, "cancelled")]

    # Reviewer A chooses a claim of the first run on its conflict while reviewer B's rejection
    # of every claim on the second conflict is between its check and its write.
    meanwhile(
        monkeypatch,
        lambda: review.resolve(first.conflict_id, chosen, "ann", "she asked first", using=alias),
    )
    decided = review.resolve(second.conflict_id, review.NONE, "bea", "neither", using=alias)

    assert decided.choice == review.NONE
    [won] = decisions_on(journal, "R-2", chosen)  # A's alone: B did not reject it after
    assert won.winner == chosen and won.run_id == first.run_id
    assert [d.run_id for d in decisions_on(journal, "R-2", other)] == [first.run_id]
    [rejected] = [d for d in decisions_on(journal, "R-2", ours[0]) if d.run_id == second.run_id]
    assert sorted(rejected.losers) == sorted(ours)  # the claims still open when it went in
    row = Order.objects.using(alias).get(order_id="R-2")
    assert (row.status, row.updated_by) == ("cancelled", "reviewer:ann")


def test_a_ruling_whose_claims_move_at_every_check_gives_up_and_writes_nothing(
    alias, tmp_path, monkeypatch
):
    first, _ = two_conflicts(alias, tmp_path, "R-3")
    journal = DjangoJournal(alias)
    chosen = claim_of(first, "cancelled")
    version = Order.objects.using(alias).get(order_id="R-3").version
    real = review.decide
    asserted = []

    def decide(*args: Any, **kwargs: Any) -> ConflictResolved:
        # a run asserts a claim on the order between every check and its write
        asserted.append(
            Claims(journal).claim("order:R-3", "note", len(asserted), 0, "order-agent", "model")
        )
        return real(*args, **kwargs)

    monkeypatch.setattr(review, "decide", decide)
    with pytest.raises(conflict_errors.ClaimsMoved, match="kept changing"):
        review.resolve(first.conflict_id, chosen, "ann", "she asked first", using=alias)
    assert len(asserted) == review.RECHECKS + 1
    assert journal.version(f"conflict-{first.conflict_id}") == 1
    assert decisions_on(journal, "R-3", chosen) == []
    assert Order.objects.using(alias).get(order_id="R-3").version == version  # nothing committed


def test_a_claim_asserted_meanwhile_makes_the_ruling_check_again_and_go_on(
    alias, tmp_path, monkeypatch
):
    first, _ = two_conflicts(alias, tmp_path, "R-4")
    journal = DjangoJournal(alias)
    chosen = claim_of(first, "cancelled")
    meanwhile(
        monkeypatch,
        lambda: Claims(journal).claim("order:R-4", "note", "x", 0, "order-agent", "model"),
    )
    decided = review.resolve(first.conflict_id, chosen, "ann", "she asked first", using=alias)
    assert decided.value == "cancelled"
    [won] = decisions_on(journal, "R-4", chosen)
    assert won.winner == chosen and won.losers == [claim_of(first, "shipped")]
