"""A desk run whose driver dies after issue_refund passed the gate and journalled its
EffectStarted, before the effect's outcome was written (the provider reached or not), driven
again after a person superseded the ticket's intent. The same call run again started that
effect: it takes it over (EffectResumed) and the provider makes the refund once, under its key,
as the uninterrupted call would have. It used to be judged at the gate again, as a second
mutation, and refused on the intent: the tool answered GateRefused for a refund the provider
may have made, and the effect was left unsettled. Another call under the same key (the agent's
retry) is a new decision, and is still refused there.

On the project's database (SQLite, and PostgreSQL where it runs), fenced as on the workers; and
a journal whose EffectStarted is v2 (no call), read back from its file, resumes and replays as
before v3."""

from __future__ import annotations

import json

import pytest

from desk.models import Refund
from desk.services import TableOrders, TableRefunds, release
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.coordination.gates import Intents
from runtime.coordination.leases import Leases
from runtime.events import (
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    MutationRefused,
    ToolDispatched,
    ToolReturned,
)
from runtime.fenced import Fenced
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from runtime.tools import Call
from teams.desk.local import FilePayments, local_desk
from teams.desk.services import Desk, DeskServices
from teams.desk.tools import gate_log
from tests.conftest import on_every_backend
from tests.teams.desk.test_a_refund_killed_before_its_outcome import SETTINGS, Dying, Killed

WHEN = ["before the provider", "after the provider made it"]


def dying_payments(base, dying: Dying | None, when: str):
    """The provider, through which the performer dies once (its thread ends as the process
    would) with the EffectStarted written: before reaching the provider, or after it made the
    refund."""

    class Payments(base):
        def refund(self, key, order_id, amount_cents):
            if dying is None or dying.died:
                return super().refund(key, order_id, amount_cents)
            if when == WHEN[1]:
                super().refund(key, order_id, amount_cents)
            dying.died = True
            raise SystemExit()

    return Payments


def supersede(journal, run_id: str) -> None:
    """A person changes their mind while the run is down: the ticket's intent moves on."""
    order_id = "o-" + run_id.removeprefix("r-")
    Intents(journal).declare(f"ticket-{order_id}", "keep the order as it is", "customer")


def refund_calls(events) -> list[str]:
    """The refs of the run's issue_refund calls (runtime/tools.py Call), in order."""
    return [
        Call(f"run-{e.run_id}", version).ref
        for version, e in enumerate(events, start=1)
        if isinstance(e, ToolDispatched) and e.tool == "issue_refund"
    ]


@on_every_backend(transaction=True)
@pytest.mark.parametrize("when", WHEN)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # it died
def test_a_refund_killed_after_its_start_is_taken_over_by_its_call_not_refused(
    alias, tmp_path, when
):
    journal = DjangoJournal(alias)

    def services(dying):
        payments = dying_payments(TableRefunds, dying, when)

        def make(journal, root, settings):
            return Desk(TableOrders(journal, alias), payments(alias), DjangoJournal(alias), release)

        return Services(provided=(DeskServices(desk=make),))

    run_id = flight.new_run_id()
    order_id = "o-" + run_id.removeprefix("r-")
    lease = Leases(journal).acquire(run_id, "worker-1", ttl=0)
    config = flight.plan("support-desk", "double-refund", run_id, **SETTINGS)
    dying = Dying()
    with pytest.raises(Killed):
        flight.fly(
            Fenced(journal, *lease.fence),
            config,
            run_id,
            tmp_path / run_id,
            services=services(dying),
            faults=dying,
        )
    [started] = [r.event for r in journal.read_prefix("effect-") if r.event.run_id == run_id]
    assert isinstance(started, EffectStarted)
    supersede(journal, run_id)

    lease = Leases(journal).acquire(run_id, "worker-2", ttl=60)
    flight.resume(Fenced(journal, *lease.fence), run_id, tmp_path / run_id, services=services(None))

    events = [r.event for r in journal.read(f"run-{run_id}")]
    first, retry = refund_calls(events)
    assert started.call == first
    # The refund was made once at the provider, under the effect's key, and the journal says
    # so: started by the first call, taken over by it, succeeded.
    refunds = Refund.objects.using(alias).filter(order_id=order_id)
    assert [(r.key, r.amount_cents) for r in refunds] == [(started.key, 4999)]
    effect = [r.event for r in journal.read(f"effect-{started.key}")]
    assert [type(e) for e in effect] == [EffectStarted, EffectResumed, EffectSucceeded]
    returned = [e for e in events if isinstance(e, ToolReturned) and e.tool == "issue_refund"]
    assert returned[0].error is None
    assert returned[0].result["refund"] == effect[-1].result
    # The first call was not judged again; the retry, another call, was, and refused.
    refused = [r.event for r in journal.read(gate_log(run_id))]
    assert [(e.call, e.check) for e in refused if isinstance(e, MutationRefused)][:1] == [
        (retry, "intent")
    ]
    assert first not in {e.call for e in refused}
    assert returned[1].error is not None and returned[1].error.type == "GateRefused"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # it died
def test_a_journal_whose_start_is_v2_reads_back_resumes_and_replays_as_before(tmp_path):
    path = tmp_path / "j.jsonl"
    run_id = "r-desk-v2"

    def services(dying):
        payments = dying_payments(FilePayments, dying, WHEN[0])

        def make(journal, root, settings):
            desk = local_desk(journal, root, 0.0)
            return Desk(desk.orders, payments(root / "payments.sqlite3"), desk.outcomes)

        return Services(provided=(DeskServices(desk=make),))

    journal = JsonlJournal(path)
    lease = Leases(journal).acquire(run_id, "worker-1", ttl=0)
    config = flight.plan("support-desk", "double-refund", run_id, **SETTINGS)
    dying = Dying()
    with pytest.raises(Killed):
        flight.fly(
            Fenced(journal, *lease.fence),
            config,
            run_id,
            tmp_path,
            services=services(dying),
            faults=dying,
        )
    # The file as a Minutes before v3 wrote it: its EffectStarted at v2, naming no call.
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    [start] = [line for line in lines if line["kind"] == "EffectStarted"]
    assert start["v"] == 3 and start.pop("call")
    start["v"] = 2
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    journal = JsonlJournal(path)
    [started] = [r.event for r in journal.read_prefix("effect-")]
    assert isinstance(started, EffectStarted) and (started.v, started.call) == (3, None)
    # Nothing moved while it was down: judged at the gate again, as before v3, it passes and
    # takes its effect over; the refund is made once.
    lease = Leases(journal).acquire(run_id, "worker-2", ttl=60)
    outcome = flight.resume(
        Fenced(journal, *lease.fence), run_id, tmp_path, services=services(None)
    )
    assert outcome.status == "done", outcome.reason
    effect = [r.event for r in journal.read(f"effect-{started.key}")]
    assert [type(e) for e in effect] == [EffectStarted, EffectResumed, EffectSucceeded]
    refunds = FilePayments(tmp_path / "payments.sqlite3").refunds("o-desk-v2")
    assert refunds == [{"key": started.key, "amount_cents": 4999}]
    replayed = flight.replay(JsonlJournal(path), run_id)
    assert replayed.identical and replayed.complete, replayed.difference
