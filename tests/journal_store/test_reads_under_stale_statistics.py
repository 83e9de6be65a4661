"""PostgreSQL's plans of the claims' hot reads (Claims.live_at's) on a store whose statistics
were taken when it was small, as autovacuum leaves a hot, fast-growing stream, and again once
analyzed: each read seeks by the index meant for it, by all it is given, never by the primary
key. The rows at versions (`version IN (...)`) read the stream whole by the stream alone once
analyzed here (version 1 is every stream's); the primary key's walks of read_kind and
last_kind were seen at bench/whole_reads.py's 160,000 rows, not at this size, where these
assertions hold them. The plans are asserted, not the time."""

from __future__ import annotations

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from runtime.events import ClaimAsserted, ClaimsReconciled, Event, LiveClaimsNoted, ToolDispatched
from tests.conftest import on_every_backend

STREAM = "claims-order:o-hot"


def claim(n: int) -> ClaimAsserted:
    return ClaimAsserted(
        run_id=f"r{n}",
        claim_id=f"cl-{n}",
        subject="order:o-hot",
        predicate="status",
        value="cancelled",
        based_on=n,
        source="model",
        by="order-agent",
    )


def noted(n: int) -> LiveClaimsNoted:
    return LiveClaimsNoted(
        subject="order:o-hot", predicate="status", live=[f"cl-{n}"], at=[1], through=n, others={}
    )


def decided(n: int) -> ClaimsReconciled:
    return ClaimsReconciled(
        subject="order:o-hot",
        predicate="status",
        winner=f"cl-{n}",
        losers=[],
        rule="authority",
        value="cancelled",
    )


def in_thousands(journal: DjangoJournal, stream: str, events: list[Event]) -> None:
    for start in range(0, len(events), 1_000):
        journal.append(stream, events[start : start + 1_000], journal.version(stream))


def stale_store() -> DjangoJournal:
    """Statistics taken at a few rows; then the subject's claims stream grows to 3,000 rows (a
    claim, a decision and a note, again and again), 100,000 other rows come after it, and three
    claims after those, none of it analyzed."""
    journal = DjangoJournal("postgres")
    journal.append("worker-r0", [ToolDispatched(run_id="r0", tool="t", args={})], 0)
    with connections["postgres"].cursor() as cursor:
        cursor.execute("ANALYZE journal_event")
    events: list[Event] = []
    for n in range(1, 1_001):
        events += [claim(n), decided(n), noted(n)]
    in_thousands(journal, STREAM, events)
    with connections["postgres"].cursor() as cursor:  # other runs' rows, never read here
        cursor.execute(
            "INSERT INTO journal_event (id, stream, version, run_id, kind, v, data, t, "
            "recorded_at) SELECT gen_random_uuid(), 'worker-r' || g, 1, 'r' || g, "
            "'ToolDispatched', 1, '{}', 0, now() FROM generate_series(1, 100000) AS g"
        )
    in_thousands(journal, STREAM, [claim(n) for n in range(1_001, 1_004)])
    return journal


def plan_of(read) -> str:
    """The plan of the one statement `read` makes."""
    connection = connections["postgres"]
    with CaptureQueriesContext(connection) as asked:
        read()
    [query] = asked.captured_queries
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + query["sql"])
        return "\n".join(row[0] for row in cursor.fetchall())


@on_every_backend()
def test_the_claims_reads_seek_by_their_indexes_on_stale_statistics(alias):
    if alias != "postgres":
        pytest.skip("PostgreSQL's planner (SQLite's plans: test_live_claims_after_rulings.py)")
    journal = stale_store()
    last_note = journal.last_kind(STREAM, LiveClaimsNoted.kind)
    assert last_note is not None and last_note.version == 3_000
    since = journal.read_kind(STREAM, ClaimAsserted.kind, last_note.position)
    assert [r.version for r in since] == [3_001, 3_002, 3_003]
    assert journal.read_kind(STREAM, ClaimsReconciled.kind, last_note.position) == []
    assert [r.version for r in journal.at_versions(STREAM, [1, 2_998])] == [1, 2_998]

    assert_seeks(journal, last_note.position)
    with connections["postgres"].cursor() as cursor:  # and as autovacuum would leave it
        cursor.execute("ANALYZE journal_event")
    assert_seeks(journal, last_note.position)


def assert_seeks(journal: DjangoJournal, after: int) -> None:
    plans = {
        "journal_claims_noted": plan_of(lambda: journal.last_kind(STREAM, LiveClaimsNoted.kind)),
        "journal_claims_since": plan_of(
            lambda: journal.read_kind(STREAM, ClaimAsserted.kind, after)
        ),
        "journal_claims_decided": plan_of(
            lambda: journal.read_kind(STREAM, ClaimsReconciled.kind, after, 10)
        ),
        "journal_stream_version": plan_of(lambda: journal.at_versions(STREAM, [1, 2_998])),
    }
    for index, plan in plans.items():
        assert f" {index} " in plan and "journal_event_pkey" not in plan, plan
    # Each seeks by all it is given: the position's bound or the version in the index's
    # condition, not the stream alone and the rest filtered out of its rows.
    assert "position" in plans["journal_claims_since"].split("Index Cond:")[1], plans
    assert "version" in plans["journal_stream_version"].split("Index Cond:")[1], plans
