"""The same tool call run again looks for what it wrote (the gate's refusal of it, its claim on
an order) among the events after its dispatch alone: nothing a call writes comes before it
(runtime/coordination/calls.py). It read the gate's log and the subject's claims stream whole,
every run's history of them, on every check (bench/call_checks.py has the figures)."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims
from runtime.coordination.mutation import Authority, GateRefused, Mutation, MutationGate
from runtime.events import ClaimAsserted, MutationRefused, ToolDispatched
from runtime.tools import Call
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting

SUBJECT = "order:o-calls"
LOG = "gate-r-calls"
RUN = "run-r-calls"
EARLIER = 300  # other calls' refusals and claims, before the call in question


def refusal(call: str) -> MutationRefused:
    return MutationRefused(
        run_id="r-calls",
        what="support-agent refunding 1 cents",
        actor="support-agent",
        capability="refund",
        check="intent",
        reason="superseded",
        call=call,
    )


def claim(call: str, n: int) -> ClaimAsserted:
    return ClaimAsserted(
        run_id="r-calls",
        claim_id=f"cl-{n}",
        subject=SUBJECT,
        predicate="status",
        value="refunded",
        based_on=1,
        source="model",
        by="support-agent",
        call=call,
    )


def handed(counting: Counting) -> int:
    """The records of the gate's log and the subject's claims stream the journal handed out."""
    return counting.handed[LOG] + counting.handed[Claims.stream(SUBJECT)]


def dispatched(journal: DjangoJournal) -> Call:
    """A call of the run, dispatched now: after every event already in the journal."""
    at = journal.version(RUN) + 1
    journal.append(RUN, [ToolDispatched(run_id="r-calls", tool="issue_refund", args={})], at - 1)
    return Call(RUN, at)


@on_every_backend(transaction=True)
def test_a_call_run_again_reads_only_the_refusals_and_claims_after_its_dispatch(alias):
    journal = DjangoJournal(alias)
    earlier = [dispatched(journal).ref for _ in range(EARLIER)]
    journal.append(LOG, [refusal(ref) for ref in earlier], 0)
    claims = Claims.stream(SUBJECT)
    journal.append(claims, [claim(ref, n) for n, ref in enumerate(earlier)], 0)

    counting = Counting(journal)
    gate = MutationGate(counting, Authority.of({}), LOG)
    mine = dispatched(journal)
    asking = Mutation("a refund", "support-agent", "refund", None, call=mine.ref)
    gate.refused_before(asking)  # none given it
    assert Claims(counting).made_by(SUBJECT, mine.ref) is None
    # An earlier call's, all the same, is found: its dispatch came before its records.
    with pytest.raises(GateRefused):
        gate.refused_before(Mutation("a refund", "support-agent", "refund", None, call=earlier[7]))
    assert Claims(journal).made_by(SUBJECT, earlier[7]).claim_id == "cl-7"
    counting.handed.clear()

    # Refused since, and its claim made: each check reads those records alone.
    journal.append(LOG, [refusal(mine.ref)], EARLIER)
    journal.append(claims, [claim(mine.ref, EARLIER)], EARLIER)
    with pytest.raises(GateRefused) as given:
        gate.refused_before(asking)
    assert given.value.refused.call == mine.ref
    assert Claims(counting).made_by(SUBJECT, mine.ref).claim_id == f"cl-{EARLIER}"
    assert handed(counting) == 2
    # Judged by `check` (once), it is answered that refusal, and journals nothing more.
    with pytest.raises(GateRefused):
        gate.check(asking)
    assert journal.version(LOG) == EARLIER + 1
    assert handed(counting) == 3


@on_every_backend()
@pytest.mark.parametrize(
    "kind, index",
    [("MutationRefused", "journal_refusals_since"), ("ClaimAsserted", "journal_claims_since")],
)
def test_what_came_after_a_call_is_a_seek_in_its_kind_index(alias, kind, index):
    """SQLite's plan is asserted (PostgreSQL's planner chooses by statistics that a test's
    near-empty table lacks: tests/dashboard/test_filter_lists.py)."""
    journal = DjangoJournal(alias)
    if journal.connection.vendor != "sqlite":
        pytest.skip("PostgreSQL plans by statistics an empty test table lacks")
    with journal.connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN QUERY PLAN SELECT position FROM journal_event WHERE stream = %s"
            f" AND kind = '{kind}' AND position > %s ORDER BY position",
            ["gate-x", 0],
        )
        plan = " ".join(str(part) for row in cursor.fetchall() for part in row)
    assert index in plan and "TEMP B-TREE" not in plan, plan
