"""What a run's figures and its trace are read from on the database (flight.figured_records,
flight.traced_records) is what they were read from when every record of the store was looked
at (the memory's journal still reads so), found through indexes: by the run's id, by the names
of its own streams and by the conflict streams it wrote to, never a scan of the journal."""

from __future__ import annotations

from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from runtime import flight, streams
from runtime.events import (
    ConflictParked,
    ConflictResolved,
    Event,
    SagaStepCompleted,
    TeamStarted,
    ToolDispatched,
)
from runtime.journal import Journal, MemoryJournal
from tests.conftest import on_every_backend

RUN = "r-a"


def call(run: str = "") -> ToolDispatched:
    return ToolDispatched(run_id=run, tool="t", args={})


def parked(run: str, conflict: str) -> ConflictParked:
    return ConflictParked(
        run_id=run,
        conflict_id=conflict,
        subject="order:o1",
        predicate="status",
        conflict_type="value",
        claims=[],
    )


def resolved(run: str, conflict: str) -> ConflictResolved:
    return ConflictResolved(run_id=run, conflict_id=conflict, by="ann", reason="r", choice="c")


def history() -> list[tuple[str, list[Event]]]:
    """The run's own streams, records of them naming no run (an old writer's), the streams of
    a run whose id begins with the run's (`r-a-b`) and of others, conflicts of each."""
    started = TeamStarted(run_id=RUN, team="repo-fix", scenario="s", task="t")
    saga = f"saga-{streams.saga_id('refund', RUN)}"
    return [
        (streams.journal(RUN), [started, call(RUN), call()]),
        (streams.control(RUN), [call()]),
        (streams.driver_lease(RUN), [call(RUN), call()]),
        (streams.traces(RUN), [call()]),
        (streams.breakers(RUN), [call()]),
        (streams.worker(RUN, "S1", "w1"), [call(RUN), call()]),
        ("lease-" + streams.worker(RUN, "S1", "w1"), [call()]),
        ("lease-" + streams.slot(RUN, 1), [call()]),
        ("lease-" + streams.resource(RUN, "fix", "T1"), [call()]),
        (saga, [SagaStepCompleted(run_id=RUN, saga_id=saga[5:], step="s", key="k"), call()]),
        ("conflict-c1", [parked(RUN, "c1"), resolved(RUN, "c1"), resolved("", "c1")]),
        ("conflict-c2", [parked("r-other", "c2"), resolved("r-other", "c2")]),
        ("conflict-c3", [parked("r-a-b", "c3")]),
        ("claims-order:o1", [call(RUN), call("r-other"), call()]),
        (streams.journal("r-a-b"), [call("r-a-b"), call()]),
        (streams.worker("r-a-b", "S1", "w1"), [call("r-a-b"), call()]),
        (f"saga-{streams.saga_id('refund', 'r-a-b')}", [call("r-a-b"), call()]),
        (streams.control("r-other"), [call("r-other"), call()]),
        ("RUN-r-a", [call()]),  # a name that differs from the run's own in case alone
    ]


def found(records: list) -> list[tuple[str, int, str]]:
    return [(r.stream, r.version, r.event.id) for r in records]


@on_every_backend()
def test_a_runs_figures_and_trace_are_the_records_a_whole_read_picked_out(alias):
    journal, memory = DjangoJournal(alias), MemoryJournal()
    for stream, events in history():
        for each in (journal, memory):
            each.append(stream, events, 0)
    for run in (RUN, "r-a-b", "r-other"):
        for read in (flight.figured_records, flight.traced_records, flight.run_records):
            mine, whole = read(journal, run), read(memory, run)
            assert found(mine) == found(whole), (read.__name__, run)
    figured = {(r.stream, r.version) for r in flight.figured_records(journal, RUN)}
    assert {("control-r-a", 1), ("lease-r-a:fix:T1", 1), ("saga-refund-r-a", 2)} <= figured
    assert ("conflict-c1", 3) not in figured and ("lease-slots-r-a-1", 1) not in figured
    traced = {r.stream for r in flight.traced_records(journal, RUN)}
    assert "conflict-c1" in traced and "conflict-c2" not in traced


def scans(journal: Journal, alias: str) -> list[str]:
    """The statements of a run's figures, trace and replay's reads that read the journal's
    table whole by SQLite's plans, or every conflict's stream, whichever run's."""
    connection = connections[alias]
    with CaptureQueriesContext(connection) as asked:
        flight.figured_records(journal, RUN)
        flight.traced_records(journal, RUN)
        flight.run_records(journal, RUN)
    whole = []
    with connection.cursor() as cursor:
        for query in asked.captured_queries:
            cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
            plan = " ".join(str(part) for row in cursor.fetchall() for part in row)
            # A scan of the table or of an index of it, or every position from one on.
            everyones = "'conflict-'" in query["sql"] and "run_id" not in query["sql"]
            if "SCAN journal_event" in plan or "rowid>" in plan or everyones:
                whole.append(query["sql"])
    return whole


@on_every_backend()
def test_no_read_of_a_runs_figures_or_trace_scans_the_journal(alias):
    journal = DjangoJournal(alias)
    if journal.connection.vendor != "sqlite":  # PostgreSQL plans by statistics: the bench
        return
    for stream, events in history():
        journal.append(stream, events, 0)
    assert scans(journal, alias) == []
