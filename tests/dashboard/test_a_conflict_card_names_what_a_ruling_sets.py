"""A conflict card says what committing a claim sets in words: "the status of order o-1a2b",
where it read "sets orders o-1a2b", the target's kind read as a typo."""

from __future__ import annotations

import pytest

from runtime.events import ConflictParked
from services import review

pytestmark = pytest.mark.django_db


def parked(conflict_id: str, commit: dict) -> None:
    review.park(
        ConflictParked(
            run_id="r-5ec0decided",
            conflict_id=conflict_id,
            subject="order:o-1a2b",
            predicate="status",
            conflict_type="state",
            claims=[{"claim_id": "k1", "value": "refunded"}, {"claim_id": "k2", "value": "kept"}],
            commit=commit,
        )
    )


def test_a_card_names_the_order_a_ruling_sets(as_reviewer):
    parked("c-order", {"service": "orders", "key": "o-1a2b", "version": 3})
    page = as_reviewer.get("/review/conflicts").content.decode()
    assert (
        "Committing a claim sets the status of order o-1a2b by compare-and-swap from version 3"
    ) in page
    assert "sets orders" not in page


def test_a_card_names_the_subject_of_a_journal_fact(as_reviewer):
    parked("c-fact", {"service": "facts", "key": "order:o-1a2b", "version": 2})
    page = as_reviewer.get("/review/conflicts").content.decode()
    assert "sets the status of subject order:o-1a2b by compare-and-swap from version 2" in page
