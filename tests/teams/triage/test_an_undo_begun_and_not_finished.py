"""A refund saga whose driver dies in the middle of an undo (the credit's reversal): the call
went out, and whether the orders server acted before the driver died is not known. The undo is
on the saga's stream before its call (SagaCompensating, with its idempotency key), so the run's
audit shows it begun and not finished, under the key; the driver that takes the run over sends
it again under that same key, the server reverses the credit once (a key it acted on answers
its first answer), and the saga's stream holds the undo begun once. Before, nothing of the
undo was on the saga's stream nor in the audit until it was done: the run showed its saga
turned back, and no word of money half moved back.

On the project's database, fenced by the run's lease as on the workers; the driver dies in
process (a BaseException) before the server's answer, or after it acted."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import AuditEntry
from runtime import flight
from runtime.coordination.leases import Leases
from runtime.events import (
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    SagaCompensated,
    SagaCompensating,
)
from runtime.fenced import Fenced
from runtime.team import Services
from teams.triage.services import TriageServices
from teams.triage.surface import default_surface
from tests.teams.triage.test_a_saga_step_killed_before_its_outcome import Killed, operations

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

UNDO = "orders.reverse_credit"


class DiesIn:
    """The orders surface, whose driver dies once in the reversal's call: before the server
    got it (`acted` False) or after the server made it (True)."""

    def __init__(self, book, acted: bool | None) -> None:
        self.inner = default_surface(book)
        self.acted = acted

    def call(self, name, args):
        if name == UNDO and self.acted is not None:
            acted, self.acted = self.acted, None
            if acted:
                self.inner.call(name, args)
            raise Killed(name)
        return self.inner.call(name, args)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def drive(journal, run_id, root, book, worker, acted=None):
    lease = Leases(journal).acquire(run_id, worker, ttl=0 if acted is not None else 60)
    fenced = Fenced(journal, *lease.fence)
    services = Services(provided=(TriageServices(mcp=lambda: DiesIn(book, acted)),))
    if acted is not None:
        config = flight.plan("support-triage", "refund-saga", run_id)
        return flight.fly(fenced, config, run_id, root, services=services)
    return flight.resume(fenced, run_id, root, services=services)


def audit(run_id):
    """The run's audit as its page shows it (the projection's rows)."""
    projection.catch_up()
    return list(AuditEntry.objects.filter(run_id=run_id).order_by("position"))


def saga_of(journal, run_id):
    return [r.event for r in journal.read(f"saga-refund-{run_id}")]


@pytest.mark.parametrize("acted", [False, True], ids=["before-the-server", "after-the-server"])
def test_an_undo_begun_is_audited_and_sent_again_under_its_key(tmp_path, acted):
    journal = DjangoJournal()
    run_id = flight.new_run_id()
    book = tmp_path / "book.sqlite3"
    with pytest.raises(Killed):
        drive(journal, run_id, tmp_path, book, "worker-1", acted)

    # Begun, under the key its effect was started with, and not finished.
    saga = saga_of(journal, run_id)
    [begun] = [e for e in saga if isinstance(e, SagaCompensating)]
    assert begun.step == "credit"
    assert not any(isinstance(e, SagaCompensated) for e in saga)
    [started] = [r.event for r in journal.read(f"effect-{begun.key}")]
    assert isinstance(started, EffectStarted) and started.effect_type == "saga-compensation"
    reversals = [kind for _, kind in operations(book) if kind == "reversal"]
    assert reversals == (["reversal"] if acted else [])

    [shown] = [a for a in audit(run_id) if a.what == "SagaCompensating"]
    assert (shown.detail["step"], shown.detail["key"]) == ("credit", begun.key)
    assert "money may still be moved" in shown.detail["why"]

    done = drive(journal, run_id, tmp_path, book, "worker-2")
    assert done.status == "done" and "undone: credit, label" in done.reason, done.reason
    # Sent again under the same key: the server holds one reversal, under that key.
    assert [kind for _, kind in operations(book)] == ["label", "credit", "reversal", "void"]
    assert (begun.key, "reversal") in operations(book)
    kinds = [type(r.event) for r in journal.read(f"effect-{begun.key}")]
    assert kinds == [EffectStarted, EffectResumed, EffectSucceeded]
    # The saga's stream says each undo begun once, then done, as an uninterrupted run's does.
    said = [(e.kind, e.step) for e in saga_of(journal, run_id) if e.kind.startswith("SagaComp")]
    assert said == [
        ("SagaCompensating", "credit"),
        ("SagaCompensated", "credit"),
        ("SagaCompensating", "label"),
        ("SagaCompensated", "label"),
    ]
    audited = [(a.what, a.detail.get("step")) for a in audit(run_id)]
    assert audited.index(("SagaCompensated", "credit")) > audited.index(
        ("SagaCompensating", "credit")
    )
    assert flight.replay(journal, run_id).identical
