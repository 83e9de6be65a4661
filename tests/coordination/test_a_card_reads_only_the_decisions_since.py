"""Which of a conflict's claims were settled since it was parked (a conflict card's, an API
item's, a ruling's question) is asked of the journal by kind: the decisions on the subject's
claims after the conflict's position, read a page at a time until the last of its claims is
found. It read the subject's whole claims stream, shared by every run on the subject, on every
card: 25 cards of a subject with 20,000 claims events took 19 s (bench/conflict_cards.py)."""

from __future__ import annotations

from typing import Any

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims
from runtime.events import ClaimAsserted, ClaimsReconciled, Event
from runtime.journal import MemoryJournal, read_of_kind
from tests.conftest import on_every_backend
from tests.coordination.counting import counting_rows

SUBJECT = "order:77"


def claim(value: str, based_on: int, run: str) -> ClaimAsserted:
    return ClaimAsserted(
        run_id=run,
        claim_id=f"cl-{run}-{value}",
        subject=SUBJECT,
        predicate="status",
        value=value,
        based_on=based_on,
        source="model",
        by="order-agent",
    )


def decided(winner: str, losers: list[str], run: str, predicate: str = "status") -> Event:
    return ClaimsReconciled(
        run_id=run,
        subject=SUBJECT,
        predicate=predicate,
        winner=winner,
        losers=losers,
        rule=f"ruling in {run}",
        value=None,
    )


def rounds(count: int, start: int, predicate: str = "status") -> list[Event]:
    """`count` rounds of other runs: two claims and a decision between them."""
    events: list[Event] = []
    for n in range(start, start + count):
        a, b = claim("shipped", n, f"r-{n}"), claim("cancelled", n, f"r-{n}")
        events += [a, b, decided(a.claim_id, [b.claim_id], f"r-{n}", predicate)]
    return events


def stream_of(journal: Any, events: list[Event]) -> None:
    for start in range(0, len(events), 200):
        stream = Claims.stream(SUBJECT)
        journal.append(stream, events[start : start + 200], journal.version(stream))


def parked_history(journal: Any) -> tuple[int, list[str]]:
    """A subject with 300 rounds of history, then a conflict of two claims: its position and
    its claims."""
    ours = [claim("shipped", 999, "r-ours"), claim("cancelled", 999, "r-ours")]
    stream_of(journal, [*rounds(300, 0), *ours])
    return journal.read(Claims.stream(SUBJECT))[-1].position, [c.claim_id for c in ours]


@on_every_backend()
def test_the_claims_stream_before_the_conflict_is_not_read(alias, monkeypatch):
    journal = DjangoJournal(alias)
    parked_at, ours = parked_history(journal)
    rows = counting_rows(monkeypatch)
    assert Claims(journal).settled(SUBJECT, "status", parked_at, ours) == {}
    assert rows[0] == 0  # nothing decided since: no row, of the 902 the stream holds

    stream_of(journal, [*rounds(3, 1_000), decided("none", [ours[0]], "r-other")])
    rows[0] = 0
    found = Claims(journal).settled(SUBJECT, "status", parked_at, ours)
    assert {k: v.run_id for k, v in found.items()} == {ours[0]: "r-other"}
    assert rows[0] == 4  # the four decisions since; not the claims, nor the 300 before


@on_every_backend()
def test_reading_stops_at_the_decision_that_settled_the_last_claim(alias, monkeypatch):
    journal = DjangoJournal(alias)
    parked_at, ours = parked_history(journal)
    stream_of(
        journal,
        [
            *rounds(5, 1_000),
            decided(ours[1], [], "r-a"),
            *rounds(20, 2_000),
            decided("none", [ours[0], ours[1]], "r-b"),  # ours[1] was settled already
            *rounds(200, 3_000),
        ],
    )
    rows = counting_rows(monkeypatch)
    found = Claims(journal).settled(SUBJECT, "status", parked_at, ours)
    assert {k: v.run_id for k, v in found.items()} == {ours[1]: "r-a", ours[0]: "r-b"}
    assert rows[0] == 8 + 16 + 32  # three pages: the 27th decision is in the third
    # Without the claims asked for: every claim decided since, each by its first decision.
    everything = Claims(journal).settled(SUBJECT, "status", parked_at)
    assert len(everything) == 2 + 2 * 225 + 1  # and "none", the winner of rejecting both
    assert {c: everything[c] for c in ours} == found


@on_every_backend()
def test_a_journal_read_from_a_list_finds_what_the_database_finds(alias):
    events = [
        *rounds(40, 0),
        claim("shipped", 999, "r-ours"),
        claim("cancelled", 999, "r-ours"),
        *rounds(30, 1_000, predicate="refund"),
        decided("cl-r-ours-cancelled", [], "r-a"),
        *rounds(700, 2_000),
        decided("none", ["cl-r-ours-shipped", "cl-r-1-shipped"], "r-b"),
    ]
    found = []
    for journal in (DjangoJournal(alias), MemoryJournal()):
        stream_of(journal, events)
        at = next(r.position for r in journal.read(Claims.stream(SUBJECT)) if r.version == 122)
        ours = ["cl-r-ours-shipped", "cl-r-ours-cancelled"]
        settled = Claims(journal).settled(SUBJECT, "status", at, ours)
        found.append({k: (v.run_id, v.rule) for k, v in settled.items()})
        decisions = read_of_kind(journal, Claims.stream(SUBJECT), "ClaimsReconciled", at)
        assert len(decisions) == 30 + 1 + 700 + 1
        assert [r.version for r in decisions] == sorted(r.version for r in decisions)
        first = read_of_kind(journal, Claims.stream(SUBJECT), "ClaimsReconciled", at, 5)
        assert first == decisions[:5]
    assert found[0] == found[1]
    assert found[0] == {
        "cl-r-ours-cancelled": ("r-a", "ruling in r-a"),
        "cl-r-ours-shipped": ("r-b", "ruling in r-b"),
    }


@on_every_backend()
def test_the_decisions_are_a_seek_in_their_own_index(alias):
    """SQLite's plan is asserted (PostgreSQL's planner chooses by statistics that a test's
    near-empty table lacks: tests/dashboard/test_filter_lists.py)."""
    journal = DjangoJournal(alias)
    with pytest.raises(ValueError, match="no event kind"):
        journal.read_kind("claims-x", "Claims' OR 1=1 --")
    if journal.connection.vendor != "sqlite":
        pytest.skip("PostgreSQL plans by statistics an empty test table lacks")
    with journal.connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN QUERY PLAN SELECT position FROM journal_event WHERE stream = %s"
            " AND kind = 'ClaimsReconciled' AND position > %s ORDER BY position LIMIT 8",
            ["claims-x", 0],
        )
        plan = " ".join(str(part) for row in cursor.fetchall() for part in row)
    assert "journal_claims_decided" in plan and "TEMP B-TREE" not in plan, plan
