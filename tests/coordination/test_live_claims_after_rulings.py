"""The live claims are read from the fact's last note after a person's ruling too: what is
read does not grow with the subject's history.

A ruling's decision (services/review.py) was appended with no note of the live claims after
it, so the read that followed started at the last note a rule's decision left, and read every
claim and decision since, with each claim's run's own claims; on a subject where no rule ever
decided (every conflict a person's) there was no note, and the whole stream was read."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims, Rules
from runtime.events import ConflictParked, LiveClaimsNoted
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
