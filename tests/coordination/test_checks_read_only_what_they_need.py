"""The checks a mutation passes on every call read what they decide on, not the streams they
decide from: an agent's last live claim (what its next status change supersedes) from its run's
own claims, the intent check's latest version from its stream's last record, a call past the
gate its version's record, and a run's carried intent its IntentCarried. Each read its stream
whole (the subject's claims, every version a person declared, the run's every event), at every
status change and every check (bench/call_checks.py has the figures). Each answer is also
compared with the whole read it replaces."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims
from runtime.coordination.gates import Intents
from runtime.coordination.mutation import Authority, Mutation, MutationGate
from runtime.events import (
    ClaimAsserted,
    ClaimsReconciled,
    IntentCarried,
    IntentDeclared,
    ToolDispatched,
)
from runtime.tools import Call
from teams.desk.services import subject
from teams.desk.tools import SUPPORT_AGENT
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting
from tests.coordination.desk_tools import desk_tools

EARLIER = 300  # other runs' claims, versions declared before, a run's other events
SUBJECT = "order:o-reads"
RUN = "r-reads"
AGENT = "support-agent"


def claim(run: str, n: int, by: str = AGENT, supersedes: str | None = None) -> ClaimAsserted:
    return ClaimAsserted(
        run_id=run,
        claim_id=f"cl-{run}-{by}-{n}",
        subject=SUBJECT,
        predicate="status",
        value=f"value {n}",
        based_on=1,
        source="model",
        by=by,
        supersedes=supersedes,
    )


def whole(journal: DjangoJournal, by: str, run: str) -> ClaimAsserted | None:
    """The answer as the desk read it: every live claim on the subject, then the agent's."""
    mine = [c for c in Claims(journal).live(SUBJECT, "status") if c.by == by and c.run_id == run]
    return mine[-1] if mine else None


@on_every_backend()
def test_an_agents_last_live_claim_is_read_from_its_runs_claims_alone(alias):
    journal = DjangoJournal(alias)
    stream = Claims.stream(SUBJECT)
    others = [claim(f"r-other{n}", n) for n in range(EARLIER)]
    journal.append(stream, others, 0)
    ruled = ClaimsReconciled(
        subject=SUBJECT, predicate="status", winner=others[0].claim_id, losers=[], rule="r"
    )
    journal.append(stream, [ruled], EARLIER)

    def answer(by: str = AGENT) -> tuple[ClaimAsserted | None, int]:
        counting = Counting(journal)
        found = Claims(counting).last_live(SUBJECT, "status", by, RUN)
        assert found == whole(journal, by, RUN)
        return found, counting.handed[stream]

    assert answer() == (None, 0)
    first, second = claim(RUN, 1), claim(RUN, 2, supersedes=f"cl-{RUN}-{AGENT}-1")
    for c in (first, claim(RUN, 1, by="order-agent"), claim("r-other", EARLIER), second):
        journal.append(stream, [c], journal.version(stream))
    # The run's three claims (the order agent's too), nothing decided since: no other run's.
    assert answer() == (second, 3)
    assert answer("order-agent")[0].by == "order-agent"

    # A ruling since settles the agent's claim: its superseded one is not live either.
    settled = ClaimsReconciled(
        subject=SUBJECT, predicate="status", winner="cl-x", losers=[second.claim_id], rule="r"
    )
    journal.append(stream, [settled], journal.version(stream))
    assert answer() == (None, 4)
    third = claim(RUN, 3)
    journal.append(stream, [third], journal.version(stream))
    assert answer() == (third, 5)
    # The same claim asserted again, superseding itself, stands as it was: found among the
    # run's claims.
    made = Claims(journal).claim(SUBJECT, "status", "refunded", 4, AGENT, "model", run_id=RUN)
    at = journal.version(stream)
    counting = Counting(journal)
    again = Claims(counting).claim(
        SUBJECT, "status", "refunded", 4, AGENT, "model", supersedes=made.claim_id, run_id=RUN
    )
    assert (again, journal.version(stream)) == (made, at)
    assert counting.handed[stream] == 5  # the run's claims


def declared(intent_id: str, version: int) -> IntentDeclared:
    return IntentDeclared(
        intent_id=intent_id, intent_version=version, statement=f"v{version}", by="p", reason="r"
    )


def mutation(intent: tuple[str, int], call: str | None = None) -> Mutation:
    return Mutation(
        what="a refund",
        actor=AGENT,
        capability="refund",
        intent=intent,
        key="fx-1",
        request="h",
        evidence=(),
        call=call,
    )


def whole_guard(journal: DjangoJournal, intent_id: str, held: int) -> int:
    """The version `passed` guarded, as it read it: the intent's stream whole."""
    records = journal.read(Intents.stream(intent_id))
    return next((r.version for r in records if r.event.intent_version == held), 0)


@on_every_backend()
def test_the_intent_check_reads_the_intents_last_record_alone(alias):
    journal = DjangoJournal(alias)
    stream = Intents.stream("ticket-o-reads")
    journal.append(stream, [declared("ticket-o-reads", n) for n in range(1, EARLIER + 1)], 0)
    counting = Counting(journal)
    gate = MutationGate(counting, Authority.of({"refund": {AGENT}}), "gate-r-reads")

    refused = gate.judge(mutation(("ticket-o-reads", EARLIER - 1)))
    assert (refused.check, refused.held, refused.current) == ("intent", EARLIER - 1, EARLIER)
    assert f"p has since superseded with version {EARLIER} (r)" in refused.reason
    assert counting.handed[stream] == 1
    assert gate.judge(mutation(("ticket-o-reads", EARLIER))).check == "evidence"  # intent passed
    assert counting.handed[stream] == 2

    # A call past the gate is given its version's record as its guard: that record alone.
    for held, read in [(EARLIER, 1), (EARLIER - 7, 2), (1, 2), (EARLIER + 1, 1)]:
        counting.handed.clear()
        guards = gate.passed(mutation(("ticket-o-reads", held), call="run-r-reads@1"))
        assert guards == ((stream, whole_guard(journal, "ticket-o-reads", held)),)
        assert counting.handed[stream] == read, held


@on_every_backend()
def test_a_runs_carried_intent_is_read_without_the_rest_of_the_run(alias):
    journal = DjangoJournal(alias)
    run, intent_id = "run-r-carried", "task-r-carried"
    carried = IntentCarried(run_id="r-carried", intent_id=intent_id, intent_version=1)
    dispatched = [ToolDispatched(run_id="r-carried", tool="t", args={}) for _ in range(EARLIER)]
    journal.append(run, [dispatched[0], carried, *dispatched[1:]], 0)
    counting = Counting(journal)
    gate = MutationGate(counting, Authority.of({"refund": {AGENT}}), "gate-r-carried")

    assert gate.judge(mutation((intent_id, 1))).check == "evidence"  # the intent passed
    # A new event each time it is read (its id): the same otherwise.
    [was] = [e.model_dump(exclude={"id"}) for e in Intents(journal).history(intent_id)]
    assert Intents(counting).latest(intent_id).model_dump(exclude={"id"}) == was
    counting.handed.clear()
    assert Intents(counting).latest(intent_id).intent_version == 1
    assert counting.handed[run] == 1  # the IntentCarried, of the run's 301 events
    assert gate.passed(mutation((intent_id, 1), call=f"{run}@1")) == (
        (Intents.stream(intent_id), 0),
    )
    assert counting.handed[run] == 2  # and the call's dispatch (whether it was refused)

    Intents(journal).declare(intent_id, "another way", "p", "changed")
    counting.handed.clear()
    assert gate.judge(mutation((intent_id, 1))).current == 2
    assert counting.handed[run] == 0


@on_every_backend(transaction=True)
def test_a_status_change_reads_none_of_the_other_runs_claims(alias):
    journal, run_id, tools = desk_tools(alias, "o-reads")
    about = subject("o-reads")
    stream = Claims.stream(about)
    journal.append(stream, [claim(f"r-other{n}", n) for n in range(EARLIER)], 0)
    counting = Counting(journal)
    tools.claims = Claims(counting)
    tools.gate = MutationGate(counting, tools.gate.authority, tools.gate.log)
    run = f"run-{run_id}"

    def call() -> Call:
        at = journal.version(run)
        journal.append(run, [ToolDispatched(run_id=run_id, tool="set_order_status", args={})], at)
        return Call(run, at + 1)

    first = tools.set_order_status("refunded", 1, "refunded in full", call=call())
    assert counting.handed[stream] == 0
    second = tools.set_order_status("cancelled", 2, "changed her mind", call=call())
    # Its last claim (to supersede) and the call's own, made since its dispatch.
    assert counting.handed[stream] == 1
    [mine] = [c for c in Claims(journal).live(about, "status") if c.run_id == run_id]
    assert (mine.claim_id, mine.by) == (second["claim_id"], SUPPORT_AGENT)
    assert mine.supersedes == first["claim_id"]


@on_every_backend()
def test_a_runs_events_of_a_kind_are_a_seek_in_the_runs_index_of_kinds(alias):
    """What a run wrote of a kind to a stream others share (its claims, its IntentCarried):
    SQLite's plan is asserted, as in test_a_call_reads_only_what_came_after_it.py."""
    journal = DjangoJournal(alias)
    if journal.connection.vendor != "sqlite":
        pytest.skip("PostgreSQL plans by statistics an empty test table lacks")
    with journal.connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN QUERY PLAN SELECT position FROM journal_event"
            " WHERE run_id = %s AND kind = %s AND stream = %s ORDER BY position",
            [RUN, "ClaimAsserted", Claims.stream(SUBJECT)],
        )
        plan = " ".join(str(part) for row in cursor.fetchall() for part in row)
    assert "journal_run_kind" in plan and "TEMP B-TREE" not in plan, plan
