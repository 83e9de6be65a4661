"""A person supersedes the intent after the mutation gate let a change through and before the
change is written: the write carries the intent's stream version as a guard, so nothing is
written, and the change, checked again, is refused (intent) as it would have been a moment
later. The interleaving is injected at the one place between the check and the write: a
person's ruling (services/review.py), a desk agent's status change and refund
(teams/desk/tools.py, runtime/coordination/effects.py), the desk reconciler's commit."""

from __future__ import annotations

import pytest

from desk.models import Order
from desk.services import TableRefunds
from runtime import flight
from runtime.coordination.claims import Claims
from runtime.coordination.gates import Intents
from runtime.coordination.mutation import GateRefused
from runtime.events import (
    ConflictParked,
    EffectStarted,
    FactChanged,
    FactReconciled,
    MutationRefused,
)
from runtime.jsonl import JsonlJournal
from services import conflict_errors, review
from teams import TEAMS
from teams.desk import harness
from tests.conftest import on_every_backend
from tests.coordination.desk_tools import desk_tools
from tests.coordination.test_desk_db import fly
from tests.teams.desk.test_desk import fly_desk, order_id_of
from tests.teams.desk.test_reconciler_through_the_gate import SUPPORT_DECIDES


def supersede(journal, order_id):
    Intents(journal).declare(f"ticket-{order_id}", "do NOT ship: hold it", "ceo", "fraud")


def refusals(journal, run_id):
    return [r.event for r in journal.read(f"gate-{run_id}") if isinstance(r.event, MutationRefused)]


@on_every_backend(transaction=True)
def test_a_ruling_whose_intent_is_superseded_before_its_decision_is_refused(
    alias, tmp_path, monkeypatch
):
    journal, run_id, order_id, _ = fly(alias, tmp_path, "lost-update")
    [parked] = [r.event for r in journal.read_prefix("conflict-") if r.event.run_id == run_id]
    assert isinstance(parked, ConflictParked)
    shipped = next(c["claim_id"] for c in parked.claims if c["value"] == "shipped")
    decide = review.decide

    def person_first(*args, **kwargs):  # the window between the gate and the decision
        if journal.version(f"intent-ticket-{order_id}") == 1:
            supersede(journal, order_id)
        return decide(*args, **kwargs)

    monkeypatch.setattr(review, "decide", person_first)
    with pytest.raises(conflict_errors.StaleRuling) as caught:
        review.resolve(parked.conflict_id, shipped, "ann", "carrier scan", using=alias)
    refused = caught.value.refused
    assert (refused.check, refused.held, refused.current) == ("intent", 1, 2)
    assert refusals(journal, run_id) == [refused]
    assert journal.version(f"conflict-{parked.conflict_id}") == 1  # nothing decided
    row = Order.objects.using(alias).get(order_id=order_id)
    assert (row.status, row.version) == ("shipped", 2)  # the lost-update's, not the ruling's
    assert journal.version(f"subject-order:{order_id}") == 2  # the commit was undone with it


@on_every_backend(transaction=True)
def test_a_status_change_whose_intent_is_superseded_before_its_write_is_refused(alias, monkeypatch):
    journal, run_id, tools = desk_tools(alias, "o-status")
    claim = Claims.claim

    def person_first(self, *args, **kwargs):  # the claim is made between the gate and the write
        supersede(journal, "o-status")
        return claim(self, *args, **kwargs)

    monkeypatch.setattr(Claims, "claim", person_first)
    with pytest.raises(GateRefused) as caught:
        tools.set_order_status("cancelled", 1, "the customer asked")
    assert (caught.value.refused.check, caught.value.refused.current) == ("intent", 2)
    assert refusals(journal, run_id) == [caught.value.refused]
    row = Order.objects.using(alias).get(order_id="o-status")
    assert (row.status, row.version) == ("delivered", 1)
    assert journal.version("subject-order:o-status") == 1


@on_every_backend(transaction=True)
def test_a_refund_whose_intent_is_superseded_before_it_starts_is_refused(alias, monkeypatch):
    journal, run_id, tools = desk_tools(alias, "o-refund")
    check = tools.gate.check
    calls = []

    def person_after_the_check(mutation):
        guards = check(mutation)
        if not calls:
            calls.append(mutation)
            supersede(journal, "o-refund")
        return guards

    monkeypatch.setattr(tools.gate, "check", person_after_the_check)
    with pytest.raises(GateRefused) as caught:
        tools.issue_refund(4999, "arrived broken")
    assert (caught.value.refused.check, caught.value.refused.current) == ("intent", 2)
    assert refusals(journal, run_id) == [caught.value.refused]
    started = [r for r in journal.read_prefix("effect-") if isinstance(r.event, EffectStarted)]
    assert started == [] and TableRefunds(alias).refunds("o-refund") == []


def test_a_reconciler_commit_whose_intent_is_superseded_before_its_write_is_parked(
    tmp_path, monkeypatch
):
    journal = JsonlJournal(tmp_path / "j.jsonl")
    order_id = order_id_of("r-custom")
    gate_commit = harness.gate_commit

    def person_after_the_check(session, *args):
        refused, guards = gate_commit(session, *args)
        if refused is None and not refusals(journal, session.run_id):
            supersede(journal, order_id)
        return refused, guards

    monkeypatch.setattr(harness, "gate_commit", person_after_the_check)
    desk = dict(TEAMS["support-desk"].scenarios["lost-update"].settings["desk"])
    _, run_id, finished = fly_desk(tmp_path, {}, journal=journal, **desk, authority=SUPPORT_DECIDES)
    events = [r.event for r in journal.read(f"run-{run_id}")]
    [reconciled] = [e for e in events if isinstance(e, FactReconciled)]
    assert reconciled.status == "parked"
    assert reconciled.rule.startswith("the gate refused the reconciler's commit (intent)")
    [refused] = refusals(journal, run_id)
    assert (refused.check, refused.held, refused.current) == ("intent", 1, 2)
    changes = [r.event for r in journal.read(f"subject-order:{order_id}")]
    assert [e.value for e in changes if isinstance(e, FactChanged)][-1] == "shipped"
    assert finished.status == "escalated"
    assert flight.replay(journal, run_id).identical
