"""A support desk's conflict, parked and then decided by a person, is one contest: the decision
settles the claims (a ClaimsReconciled of the reviewer's rule), and that was counted as another,
so a lost-update run's ownership conflict rate went from 0.5 to 1.0 when a reviewer decided,
and /metrics counted two contests of its three claims' worth."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.models import Conflict
from services import review, runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db


def rate(client, run_id: str) -> tuple[float, int, int]:
    found = client.get(f"/api/runs/{run_id}/metrics").json()["ownership_conflict_rate"]
    totals = client.get("/api/metrics").json()["totals"]
    detail = found["detail"]
    assert (totals["contested"], totals["claims"]) == (detail["contested"], detail["claims"])
    return found["value"], found["detail"]["contested"], found["detail"]["claims"]


@pytest.mark.parametrize("choice", ["first", "none"])
def test_deciding_a_parked_conflict_does_not_count_it_again(as_reviewer, choice):
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "C-1"})
    assert drive(run_id) == "escalated"
    projection.catch_up()
    before = rate(as_reviewer, run_id)
    assert before == (0.5, 1, 2)
    (conflict,) = Conflict.objects.filter(run_id=run_id)
    claim = conflict.claims[0]["claim_id"] if choice == "first" else "none"
    review.resolve(conflict.conflict_id, claim, "reviewer", "the customer asked first")
    projection.catch_up()
    assert rate(as_reviewer, run_id) == before
