"""When the gate refuses the desk reconciler's commit of a rule's winner, the conflict is parked
for a person with the claims the rule decided between: neither the gate's evidence (a claim of
the value) nor the claims parked read the order's whole claims stream, which every run on the
order adds to (teams/desk/harness.py reconcile_status). Both read every claim ever made about
the order: what this reads is the same at 4 earlier runs' decisions and at 200."""

from __future__ import annotations

import types

import pytest

from desk.services import TableOrders, TableRefunds, release
from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims, Rules
from runtime.coordination.gates import Intents
from runtime.events import ConflictParked, OrderPrepared
from teams.desk import harness
from teams.desk.services import Desk, subject
from teams.desk.settings import DeskSettings
from teams.desk.tools import SUPPORT_AGENT
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting
from tests.coordination.desk_tools import open_order

SUPPORT_DECIDES = {"status": {SUPPORT_AGENT: 2, "order-agent": 1}}


@on_every_backend()
@pytest.mark.parametrize("earlier", [4, 200])
def test_a_refused_commit_parks_the_decided_claims_reading_none_before(alias, earlier):
    order_id = f"o-refused-{earlier}"
    about = subject(order_id)
    stream = Claims.stream(about)
    intent_id, version = open_order(alias, order_id)
    journal = DjangoJournal(alias)
    claims = Claims(journal)
    rules = Rules(SUPPORT_DECIDES)
    for n in range(earlier):  # earlier runs' agents disagree; the reconciler decides each time
        claims.claim(about, "status", "shipped", n, "order-agent", "model", run_id=f"r-{n}")
        claims.claim(about, "status", "cancelled", n, SUPPORT_AGENT, "model", run_id=f"r-{n}")
        assert claims.reconcile(about, "status", rules, run_id=f"r-{n}").status == "decided"
    run_id = "r-refused"
    shipped = claims.claim(about, "status", "shipped", 1, "order-agent", "model", run_id=run_id)
    cancel = claims.claim(about, "status", "cancelled", 1, SUPPORT_AGENT, "model", run_id=run_id)
    # A person supersedes the ticket's intent: the gate refuses the reconciler's commit.
    Intents(journal).declare(intent_id, "do NOT cancel: hold it", "ceo", "fraud")
    counting = Counting(journal)
    session = types.SimpleNamespace(journal=counting, run_id=run_id)
    desk = Desk(TableOrders(counting, alias), TableRefunds(alias), journal, release)
    prepared = OrderPrepared(
        run_id=run_id,
        order_id=order_id,
        status="delivered",
        amount_cents=4999,
        order_version=1,
        intent_id=intent_id,
        intent_version=version,
    )
    settings = DeskSettings(authority=SUPPORT_DECIDES)
    reconciled = harness.reconcile_status(session, desk, settings, prepared)
    assert reconciled["status"] == "parked"
    assert reconciled["rule"].startswith("the gate refused the reconciler's commit (intent)")
    [parked] = [r.event for r in journal.read(f"conflict-{reconciled['conflict_id']}")]
    assert isinstance(parked, ConflictParked)
    assert [c["claim_id"] for c in parked.claims] == [shipped.claim_id, cancel.claim_id]
    # The reconciler's read (the last note, which lists no claim, and the two claims since;
    # whether either was asserted before finds none) and the live claims after its decision
    # (its note, listing none): nothing of the earlier runs' claims.
    assert counting.handed[stream] == 3 + 1
