"""A desk run whose driver dies after the payment provider made the refund and before its
EffectSucceeded was written, resumed by a driver that took the run's lease over: the refund is
sent again under its key (the provider deduplicates on it), its receipt recorded, and the run
ends with the journal and the provider's book of an uninterrupted run. Before, the resumed
tool was answered EffectInProgress: the agent was told its refund had not gone through.

On the project's database (SQLite, and PostgreSQL where it runs), fenced as on the workers."""

from __future__ import annotations

import re

import pytest

from desk.models import Refund
from desk.services import TableOrders, TableRefunds, release
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.coordination.leases import Leases
from runtime.events import EffectResumed
from runtime.faults import Faults
from runtime.fenced import Fenced
from runtime.team import Services
from teams.desk.services import Desk, DeskServices
from tests.conftest import on_every_backend
from tests.teams.desk.test_a_status_change_run_again_answers_as_its_first_run import normalised

# The scenario's refund, answered at once (its provider's latency and timeout are for the
# timeout it is about, not this).
SETTINGS = {"desk": {"provider_latency": 0.0, "tool_timeout": 2.0}}


class Killed(BaseException):
    """The driver dies."""


class Dying(Faults):
    """The process dies right after issue_refund's run, before its ToolReturned, once the
    provider made the refund and its performer died before recording it."""

    died = False

    @property
    def armed(self) -> bool:
        return True

    def executed(self, run_id, tool, ordinal, dispatch):
        if self.died:
            raise Killed()


def services(alias, dying: Dying | None):
    class Payments(TableRefunds):
        def refund(self, key, order_id, amount_cents):
            receipt = super().refund(key, order_id, amount_cents)
            if dying is not None and not dying.died:
                dying.died = True
                # The tool's thread ends here, silently, as the process would: its effect
                # is made at the provider and the ledger never hears of it.
                raise SystemExit()
            return receipt

    def make(journal, root, settings):
        return Desk(TableOrders(journal, alias), Payments(alias), DjangoJournal(alias), release)

    return Services(provided=(DeskServices(desk=make),))


@on_every_backend(transaction=True)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # it died
def test_a_refund_killed_before_its_outcome_is_sent_again_and_made_once(alias, tmp_path):
    journal = DjangoJournal(alias)

    def fly(run_id, dying=None):
        lease = Leases(journal).acquire(run_id, "worker-1", ttl=0)
        config = flight.plan("support-desk", "double-refund", run_id, **SETTINGS)
        return flight.fly(
            Fenced(journal, *lease.fence),
            config,
            run_id,
            tmp_path / run_id,
            services=services(alias, dying),
            faults=dying,
        )

    def seen(run_id):
        order_id = "o-" + run_id.removeprefix("r-")
        refunds = list(Refund.objects.using(alias).filter(order_id=order_id))
        text = normalised([r.event for r in journal.read(f"run-{run_id}")], run_id)
        # The provider's receipt names the refund by its key, hashed from the run's id.
        return re.sub(r"\brf-[0-9a-f]{16}\b", "rf-ID", text), [r.amount_cents for r in refunds]

    reference = flight.new_run_id()
    done = fly(reference)
    assert done.status == "done", done.reason

    run_id = flight.new_run_id()
    with pytest.raises(Killed):
        fly(run_id, Dying())
    lease = Leases(journal).acquire(run_id, "worker-2", ttl=60)
    outcome = flight.resume(
        Fenced(journal, *lease.fence), run_id, tmp_path / run_id, services=services(alias, None)
    )
    assert outcome.status == done.status, outcome.reason
    assert seen(run_id) == seen(reference)  # the run's journal, and one refund of 4999
    assert seen(run_id)[1] == [4999]
    taken = [
        r.event
        for r in journal.read_all()
        if isinstance(r.event, EffectResumed) and r.event.run_id == run_id
    ]
    assert [(e.after_epoch, e.epoch) for e in taken] == [(1, 2)]
