"""The reconciler's read of a fact's live claims starts at its last note of them
(LiveClaimsNoted, appended with each of its decisions), not at the start of the subject's claims
stream, which every run on the subject adds to (issue #15). Its answer is the whole read's, over
random claims, supersessions (each with its note), the reconciler's decisions and people's
rulings (with their notes or without) on two facts of one subject, on the memory journal and
the store; and it reads what came after the note, not what came before (bench/whole_reads.py
has the figures)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims, Rules
from runtime.events import ClaimAsserted, ClaimsReconciled, LiveClaimsNoted
from runtime.events.coordination import MAX_NOTED
from runtime.journal import Journal, MemoryJournal
from runtime.jsonl import JsonlJournal
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting

PREDICATES = ("status", "carrier")
RULES = Rules(authority={"status": {"a": 2, "b": 1}})
SUBJECTS = itertools.count()


def whole(journal: Journal, subject: str, predicate: str) -> tuple[list[ClaimAsserted], int]:
    """live_at as it was: the subject's whole claims stream, read and picked out."""
    claims: list[ClaimAsserted] = []
    settled: set[str] = set()
    version = 0
    for rec in journal.read(Claims.stream(subject)):
        e, version = rec.event, rec.version
        if isinstance(e, ClaimAsserted) and e.predicate == predicate:
            claims.append(e)
        elif isinstance(e, ClaimsReconciled) and e.predicate == predicate:
            settled.update([e.winner, *e.losers])
    settled.update(c.supersedes for c in claims if c.supersedes)
    return [c for c in claims if c.claim_id not in settled], version


claim_steps = st.tuples(
    st.just("claim"),
    st.sampled_from(PREDICATES),
    st.sampled_from(["r1", "r2", "r3"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["x", "y"]),
    st.integers(1, 2),
    st.sampled_from(["state", "model"]),
    st.none() | st.integers(0, 30),  # which earlier claim of the run on the fact it supersedes
)
decide_steps = st.tuples(st.just("reconcile"), st.sampled_from(PREDICATES))
# A person's ruling: the claims it names, as indexes into the fact's claims, and whether it is
# appended with the note of the live claims after it (services/review.py) or without (as
# rulings were before 2026-12-06).
rule_steps = st.tuples(
    st.just("ruling"),
    st.sampled_from(PREDICATES),
    st.lists(st.integers(0, 60), max_size=3),
    st.booleans(),
)
STEPS = st.lists(st.one_of(claim_steps, decide_steps, rule_steps), max_size=40)


def play(journal: Journal, steps: list[tuple[Any, ...]]) -> None:
    subject = f"order:o-prop-{next(SUBJECTS)}"
    claims = Claims(journal)
    made: dict[str, list[ClaimAsserted]] = {p: [] for p in PREDICATES}
    for step in steps:
        if step[0] == "claim":
            _, predicate, run, by, value, based_on, source, which = step
            earlier = [c for c in made[predicate] if c.run_id == run]
            supersedes = earlier[which % len(earlier)].claim_id if which and earlier else None
            made[predicate].append(
                claims.claim(subject, predicate, value, based_on, by, source, None, supersedes, run)
            )
        elif step[0] == "reconcile":
            claims.reconcile(subject, step[1], RULES, run_id="r-reconciler")
        else:
            _, predicate, picks, noted = step
            fact = made[predicate]
            named = [fact[i % len(fact)].claim_id for i in picks] if fact else []
            at = journal.version(Claims.stream(subject))
            note = claims.noted_after(subject, predicate, set(named), "r-person", at)
            if named:
                claims.settle(
                    subject,
                    predicate,
                    named[0],
                    named[1:],
                    "ruled",
                    None,
                    "r-person",
                    at,
                    note if noted else None,
                )
        for predicate in PREDICATES:
            assert claims.live_at(subject, predicate) == whole(journal, subject, predicate)


QUICK = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@QUICK
@given(steps=STEPS)
def test_the_live_claims_from_the_note_are_the_whole_reads_in_memory(steps):
    play(MemoryJournal(), steps)


@on_every_backend()
@QUICK
@given(steps=STEPS)
def test_the_live_claims_from_the_note_are_the_whole_reads_in_the_store(alias, steps):
    play(DjangoJournal(alias), steps)


def claim(subject: str, run: str, value: str, by: str = "b", based_on: int = 1) -> ClaimAsserted:
    return ClaimAsserted(
        run_id=run,
        claim_id=f"cl-{run}-{by}-{value}",
        subject=subject,
        predicate="status",
        value=value,
        based_on=based_on,
        source="model",
        by=by,
    )


@on_every_backend()
@pytest.mark.parametrize("earlier", [10, 400])
def test_the_reconciler_reads_what_came_after_its_last_note(alias, earlier):
    """Whatever the subject's history, the reconciler's read is its last note, the claims it
    lists and what came after it."""
    journal = DjangoJournal(alias)
    subject = f"order:o-after-{earlier}"
    stream = Claims.stream(subject)
    claims = Claims(journal)
    # A claim from an older version, which nothing contradicts: live throughout.
    journal.append(stream, [claim(subject, "r-old", "z", based_on=0)], 0)
    for n in range(earlier):  # a run's two agents disagree; the reconciler decides each time
        pair = [claim(subject, f"r-{n}", "x"), claim(subject, f"r-{n}", "y", by="a")]
        journal.append(stream, pair, journal.version(stream))
        assert claims.reconcile(subject, "status", RULES).status == "decided"
    noted = journal.read(stream)[-1].event
    assert isinstance(noted, LiveClaimsNoted) and noted.live == ["cl-r-old-b-z"]
    # Since: three claims that agree, of runs that claimed nothing before.
    since = [claim(subject, f"r-s{n}", "y", by="a") for n in range(3)]
    journal.append(stream, since, journal.version(stream))
    counting = Counting(journal)
    live, at = Claims(counting).live_at(subject, "status")
    assert (live, at) == whole(journal, subject, "status")
    assert [c.claim_id for c in live] == ["cl-r-old-b-z", *(c.claim_id for c in since)]
    # Read: the note, the claim it lists and the three since; whether any of them was asserted
    # before the note under the same id is asked of the claims' id index, which finds none.
    assert counting.handed[stream] == 1 + 1 + 3


def test_a_fact_with_more_live_claims_than_a_note_lists_is_read_whole():
    journal = MemoryJournal()
    subject = "order:o-many"
    stream = Claims.stream(subject)
    older = [claim(subject, f"r-{n}", "y", based_on=0) for n in range(MAX_NOTED + 1)]
    pair = [claim(subject, "r-b", "x"), claim(subject, "r-b", "y", by="a")]
    journal.append(stream, [*older, *pair], 0)
    assert Claims(journal).reconcile(subject, "status", RULES).status == "decided"
    assert [r.event.kind for r in journal.read(stream)[-1:]] == ["ClaimsReconciled"]
    assert Claims(journal).live_at(subject, "status") == whole(journal, subject, "status")


def test_a_claim_asserted_again_after_its_decision_stays_settled():
    """The same run's agent, value and version make the same id (claim_id): asserted again
    after the note, the claim is as settled as the first was, which the note does not list."""
    journal = MemoryJournal()
    subject = "order:o-again"
    claims = Claims(journal)
    first = claims.claim(subject, "status", "y", 1, "a", "model", run_id="r-1")
    claims.claim(subject, "status", "x", 1, "b", "model", run_id="r-1")
    assert claims.reconcile(subject, "status", RULES).status == "decided"
    again = claims.claim(subject, "status", "y", 1, "a", "model", run_id="r-1")
    assert again.claim_id == first.claim_id
    assert claims.live_at(subject, "status") == whole(journal, subject, "status") == ([], 5)


def test_a_file_journal_reads_the_live_claims_from_the_note_too(tmp_path):
    """The command line's journal (a file, read into memory) has no reads by kind or version
    of its own: the note is found and read from by picking out of its streams."""
    journal = JsonlJournal(tmp_path / "journal.jsonl")
    subject = "order:o-file"
    claims = Claims(journal)
    claims.claim(subject, "status", "z", 0, "a", "model", run_id="r-0")
    claims.claim(subject, "status", "y", 1, "a", "model", run_id="r-1")
    claims.claim(subject, "status", "x", 1, "b", "model", run_id="r-1")
    assert claims.reconcile(subject, "status", RULES).status == "decided"
    claims.claim(subject, "status", "w", 2, "b", "model", run_id="r-2")
    noted = journal.read(Claims.stream(subject))[-2].event
    assert isinstance(noted, LiveClaimsNoted) and noted.at == [1]
    live, at = claims.live_at(subject, "status")
    assert (live, at) == whole(journal, subject, "status")
    assert [c.value for c in live] == ["z", "w"]


@pytest.mark.django_db
def test_a_facts_note_is_found_past_another_facts_later_note():
    """The stream's last note is of another fact: it names this fact's last note's version."""
    journal = DjangoJournal()
    subject = "order:o-two-facts"
    stream = Claims.stream(subject)
    claims = Claims(journal)
    journal.append(stream, [claim(subject, f"r-{n}", "z", based_on=0) for n in range(50)], 0)
    journal.append(stream, [claim(subject, "r-1", "x"), claim(subject, "r-1", "y", by="a")], 50)
    assert claims.reconcile(subject, "status", RULES).status == "decided"
    for who, source in (("ann", "state"), ("bob", "model")):
        claims.claim(subject, "carrier", who, 1, who, source, run_id="r-2")
    assert claims.reconcile(subject, "carrier", RULES).status == "decided"  # state over model
    last = journal.read(stream)[-1].event
    assert isinstance(last, LiveClaimsNoted) and last.predicate == "carrier"
    assert last.others == {"status": 54}
    counting = Counting(journal)
    assert Claims(counting).live_at(subject, "status") == whole(journal, subject, "status")
    # The carrier's note, the status's note, the 50 claims it lists, and what the kind reads
    # give since, passed over: the carrier's two claims and its decision.
    assert counting.handed[stream] == 1 + 1 + 50 + 3
