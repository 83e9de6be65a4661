"""A claim whose value or evidence holds a NUL character (an agent's output, a binary file's
bytes) appends and is found by its id on every database. On PostgreSQL the claims' id index
(migration 0052) cast each claim's whole payload to jsonb, which refuses the escape of U+0000:
the append failed ("unsupported Unicode escape sequence"). A claim under an id holding NUL,
which the runtime's hashes never make, is refused before anything is written."""

from __future__ import annotations

import pytest
from django.db import transaction

from journal_store.journal import CLAIM_ID, DjangoJournal
from runtime.coordination.claims import Claims
from runtime.events import ClaimAsserted
from runtime.journal import UnfindableClaim
from tests.conftest import on_every_backend

pytestmark = on_every_backend()

# A NUL; a backslash followed by the text "u0000" (the JSON text's `\\u0000`); and a backslash
# before a NUL (`\\\u0000`): each replaced escape must leave JSON text.
HELD = ["a\x00b", "a\\u0000b", "a\\\x00b", "\x00"]


@pytest.mark.parametrize("held", HELD, ids=["nul", "backslash-text", "backslash-nul", "alone"])
def test_a_claim_holding_a_nul_appends_and_is_found_by_its_id(alias, held):
    journal = DjangoJournal(alias)
    claims = Claims(journal)
    subject = "order:o-nul"
    made = claims.claim(
        subject, "status", {"text": held, held: 1}, 1, "a", "model", {"read": held}, run_id="r-1"
    )
    stream = Claims.stream(subject)
    [found] = journal.claims_named(stream, [made.claim_id, "cl-none"], journal.last_position() + 1)
    assert found.event == made  # the journal keeps the claim exactly
    assert found.event.value == {"text": held, held: 1}


def test_the_claims_read_by_id_use_the_index(alias):
    """The statement spells the index's expression (CLAIM_ID): with no table scan allowed,
    PostgreSQL's plan takes the index; SQLite's names it in the statement."""
    journal = DjangoJournal(alias)
    if journal.connection.vendor != "postgresql":
        return
    with transaction.atomic(using=alias), journal.connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT position FROM journal_event WHERE stream = %s AND kind = "
            f"'ClaimAsserted' AND {CLAIM_ID['postgresql']} IN (%s) AND +position < %s",
            ["claims-x", "cl-1", 5],
        )
        plan = " ".join(row[0] for row in cursor.fetchall())
    assert "journal_claims_by_id_text" in plan, plan


def test_a_claim_under_an_id_holding_a_nul_is_refused(alias):
    journal = DjangoJournal(alias)
    claim = ClaimAsserted(
        run_id="r-1",
        claim_id="cl-\x00",
        subject="order:o-nul",
        predicate="status",
        value="x",
        based_on=1,
        source="model",
        by="a",
    )
    with pytest.raises(UnfindableClaim, match="NUL"):
        journal.append(Claims.stream("order:o-nul"), [claim], 0)
    assert journal.last_position() == 0
