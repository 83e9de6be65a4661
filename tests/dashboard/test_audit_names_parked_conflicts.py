"""The audit trail names each conflict parked for a person: when, on what, and what each claim
said. It held the person's ruling (ConflictResolved) and not what was put before them: the
lost-update run's trail showed no refused write and no escalation, only the run's end."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import AuditEntry
from runtime.events import ConflictParked, TeamStarted

pytestmark = pytest.mark.django_db

RUN = "r-0a0d17c0ffee"
MIGRATION = importlib.import_module("journal_store.migrations.0026_conflicts_parked_in_the_audit")


def parked(value: str = "cancelled") -> int:
    """A desk run with one conflict parked; the position of its ConflictParked."""
    journal = DjangoJournal()
    journal.append(
        f"run-{RUN}",
        [TeamStarted(run_id=RUN, team="support-desk", scenario="lost-update", task="t")],
        0,
    )
    claims = [
        {"claim_id": "cl-1", "agent": "order-agent", "value": "shipped", "based_on": 1},
        {"claim_id": "cl-2", "agent": "support-agent", "value": value, "based_on": 1},
    ]
    conflict = ConflictParked(
        run_id=RUN,
        conflict_id="cf-0123456789abcdef",
        subject="order:o-1",
        predicate="status",
        conflict_type="state",
        claims=claims,
    )
    [stored] = journal.append("conflict-cf-0123456789abcdef", [conflict], 0)
    projection.catch_up()
    return stored.position


def test_the_audit_tab_names_the_conflict_put_before_a_person(as_owner):
    at = parked()
    [entry] = AuditEntry.objects.filter(run_id=RUN, what="ConflictParked")
    assert (entry.position, entry.who, entry.human) == (at, "harness", False)
    assert entry.detail["conflict"] == "cf-0123456789abcdef"
    page = as_owner.get(f"/runs/{RUN}/?tab=audit").content.decode()
    assert '<span class="badge ConflictParked">ConflictParked</span>' in page
    assert (
        "the rules could not reconcile the claims on order:o-1 status (a state conflict): "
        "order-agent said &#x27;shipped&#x27;; support-agent said &#x27;cancelled&#x27;; "
        "parked for a person"
    ) in page


def test_a_claimed_value_is_quoted_short_and_escaped(as_owner):
    parked(value="<script>alert(1)</script>" + "x" * 200)
    page = as_owner.get(f"/runs/{RUN}/?tab=audit").content.decode()
    assert "<script>alert(1)" not in page
    assert "support-agent said &#x27;&lt;script&gt;alert(1)&lt;/script&gt;xxx" in page
    assert "x" * 100 not in page


def test_the_migration_writes_the_entries_of_runs_projected_before_it():
    parked()
    projected = list(
        AuditEntry.objects.order_by("run_id", "position").values(
            "run_id", "position", "what", "who", "detail"
        )
    )
    AuditEntry.objects.filter(what="ConflictParked").delete()  # as the tables stood before it
    MIGRATION.fill(apps, SimpleNamespace(connection=connection))
    assert list(
        AuditEntry.objects.order_by("run_id", "position").values(
            "run_id", "position", "what", "who", "detail"
        )
    ) == (projected)
    MIGRATION.fill(apps, SimpleNamespace(connection=connection))  # twice: nothing more
    assert AuditEntry.objects.filter(what="ConflictParked").count() == 1
    projection.rebuild()
    assert list(
        AuditEntry.objects.order_by("run_id", "position").values(
            "run_id", "position", "what", "who", "detail"
        )
    ) == (projected)
