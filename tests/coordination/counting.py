"""A journal that counts the records of each stream it hands out, however asked: what the
tests of what a check reads (test_a_call_reads_only_what_came_after_it.py,
test_checks_read_only_what_they_need.py) hold a check's reads to. And counting_rows, the
database journal's rows turned into records, whichever read asked (a card's, a step's)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import journal_store.journal as stored
from runtime.journal import Recorded
from runtime.page_reads import read_back, read_of_kinds


def counting_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many journal rows the database reads turn into records from now on."""
    counted = [0]
    real = stored.from_row

    def from_row(row: Any) -> Any:
        counted[0] += 1
        return real(row)

    monkeypatch.setattr(stored, "from_row", from_row)
    return counted


class Counting:
    """The journal, counting the records of each stream it hands out (`handed`)."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal
        self.handed: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.journal, name)

    def count(self, found: list[Recorded]) -> list[Recorded]:
        self.handed.update(r.stream for r in found)
        return found

    def read_prefix(self, prefix: str) -> list[Recorded]:
        return self.count(self.journal.read_prefix(prefix))

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        return self.count(self.journal.read(stream, after))

    def read_range(self, stream: str, after: int, until: int) -> list[Recorded]:
        return self.count(self.journal.read_range(stream, after, until))

    def read_kind(self, stream: str, kind: str, after: int = 0, limit: int | None = None):
        return self.count(self.journal.read_kind(stream, kind, after, limit))

    def read_kinds(self, kind: str, seeks: Any) -> list[list[Recorded]]:
        return [self.count(found) for found in read_of_kinds(self.journal, kind, seeks)]

    def read_backs(self, seeks: Any) -> list[list[Recorded]]:
        return [self.count(found) for found in read_back(self.journal, seeks)]

    def of_kind(self, run_id: str, stream: str, kind: str) -> list[Recorded]:
        return self.count(self.journal.of_kind(run_id, stream, kind))

    def last(self, stream: str) -> Recorded | None:
        found = self.journal.last(stream)
        self.count([found] if found is not None else [])
        return found

    def last_kind(self, stream: str, kind: str) -> Recorded | None:
        found = self.journal.last_kind(stream, kind)
        self.count([found] if found is not None else [])
        return found

    def at_versions(self, stream: str, versions: Any) -> list[Recorded]:
        return self.count(self.journal.at_versions(stream, versions))

    def claims_named(self, stream: str, ids: Any, before: int) -> list[Recorded]:
        return self.count(self.journal.claims_named(stream, ids, before))
