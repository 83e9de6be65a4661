"""What the store's trace reads of a run (journal_store/traces.py: the push, the download, the
trace tab) is what the runtime's read of the run's trace holds (flight.traced_records): the
streams named from the run's prefixes as the journal's read_prefix takes them, in byte order,
whatever a run's id holds of a LIKE's %, _ and \\, and never a stream whose name differs from
one of them in case alone, which SQLite's LIKE took for the same."""

from __future__ import annotations

import pytest

from journal_store import traces
from journal_store.journal import DjangoJournal
from runtime import flight, streams
from runtime.events import Event, TeamStarted, ToolDispatched
from tests.journal_store.test_a_runs_figures_and_trace_read_the_run import found, parked

RUN = "r_%\\1"  # what a LIKE's pattern would take for any character, any run of them, an escape


def call(run: str) -> ToolDispatched:
    return ToolDispatched(run_id=run, tool="t", args={})


def history() -> list[tuple[str, list[Event]]]:
    """The run's stream, a specialist's, streams that a LIKE would take for the run's (its id
    read as a pattern, or a name in other case) written by it too, and its conflicts."""
    return [
        (streams.journal(RUN), [TeamStarted(run_id=RUN, team="t", scenario="s", task="t")]),
        (f"worker-{RUN}-S1-w1", [call(RUN), call(RUN)]),
        ("worker-rAB\\1-S1-w1", [call(RUN)]),  # RUN's `_%` unescaped
        ("worker-rx1-S1-w1", [call(RUN)]),  # and its `\\` too: an escape of the `1`
        (f"WORKER-{RUN}-S1-w1", [call(RUN)]),
        ("conflict-c1", [parked(RUN, "c1")]),
        ("CONFLICT-c2", [parked(RUN, "c2")]),
        (streams.journal(RUN), [call(RUN)]),
    ]


@pytest.mark.django_db
def test_the_stores_trace_holds_what_the_runtimes_read_of_the_run_does() -> None:
    journal = DjangoJournal()
    for stream, events in history():
        journal.append(stream, events, journal.version(stream))
    mine = found(list(traces.paged(RUN)))
    assert mine == found(flight.traced_records(journal, RUN))
    assert [s for s, _, _ in mine] == [
        streams.journal(RUN),
        f"worker-{RUN}-S1-w1",
        f"worker-{RUN}-S1-w1",
        "conflict-c1",
        streams.journal(RUN),
    ]
    waits = found(traces.waits_for_people(RUN))
    assert [s for s, _, _ in waits] == ["conflict-c1"]
