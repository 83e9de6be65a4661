"""Shared facts by compare-and-swap, claims, conflicts and their reconciliation, on SQLite and
PostgreSQL, with real concurrency."""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims, Rules
from runtime.coordination.facts import Facts, StillContended
from runtime.journal import WrongExpectedVersion
from tests.coordination import child
from tests.journal_store import child as journal_child
from tests.journal_store.conftest import on_every_backend

REPS = 50


@on_every_backend(transaction=True)
def test_two_threads_writing_from_the_same_version_50_times_exactly_one_wins(alias):
    barrier, outcomes = threading.Barrier(2), []

    def writer(who: str) -> None:
        facts = Facts(DjangoJournal(alias))
        try:
            for rep in range(REPS):
                barrier.wait()
                try:
                    facts.write(f"order:{rep}", "status", who, 0, who)
                    outcomes.append((rep, who, "won"))
                except WrongExpectedVersion:
                    outcomes.append((rep, who, "lost"))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(w,)) for w in ("orders", "support")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    facts = Facts(DjangoJournal(alias))
    for rep in range(REPS):
        mine = {who: result for r, who, result in outcomes if r == rep}
        assert sorted(mine.values()) == ["lost", "won"]
        fact = facts.read(f"order:{rep}")
        winner = next(who for who, result in mine.items() if result == "won")
        assert fact.version == 1 and fact.values == {"status": winner}


@pytest.mark.slow
@on_every_backend(transaction=True)
def test_two_processes_writing_from_the_same_version_50_times_exactly_one_wins(alias):
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    env = journal_child.env_for(alias)
    procs = [
        ctx.Process(target=child.cas_racer, args=(env, alias, barrier, results, REPS, w))
        for w in ("a", "b")
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in range(2 * REPS)]
    assert journal_child.exit_codes(procs) == [0, 0]
    wins = Counter(rep for rep, result in outcomes if result == "won")
    assert all(wins[rep] == 1 for rep in range(REPS)) and len(outcomes) == 2 * REPS
    facts = Facts(DjangoJournal(alias))
    assert all(facts.read(f"order:{rep}").version == 1 for rep in range(REPS))


@on_every_backend()
def test_the_loser_rereads_and_decides_again(alias):
    facts = Facts(DjangoJournal(alias))
    facts.write("order:4471", "status", "awaiting_stock", 0, "orders")
    seen = []

    def decide(fact):
        seen.append(dict(fact.values))
        if len(seen) == 1:  # meanwhile somebody else writes
            facts.write("order:4471", "status", "partially_cancelled", fact.version, "orders")
        return (
            "refund_pending" if fact.values["status"] == "awaiting_stock" else fact.values["status"]
        )

    value, version = facts.decide_and_write("order:4471", "status", decide, "support")
    assert seen == [{"status": "awaiting_stock"}, {"status": "partially_cancelled"}]
    assert (value, version) == ("partially_cancelled", 2)  # re-decided on the new state


@on_every_backend()
def test_after_n_lost_races_the_writer_gives_up(alias):
    facts = Facts(DjangoJournal(alias))

    def decide(fact):
        facts.write(
            "hot", "n", fact.version + 100, fact.version, "other"
        )  # always gets there first
        return "mine"

    with pytest.raises(StillContended):
        facts.decide_and_write("hot", "n", decide, "me", attempts=3)


@on_every_backend()
def test_two_claims_from_the_same_version_that_disagree_are_a_conflict(alias):
    claims = Claims(DjangoJournal(alias))
    a = claims.claim(
        "order:4471",
        "status",
        "partially_cancelled",
        1,
        "orders",
        "model",
        {"why": "item out of stock"},
    )
    b = claims.claim(
        "order:4471", "status", "refund_pending", 1, "support", "model", {"why": "customer asked"}
    )
    assert claims.conflicts("order:4471", "status") == [(a, b)]
    claims.claim(
        "order:4471", "status", "refund_pending", 2, "support", "model", supersedes=b.claim_id
    )
    assert claims.conflicts("order:4471", "status") == []  # superseded: no longer live


@on_every_backend()
def test_a_claim_asserted_again_over_itself_stays_live(alias):
    # An agent setting the order's status twice from one version asserts the same claim (one
    # id) superseding its last: that took the claim out of the live claims altogether, and a
    # conflict it was one side of was no longer seen.
    claims = Claims(DjangoJournal(alias))
    mine = claims.claim("order:7", "status", "shipped", 1, "orders", "model", run_id="r-7")
    theirs = claims.claim("order:7", "status", "cancelled", 1, "support", "model", run_id="r-7")
    again = claims.claim(
        "order:7", "status", "shipped", 1, "orders", "model", supersedes=mine.claim_id, run_id="r-7"
    )
    assert again == mine
    assert [c.claim_id for c in claims.live("order:7", "status")] == [
        mine.claim_id,
        theirs.claim_id,
    ]
    assert claims.conflicts("order:7", "status") == [(mine, theirs)]
    assert len(DjangoJournal(alias).read(claims.stream("order:7"))) == 2  # nothing appended


@on_every_backend()
def test_two_runs_asserting_the_same_claim_on_a_shared_subject_make_two_claims(alias):
    # Two runs of a team on one order: the same agent, value and version. They had one claim
    # id, so the second conflict listed each claim twice under it and settling the first
    # conflict settled the second run's claims too.
    claims = Claims(DjangoJournal(alias))
    made = {}
    for run in ("r-first", "r-second"):
        made[run] = (
            claims.claim("order:9", "status", "shipped", 1, "order-agent", "model", run_id=run),
            claims.claim("order:9", "status", "cancelled", 1, "support", "model", run_id=run),
        )
    ids = [c.claim_id for pair in made.values() for c in pair]
    assert len(set(ids)) == 4
    live = claims.live("order:9", "status")
    assert sorted(c.claim_id for c in live) == sorted(ids)
    # Settling the first run's pair leaves the second run's claims live.
    first, second = made["r-first"]
    claims.settle("order:9", "status", first.claim_id, [second.claim_id], "person", "shipped")
    assert {c.run_id for c in claims.live("order:9", "status")} == {"r-second"}
    # And a run asserting its own claim again gets the same id (the claim, not a new one).
    again = claims.claim("order:9", "status", "shipped", 1, "order-agent", "model", run_id="r-x")
    assert (
        again.claim_id
        == claims.claim(
            "order:9", "status", "shipped", 1, "order-agent", "model", run_id="r-x"
        ).claim_id
    )


@on_every_backend()
def test_which_claims_a_decision_settled_after_a_position(alias):
    # A conflict parked on a shared subject asks which of its claims a ruling on another
    # conflict settled since it was parked; a decision before that is not one of them.
    journal = DjangoJournal(alias)
    claims = Claims(journal)
    old = claims.claim("order:8", "status", "new", 0, "order-agent", "model", run_id="r-0")
    claims.settle("order:8", "status", old.claim_id, [], "by the rule", "new")
    a = claims.claim("order:8", "status", "shipped", 1, "order-agent", "model", run_id="r-1")
    b = claims.claim("order:8", "status", "cancelled", 1, "support", "model", run_id="r-1")
    parked_at = journal.read(Claims.stream("order:8"))[-1].position
    assert claims.settled("order:8", "status", after=parked_at) == {}
    claims.settle("order:8", "status", a.claim_id, [b.claim_id], "reviewer ann", "shipped", "r-1")
    claims.settle("order:8", "status", "none", [a.claim_id], "reviewer bob", None, "r-2")
    settled = claims.settled("order:8", "status", after=parked_at)
    assert {a.claim_id, b.claim_id} <= set(settled) and old.claim_id not in settled
    assert settled[a.claim_id].rule == "reviewer ann"  # the first decision that settled it
    assert old.claim_id in claims.settled("order:8", "status")
    assert claims.settled("order:8", "owner") == {}


@pytest.mark.parametrize(
    "a_source, b_source, ranks, expected",
    [
        ("state", "model", {}, ("decided", "shipped", "source: state over model")),
        ("verifier", "model", {}, ("decided", "shipped", "source: verifier over model")),
        (
            "model",
            "model",
            {"orders": 2, "support": 1},
            ("decided", "shipped", "authority on status: orders over support"),
        ),
        (
            "model",
            "model",
            {"orders": 1, "support": 1},
            ("parked", None, "HUMAN_REQUIRED: no rule decides"),
        ),
    ],
)
@on_every_backend()
def test_rules_decide_first_and_what_they_cannot_is_parked(
    alias, a_source, b_source, ranks, expected
):
    journal = DjangoJournal(alias)
    claims = Claims(journal)
    claims.claim("order:9", "status", "shipped", 3, "orders", a_source, {"scan": "DHL"})
    claims.claim(
        "order:9", "status", "cancelled", 3, "support", b_source, {"chat": "cancel please"}
    )
    outcome = claims.reconcile("order:9", "status", Rules({"status": ranks}))
    assert (outcome.status, outcome.value, outcome.rule) == expected
    if outcome.status == "parked":
        [parked] = [r.event for r in journal.read(f"conflict-{outcome.conflict_id}")]
        assert {c["value"] for c in parked.claims} == {"shipped", "cancelled"}
        assert {c["agent"] for c in parked.claims} == {"orders", "support"}
        assert (
            claims.reconcile("order:9", "status", Rules({"status": ranks})).conflict_id
            == outcome.conflict_id
        )
        assert journal.version(f"conflict-{outcome.conflict_id}") == 1  # parked once
    else:
        # Decided: neither claim is live any more, and both stay in the record.
        assert claims.live("order:9", "status") == []
        assert [c.value for c in claims.all("order:9")] == ["shipped", "cancelled"]
        assert claims.reconcile("order:9", "status", Rules({"status": ranks})).status == "nothing"


class ThenMeanwhile:
    """A journal that runs `meanwhile()` once, right after its first read: another writer's
    work landing between a reader's look at the claims and its decision on them."""

    def __init__(self, journal: DjangoJournal, meanwhile) -> None:
        self.journal, self.pending = journal, [meanwhile]

    def read(self, *args, **kwargs):
        records = self.journal.read(*args, **kwargs)
        if self.pending:
            self.pending.pop()()
        return records

    def __getattr__(self, name: str):
        return getattr(self.journal, name)


@pytest.mark.parametrize("orders_source", ["state", "model"], ids=["a rule decides", "parked"])
@on_every_backend(transaction=True)
def test_claims_a_ruling_settled_while_a_rule_looked_are_neither_decided_nor_parked(
    alias, orders_source
):
    """A person rejects both claims (on another run's conflict over them) between the rule's
    reading of the claims and what it does with them. Where the source rule chooses the
    order's own record over support's judgement, its decision, appended at any version, named
    the rejected claim the winner: lost, then won. Where no rule decides (two models' words),
    the conflict was parked anyway, to wait in the queue only to be refused when ruled on.
    Now the rule reads again and finds nothing to decide or to park."""
    journal = DjangoJournal(alias)
    claims = Claims(journal)
    a = claims.claim("order:9", "status", "shipped", 3, "orders", orders_source, {"scan": "DHL"})
    b = claims.claim("order:9", "status", "cancelled", 3, "support", "model", {"chat": "no"})

    def ruling() -> None:
        Claims(DjangoJournal(alias)).settle(
            "order:9", "status", "none", [a.claim_id, b.claim_id], "reviewer ann: both", None
        )

    outcome = Claims(ThenMeanwhile(journal, ruling)).reconcile("order:9", "status", Rules())
    assert outcome.status == "nothing"
    decided = [
        r.event for r in journal.read("claims-order:9") if r.event.kind == "ClaimsReconciled"
    ]
    assert [(d.winner, d.rule) for d in decided] == [("none", "reviewer ann: both")]
    assert journal.read_prefix("conflict-") == []


@on_every_backend(transaction=True)
def test_a_rule_reads_again_when_a_claim_lands_while_it_looked(alias):
    """A third claim from the same version arrives between the rule's reading and its
    decision: the decision covers it too, where it was left live beside a settled fact."""
    journal = DjangoJournal(alias)
    claims = Claims(journal)
    a = claims.claim("order:9", "status", "shipped", 3, "orders", "state", {"scan": "DHL"})
    b = claims.claim("order:9", "status", "cancelled", 3, "support", "model", {"chat": "no"})
    late: list = []

    def claim() -> None:
        late.append(
            Claims(DjangoJournal(alias)).claim(
                "order:9", "status", "refunded", 3, "billing", "model", {"ledger": "R-1"}
            )
        )

    outcome = Claims(ThenMeanwhile(journal, claim)).reconcile("order:9", "status", Rules())
    assert (outcome.status, outcome.value) == ("decided", "shipped")
    [decided] = [
        r.event for r in journal.read("claims-order:9") if r.event.kind == "ClaimsReconciled"
    ]
    assert decided.winner == a.claim_id
    assert sorted(decided.losers) == sorted([b.claim_id, late[0].claim_id])
    assert claims.live("order:9", "status") == []


@on_every_backend(transaction=True)
def test_two_steps_parking_the_same_conflict_at_once_park_it_once(alias):
    """Another run's step parks the same claims between this step's look at the conflict's
    stream and its append: both are told it is parked, where the second raised."""
    journal = DjangoJournal(alias)
    claims = Claims(journal)
    claims.claim("order:9", "status", "shipped", 3, "orders", "model", {"scan": "DHL"})
    claims.claim("order:9", "status", "cancelled", 3, "support", "model", {"chat": "no"})

    class ParkedMeanwhile:
        def __init__(self) -> None:
            self.pending = True

        def version(self, stream: str) -> int:
            if stream.startswith("conflict-") and self.pending:
                self.pending = False
                before = journal.version(stream)
                Claims(DjangoJournal(alias)).reconcile("order:9", "status", Rules())
                return before
            return journal.version(stream)

        def __getattr__(self, name: str):
            return getattr(journal, name)

    outcome = Claims(ParkedMeanwhile()).reconcile("order:9", "status", Rules())
    assert outcome.status == "parked"
    assert journal.version(f"conflict-{outcome.conflict_id}") == 1
