"""The Journal contract: one suite, subclassed for every implementation (memory, JSONL, the
database ones). A subclass provides a `journal` fixture returning a fresh, empty journal."""

from __future__ import annotations

import threading

import pytest

from runtime.events import BudgetDebited, Event
from runtime.journal import DuplicateEventId, WrongExpectedVersion


def debit(n: int = 1) -> Event:
    return BudgetDebited(run_id="r-1", amount=n)


class JournalContract:
    @pytest.fixture
    def journal(self):
        raise NotImplementedError

    def test_a_new_stream_starts_at_version_0(self, journal):
        assert journal.version("run-a") == 0
        assert journal.read("run-a") == []

    def test_append_returns_versions_and_positions_in_order(self, journal):
        recs = journal.append("run-a", [debit(1), debit(2)], 0)
        assert [r.version for r in recs] == [1, 2]
        assert recs[0].position < recs[1].position
        more = journal.append("run-b", [debit(3)], 0)
        assert more[0].position > recs[1].position
        assert journal.version("run-a") == 2

    def test_read_returns_what_was_appended_after_a_version(self, journal):
        events = [debit(i) for i in range(1, 5)]
        journal.append("run-a", events, 0)
        assert [r.event for r in journal.read("run-a")] == events
        assert [r.event for r in journal.read("run-a", after=2)] == events[2:]

    def test_read_all_orders_every_stream_by_position(self, journal):
        journal.append("run-a", [debit(1)], 0)
        journal.append("run-b", [debit(2)], 0)
        journal.append("run-a", [debit(3)], 1)
        records = journal.read_all()
        assert [r.event.amount for r in records] == [1, 2, 3]
        assert [r.event.amount for r in journal.read_all(after=records[0].position)] == [2, 3]
        assert len(journal.read_all(limit=2)) == 2

    def test_a_stale_expected_version_is_refused_and_nothing_is_written(self, journal):
        journal.append("run-a", [debit(1)], 0)
        with pytest.raises(WrongExpectedVersion) as info:
            journal.append("run-a", [debit(2), debit(3)], 0)
        assert (info.value.expected, info.value.actual) == (0, 1)
        assert journal.version("run-a") == 1

    def test_an_expected_version_ahead_of_the_stream_is_refused(self, journal):
        with pytest.raises(WrongExpectedVersion):
            journal.append("run-a", [debit(1)], 3)
        assert journal.version("run-a") == 0

    def test_appending_the_same_ids_again_is_a_no_op_returning_the_originals(self, journal):
        batch = [debit(1), debit(2)]
        first = journal.append("run-a", batch, 0)
        again = journal.append("run-a", batch, 0)  # a retry after a lost answer
        assert [(r.version, r.position) for r in again] == [(r.version, r.position) for r in first]
        assert journal.version("run-a") == 2
        assert len(journal.read_all()) == 2

    def test_a_batch_mixing_stored_and_new_ids_is_refused(self, journal):
        old = debit(1)
        journal.append("run-a", [old], 0)
        with pytest.raises(DuplicateEventId):
            journal.append("run-a", [old, debit(2)], 1)
        assert journal.version("run-a") == 1

    def test_a_batch_repeating_an_id_is_refused(self, journal):
        e = debit(1)
        with pytest.raises(DuplicateEventId):
            journal.append("run-a", [e, e], 0)
        assert journal.version("run-a") == 0

    def test_an_empty_batch_or_stream_name_is_refused(self, journal):
        with pytest.raises(ValueError):
            journal.append("run-a", [], 0)
        with pytest.raises(ValueError):
            journal.append("", [debit()], 0)

    def test_two_writers_at_the_same_expected_version_exactly_one_wins(self, journal):
        barrier = threading.Barrier(8)
        wins, losses = [], []

        def writer(i: int) -> None:
            barrier.wait()
            try:
                journal.append("run-hot", [debit(i)], 0)
                wins.append(i)
            except WrongExpectedVersion:
                losses.append(i)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(wins) == 1 and len(losses) == 7
        assert [r.event.amount for r in journal.read("run-hot")] == wins
