"""The journal's optional reads of a stream (a range of versions; by kind, by run and kind, the
last of a kind, at versions, the last) are declared protocols (runtime/journal.py RangeJournal,
SeekingJournal), asked by isinstance where getattr probed for each name alone: a journal with a
name misspelt kept the others' fast paths and read the whole stream for that one, and nothing
noticed. mypy now holds each implementer to the names and signatures (the TYPE_CHECKING
assignments beside them); here each real journal is all of a protocol or none of it, and the
store, fenced or not, answers each read by its own one statement."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from runtime.events import Event, TeamStarted, ToolDispatched
from runtime.fenced import Fenced
from runtime.fork import Overlay
from runtime.journal import (
    ClaimsJournal,
    Journal,
    MemoryJournal,
    OwnedJournal,
    RangeJournal,
    RunIndexedJournal,
    ScanningJournal,
    SeekingJournal,
    last_of_kind,
    last_record,
    read_at_versions,
    read_between,
    read_of_kind,
    read_run_of_kind,
)
from runtime.jsonl import JsonlJournal
from runtime.page_reads import ManyStreamsJournal
from tests.conftest import on_every_backend
from tests.coordination.counting import Counting

STREAM = "run-r-a"
PROTOCOLS = (
    RangeJournal,
    SeekingJournal,
    ScanningJournal,
    OwnedJournal,
    RunIndexedJournal,
    ClaimsJournal,
    ManyStreamsJournal,
)


def declared(protocol: type) -> set[str]:
    """The reads `protocol` declares itself (not the Journal's, nor a base protocol's)."""
    return {name for name, value in vars(protocol).items() if callable(value) and name[0] != "_"}


def partly(journal: object) -> dict[str, set[str]]:
    """For each protocol `journal` has some of the reads of and not all: the reads it lacks.
    A name misspelt in an implementer shows here, where isinstance would just say no."""
    out = {}
    for protocol in PROTOCOLS:
        has = {name for name in declared(protocol) if callable(getattr(journal, name, None))}
        if has and has != declared(protocol):
            out[protocol.__name__] = declared(protocol) - has
    return out


def protocols(journal: object) -> set[str]:
    return {p.__name__ for p in PROTOCOLS if isinstance(journal, p)}


def fenced(journal: Journal) -> Fenced:
    return Fenced(journal, "lease-driver-r-a", 1)  # reads ask no lease


def events() -> list[Event]:
    """A run's start and its calls, one of another run's and one naming none (an old writer's)."""
    started = TeamStarted(run_id="r-a", team="repo-fix", scenario="s", task="t")
    runs = ["r-a", "r-b", "r-a", "", "r-a"]
    return [started, *(ToolDispatched(run_id=r, tool=f"t{n}", args={}) for n, r in enumerate(runs))]


@pytest.mark.django_db
def test_each_journal_is_all_of_the_protocols_it_has_the_reads_of_and_none_of_the_others(
    tmp_path,
) -> None:
    store, memory = DjangoJournal(), MemoryJournal()
    file = JsonlJournal(tmp_path / "j.jsonl", fsync=False)
    expected = {
        store: {*(p.__name__ for p in PROTOCOLS)},
        fenced(store): {"RangeJournal", "SeekingJournal", "ScanningJournal"},
        Counting(store): {*(p.__name__ for p in PROTOCOLS)},  # the tests' counting wrapper
        memory: {"RangeJournal", "ScanningJournal"},
        # Fenced has the reads whatever it wraps: each asks the wrapped journal's, or reads
        # the stream as the plain helper does.
        fenced(memory): {"RangeJournal", "SeekingJournal", "ScanningJournal"},
        file: {"ScanningJournal", "OwnedJournal"},
    }
    for journal, wanted in expected.items():
        assert protocols(journal) == wanted, type(journal).__name__
        assert partly(journal) == {}, type(journal).__name__
    # A fork's overlay, by its class (it is made of a planned fork): it scans, and no more.
    assert {p.__name__ for p in PROTOCOLS if issubclass(Overlay, p)} == {"ScanningJournal"}
    assert partly(Overlay) == {}

    class Misspelt(MemoryJournal):
        """Four of the five reads, and one misspelt: the old probes took the four."""

        def read_kind(self, stream: str, kind: str, after: int = 0, limit: int | None = None):
            raise AssertionError("not asked: the journal is not a SeekingJournal")

        of_kind = at_versions = last = last_knid = read_kind

    misspelt = Misspelt()
    assert not isinstance(misspelt, SeekingJournal)
    assert read_of_kind(misspelt, STREAM, ToolDispatched.kind) == []  # by a whole read
    assert partly(Misspelt()) == {"SeekingJournal": {"last_kind"}}


def reads(after: int) -> dict[str, Callable[[Journal], Any]]:
    """Each read by its helper: what a caller of the optional reads asks (`after`: a journal
    position, where the store's may not count from 1)."""
    return {
        "read_between": lambda j: read_between(j, STREAM, 1, 3),
        "read_of_kind": lambda j: read_of_kind(j, STREAM, ToolDispatched.kind, after, 2),
        "read_run_of_kind": lambda j: read_run_of_kind(j, "r-a", STREAM, ToolDispatched.kind),
        "last_of_kind": lambda j: last_of_kind(j, STREAM, TeamStarted.kind),
        "read_at_versions": lambda j: read_at_versions(j, STREAM, [5, 2, 2, 9]),
        "last_record": lambda j: last_record(j, STREAM),
    }


def found(answer: Any) -> Any:
    if answer is None:
        return None
    if isinstance(answer, list):
        return [(r.stream, r.version, r.event.id) for r in answer]
    return found([answer])


def statements(journal: Journal, alias: str, read: Callable[[Journal], Any]) -> list[str]:
    with CaptureQueriesContext(connections[alias]) as captured:
        read(journal)
    return [q["sql"] for q in captured.captured_queries]


@on_every_backend()
def test_the_store_fenced_or_not_answers_each_read_by_its_own_one_statement(alias) -> None:
    store, memory = DjangoJournal(alias), MemoryJournal()
    other, written = [ToolDispatched(run_id="r-a", tool="x", args={})], events()
    for journal in (store, memory):
        journal.append("other", other, 0)
        journal.append(STREAM, written, 0)
    after = store.read(STREAM)[2].position  # the third event's: the fourth on
    own: dict[str, Callable[[DjangoJournal], Any]] = {
        "read_between": lambda j: j.read_range(STREAM, 1, 3),
        "read_of_kind": lambda j: j.read_kind(STREAM, ToolDispatched.kind, after, 2),
        "read_run_of_kind": lambda j: j.of_kind("r-a", STREAM, ToolDispatched.kind),
        "last_of_kind": lambda j: j.last_kind(STREAM, TeamStarted.kind),
        "read_at_versions": lambda j: j.at_versions(STREAM, [5, 2, 2, 9]),
        "last_record": lambda j: j.last(STREAM),
    }
    whole = statements(store, alias, lambda j: j.read(STREAM))
    for name, read in reads(after).items():
        seek = statements(store, alias, own[name])
        assert len(seek) == 1 and seek != whole, name
        # The store's own read, asked through the helper, through a fenced writer (twice).
        assert statements(store, alias, read) == seek, name
        assert statements(fenced(store), alias, read) == seek, name
        assert statements(fenced(fenced(store)), alias, read) == seek, name
        # What each answers is what a whole read picks out (the memory journal's).
        answer = found(reads(memory.read(STREAM)[2].position)[name](memory))
        assert found(read(store)) == found(read(fenced(store))) == answer, name


def test_the_memory_and_file_journals_answer_each_read_as_the_store_would(tmp_path) -> None:
    class Ranged(MemoryJournal):
        """Says which of its reads were asked."""

        asked: list[str] = []

        def read(self, stream: str, after: int = 0):
            self.asked.append("read")
            return super().read(stream, after)

        def read_range(self, stream: str, after: int, until: int):
            self.asked.append("read_range")
            return super().read_range(stream, after, until)

    memory, file = Ranged(), JsonlJournal(tmp_path / "j.jsonl", fsync=False)
    written = events()
    for journal in (memory, file):
        journal.append(STREAM, written, 0)
    for name, read in reads(3).items():
        assert found(read(file)) == found(read(fenced(file))) == found(read(memory)), name
    memory.asked.clear()
    read_between(memory, STREAM, 1, 3)
    read_at_versions(memory, STREAM, [2, 5])
    last_record(memory, STREAM)
    assert memory.asked == ["read_range"] * 4  # by versions, never the whole stream
