"""A parallel-writers run forks at any event of its journal, from its first lease on: the fork
names its leases after itself (its own lease streams, as they stood at the fork point), never
its parent's, and driven to its end it replays identical."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import flight
from tests.dashboard.conftest import drive, run_of

pytestmark = pytest.mark.django_db(transaction=True)


def events(run_id: str):
    return DjangoJournal().read(f"run-{run_id}")


def lease_streams(run_id: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for r in DjangoJournal().read_prefix(f"lease-{run_id}:"):
        found.setdefault(r.stream, []).append(r.event.kind)
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "after"),
    [
        ("parallel-writers", ("LeaseTaken", 0)),
        ("parallel-writers", ("CommitmentMade", 1)),
        ("lost-writer", ("LeaseGivenBack", 0)),
        ("deadlocked-writers", ("DeadlockDetected", 0)),
    ],
)
def test_a_fork_after_a_writers_lease_goes_on_under_its_own_leases(as_owner, scenario, after):
    parent = run_of(scenario)
    assert RunSummary.objects.get(run_id=parent).status == "done"
    kind, nth = after
    at = [r.position for r in events(parent) if r.event.kind == kind][nth]
    response = as_owner.post(
        f"/api/runs/{parent}/fork", {"at": at}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    child = response.json()["run_id"]
    parents_leases = lease_streams(parent)
    # What the fork holds at its point, under its own names; the parent's leases are as the
    # parent left them.
    copied = lease_streams(child)
    held = [r.event for name in copied for r in DjangoJournal().read(name)]
    assert held and all(e.resource.startswith(f"{child}:") for e in held)  # theirs, renamed
    assert drive(child) != "stepped"
    assert RunSummary.objects.get(run_id=child).status == "done"
    assert lease_streams(parent) == parents_leases
    taken = [r.event.resource for r in events(child) if r.event.kind == "LeaseTaken"]
    assert taken and all(resource.startswith(f"{child}:") for resource in taken)
    assert flight.replay(DjangoJournal(), child).identical
