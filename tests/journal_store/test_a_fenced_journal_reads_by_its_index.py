"""A run's reads by the journal's own indexes (a run's figures, its own streams, the streams it
wrote to) are asked for by type (runtime/journal.py: RunIndexedJournal, OwnedJournal), and
asked through a fenced writer of the journal that has them: the workers' sessions are fenced
(runtime/fenced.py), and `Fenced` forwards none of these reads, so a fenced database's figures
read the whole journal and its own streams one round trip each."""

from __future__ import annotations

from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from runtime import flight, fork
from runtime.fenced import Fenced, unfenced
from runtime.journal import (
    ClaimsJournal,
    Journal,
    MemoryJournal,
    OwnedJournal,
    RunIndexedJournal,
    ScanningJournal,
)
from runtime.jsonl import JsonlJournal
from tests.conftest import on_every_backend
from tests.journal_store.test_a_runs_figures_and_trace_read_the_run import RUN, found, history
from tests.runtime.test_a_fork_reads_its_runs_streams import Counting, filled, whole


def fenced(journal: Journal) -> Fenced:
    return Fenced(journal, "lease-driver-" + RUN, 1)  # reads ask no lease


def test_each_journal_is_the_protocols_it_has_the_reads_of(tmp_path) -> None:
    store, file, memory = DjangoJournal(), JsonlJournal(tmp_path / "j.jsonl"), MemoryJournal()
    assert isinstance(store, RunIndexedJournal) and isinstance(store, OwnedJournal)
    assert isinstance(store, ClaimsJournal) and isinstance(store, ScanningJournal)
    assert isinstance(file, OwnedJournal) and not isinstance(file, RunIndexedJournal)
    assert isinstance(memory, ScanningJournal)
    assert not isinstance(memory, OwnedJournal) and not isinstance(memory, RunIndexedJournal)
    # The wrapper is none of them: what it wraps is asked (unfenced), fenced twice or not at all.
    assert not isinstance(fenced(store), OwnedJournal | RunIndexedJournal)
    assert unfenced(fenced(store)) is store and unfenced(Fenced(fenced(file), "l", 1)) is file
    assert unfenced(memory) is memory


READS = (
    flight.figured_records,
    flight.own_streams,
    flight.traced_records,
    flight.run_records,
    fork.records_of,
    lambda journal, run: fork.owned(journal, run, "saga-"),
)


def statements(journal: Journal, alias: str, run: str) -> list[list[str]]:
    """The SQL each read of run `run` asks of the database, read by read."""
    asked = []
    for read in READS:
        with CaptureQueriesContext(connections[alias]) as captured:
            read(journal, run)
        asked.append([q["sql"] for q in captured.captured_queries])
    return asked


@on_every_backend()
def test_a_fenced_store_reads_a_run_by_its_indexes_as_the_store_does(alias) -> None:
    journal, memory = DjangoJournal(alias), MemoryJournal()
    for stream, events in history():
        for each in (journal, memory):
            each.append(stream, events, 0)
    for run in (RUN, "r-a-b", "r-other"):
        for read in READS:
            mine = found(read(fenced(journal), run))
            assert mine == found(read(journal, run)), (read, run)
            if read is not flight.own_streams:  # the memory's is in another order
                assert mine == found(read(memory, run)), (read, run)
        # The same statements: by the run's index and its streams' names, one each, where the
        # fenced figures read every record of the store, and its own streams one by one.
        assert statements(fenced(journal), alias, run) == statements(journal, alias, run)


def test_a_fenced_file_journal_reads_the_streams_a_run_wrote_to_alone(tmp_path) -> None:
    filled(JsonlJournal(tmp_path / "j.jsonl", fsync=False))
    journal = JsonlJournal(tmp_path / "j.jsonl", fsync=False)
    counting = Counting(journal)
    got = [(r.stream, r.position) for r in fork.records_of(fenced(counting), RUN)]
    assert got == [(s, p) for s, p in whole(journal, RUN) if s != "worker-r-a-b-S1-w1"]
    assert sum(counting.handed.values()) == len(got)  # none of the other runs' records
