"""The live claims are read from the fact's last note after a person's ruling too, and after a
claim superseded again and again: what is read does not grow with the subject's history.

A ruling's decision (services/review.py) was appended with no note of the live claims after
it, so the read that followed started at the last note a rule's decision left, and read every
claim and decision since, with each claim's run's own claims; on a subject where no rule ever
decided (every conflict a person's) there was no note, and the whole stream was read. A claim
superseding another likewise left no note: each one added itself and its run's claims to the
read."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims, Rules
from runtime.coordination.leases import Leases
from runtime.events import ConflictParked, LiveClaimsNoted
from runtime.fenced import Fenced, claims_index
from runtime.journal import ClaimsJournal, MemoryJournal
from services import review
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting
from tests.coordination.test_live_claims_from_their_note import whole

# Nobody outranks anybody, and both sides are a model's judgement: no rule decides.
NO_RULE = Rules()

pytestmark = on_every_backend()


def parked(journal: DjangoJournal, conflict_id: str | None) -> ConflictParked:
    [rec] = journal.read(f"conflict-{conflict_id}")
    assert isinstance(rec.event, ConflictParked)
    return rec.event


@pytest.mark.parametrize("earlier", [2, 40])
def test_the_read_after_a_ruling_starts_at_its_note(alias, earlier):
    journal = DjangoJournal(alias)
    subject = f"order:o-ruled-{earlier}"
    stream = Claims.stream(subject)
    claims = Claims(journal)
    # A claim from an older version, which nothing contradicts: live throughout.
    old = claims.claim(subject, "status", "z", 0, "a", "model", run_id="r-old")
    for n in range(earlier):  # a run's two agents disagree, no rule decides, a person rules
        mine = claims.claim(subject, "status", "x", 1, "a", "model", run_id=f"r-{n}")
        claims.claim(subject, "status", "y", 1, "b", "model", run_id=f"r-{n}")
        outcome = claims.reconcile(subject, "status", NO_RULE, run_id=f"r-{n}")
        assert outcome.status == "parked"
        conflict = parked(journal, outcome.conflict_id)
        review.resolve(conflict.conflict_id, mine.claim_id, "ann", "x it is", using=alias)
    noted = journal.read(stream)[-1].event
    assert isinstance(noted, LiveClaimsNoted) and noted.live == [old.claim_id]
    counting = Counting(journal)
    assert Claims(counting).live_at(subject, "status") == whole(journal, subject, "status")
    # The ruling's note and the claim it lists, whatever was ruled before.
    assert counting.handed[stream] == 1 + 1


@pytest.mark.parametrize("times", [3, 60])
def test_a_claim_superseded_again_and_again_is_read_from_its_last_note(alias, times):
    journal = DjangoJournal(alias)
    subject = f"order:o-superseded-{times}"
    stream = Claims.stream(subject)
    claims = Claims(journal)
    other = claims.claim(subject, "status", "z", 0, "b", "model", run_id="r-other")
    last = claims.claim(subject, "status", "v0", 1, "a", "model", run_id="r-1")
    for n in range(1, times + 1):  # the agent changes its mind; nothing decides between
        last = claims.claim(
            subject, "status", f"v{n}", 1, "a", "model", supersedes=last.claim_id, run_id="r-1"
        )
    counting = Counting(journal)
    live, at = Claims(counting).live_at(subject, "status")
    assert (live, at) == whole(journal, subject, "status")
    assert [c.claim_id for c in live] == [other.claim_id, last.claim_id]
    # The last supersession's note and the two claims it lists.
    assert counting.handed[stream] == 1 + 2


def test_a_claim_asserted_again_superseding_another_stays_settled(alias):
    """The run's agent goes back to a value it claimed from the same version: the same id
    (claim_id), settled when the first was superseded, so the note after it lists neither."""
    journal = DjangoJournal(alias)
    subject = "order:o-back-again"
    claims = Claims(journal)
    first = claims.claim(subject, "status", "x", 1, "a", "model", run_id="r-1")
    then = claims.claim(
        subject, "status", "y", 1, "a", "model", supersedes=first.claim_id, run_id="r-1"
    )
    back = claims.claim(
        subject, "status", "x", 1, "a", "model", supersedes=then.claim_id, run_id="r-1"
    )
    assert back.claim_id == first.claim_id
    noted = journal.read(Claims.stream(subject))[-1].event
    assert isinstance(noted, LiveClaimsNoted) and noted.live == []
    assert (
        Claims(journal).live_at(subject, "status") == whole(journal, subject, "status") == ([], 5)
    )


class Asked(DjangoJournal):
    """The database's journal, noting the ids it is asked for claims by."""

    def __init__(self, alias: str) -> None:
        super().__init__(alias)
        self.named: list[list[str]] = []

    def claims_named(self, stream, ids, before):
        self.named.append(list(ids))
        return super().claims_named(stream, ids, before)


def test_the_claims_are_asked_of_the_journal_by_their_ids_where_it_names_them(alias):
    """The database's journal is a ClaimsJournal (runtime/journal.py), asked by type: a claim
    superseding another is looked for among the claims before it by its id; a journal that
    names no claims (the memory's) is read run by run, to the same note."""
    subject = "order:o-asked"
    notes = []
    for journal in (Asked(alias), MemoryJournal()):
        claims = Claims(journal)
        first = claims.claim(subject, "status", "x", 1, "a", "model", run_id="r-1")
        then = claims.claim(subject, "status", "y", 1, "a", "model", None, first.claim_id, "r-1")
        notes.append(journal.read(Claims.stream(subject))[-1].event)
    assert isinstance(notes[0], LiveClaimsNoted) and notes[0].live == notes[1].live
    assert notes[0].live == [then.claim_id]
    assert journal is not None and not isinstance(journal, ClaimsJournal)
    asked = Asked(alias)
    assert isinstance(asked, ClaimsJournal) and isinstance(Counting(asked), ClaimsJournal)
    claims = Claims(asked)
    again = claims.claim(subject, "status", "z", 1, "a", "model", None, then.claim_id, "r-2")
    assert asked.named == [[again.claim_id]]


def test_a_fenced_writer_asks_the_index_its_journal_has(alias):
    """The workers' sessions and specialists write through Fenced (runtime/fenced.py): their
    claims are looked for by id in the journal it writes to, not read run by run."""
    subject = "order:o-fenced"
    asked = Asked(alias)
    lease = Leases(asked).acquire("r-1", "worker-1", ttl=60)
    assert lease is not None
    writer = Fenced(asked, lease.stream, lease.epoch)
    assert claims_index(writer) is asked and claims_index(MemoryJournal()) is None
    claims = Claims(DjangoJournal(alias))
    first = claims.claim(subject, "status", "x", 1, "a", "model", run_id="r-1")
    then = claims.claim(subject, "status", "y", 1, "a", "model", None, first.claim_id, "r-1")
    again = Claims(writer).claim(subject, "status", "z", 1, "a", "model", None, then.claim_id)
    assert asked.named == [[again.claim_id]]


def test_a_claim_under_an_id_is_a_seek_in_the_claims_id_index(alias):
    """SQLite's plan is asserted (PostgreSQL's planner chooses by statistics that a test's
    near-empty table lacks: tests/dashboard/test_filter_lists.py); PostgreSQL's answer is."""
    journal = DjangoJournal(alias)
    subject = "order:o-named"
    claims = Claims(journal)
    made = [claims.claim(subject, "status", v, 1, "a", "model", run_id="r-1") for v in "xyz"]
    stream = Claims.stream(subject)
    third = journal.read(stream)[2].position
    found = journal.claims_named(stream, [made[1].claim_id, "cl-none"], third)
    assert [r.event for r in found] == [made[1]]
    assert journal.claims_named(stream, [made[2].claim_id], third) == []  # not before it
    if journal.connection.vendor != "sqlite":
        return
    with journal.connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN QUERY PLAN SELECT position FROM journal_event WHERE stream = %s AND kind ="
            " 'ClaimAsserted' AND json_extract(data, '$.claim_id') IN (%s) AND +position < %s",
            ["claims-x", "cl-1", 5],
        )
        plan = " ".join(str(part) for row in cursor.fetchall() for part in row)
    assert "journal_claims_by_id" in plan, plan
