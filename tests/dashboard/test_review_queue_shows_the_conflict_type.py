"""The conflict review queue shows each conflict's type and the policy of that type: what rule
would have settled it, and that none did, so a person decides."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.events import ConflictParked

pytestmark = pytest.mark.django_db


def test_a_parked_conflict_shows_its_type_and_policy(as_reviewer):
    parked = ConflictParked(
        run_id="r-t",
        conflict_id="c-verify",
        subject="candidate:T1",
        predicate="verdict",
        conflict_type="verification",
        claims=[{"claim_id": "a", "value": "accept"}, {"claim_id": "b", "value": "reject"}],
    )
    DjangoJournal().append("conflict-c-verify", [parked], 0)
    page = as_reviewer.get("/review/conflicts", {"status": "open"})
    html = page.content.decode()
    assert page.status_code == 200
    assert "(verification)" in html
    assert "A verification conflict: independent adjudication: a person decides" in html
