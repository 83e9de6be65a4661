"""The store reads many streams in one statement (runtime/page_reads.py, for a page of
conflict cards): each stream's part is what that stream's own read answers (its events of a
kind after a position, the first few; its last few events back from a version), whatever the
streams hold, PARTS streams a statement. Any other journal is read stream by stream, to the
same answer."""

from __future__ import annotations

import random

from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store import many_streams
from journal_store.journal import DjangoJournal
from runtime.events import ClaimsReconciled, Event, FactChanged
from runtime.journal import MemoryJournal, read_between, read_of_kind
from runtime.page_reads import read_back, read_of_kinds
from tests.conftest import on_every_backend

STREAMS = 130  # past a statement's PARTS (100): two statements


def written(rng: random.Random, n: int) -> list[Event]:
    """A stream's events: facts and decisions, in some order, up to 40."""
    found: list[Event] = []
    for k in range(rng.randint(0, 40)):
        if rng.random() < 0.5:
            found.append(FactChanged(subject=f"s{n}", predicate="p", value=k, based_on=k, by="a"))
        else:
            found.append(
                ClaimsReconciled(
                    subject=f"s{n}", predicate="p", winner=f"w{k}", losers=[], rule="r", value=k
                )
            )
    return found


def ids(found: list) -> list:
    return [(r.stream, r.version, r.event.id) for r in found]


@on_every_backend()
def test_each_streams_part_is_its_own_read_two_statements_for_130_streams(alias):
    rng, store, memory = random.Random(5), DjangoJournal(alias), MemoryJournal()
    streams = [f"stream-{n}" for n in range(STREAMS)]
    for n, stream in enumerate(streams):
        events = written(rng, n)
        if events:
            store.append(stream, events, 0)
            memory.append(stream, events, 0)
        store.append(
            "between", [FactChanged(subject="x", predicate="p", value=n, based_on=n, by="b")], n
        )
    positions = [r.position for r in store.read_all()]
    kind = ClaimsReconciled.kind
    kinds = [(s, rng.choice([0, *positions]), rng.choice([None, 1, 8, 64])) for s in streams]
    # Back from the last version, or from one the stream has reached (a window's below it).
    backs = [
        (s, rng.choice([None, *range(store.version(s) + 1)]), rng.choice([1, 8, 64]))
        for s in streams
    ]
    backs.append(("no-such-stream", None, 64))
    with CaptureQueriesContext(connections[alias]) as captured:
        together = read_of_kinds(store, kind, kinds)
        back = read_back(store, backs)
    assert len(captured.captured_queries) == 2 * 2  # 131 back seeks: two statements too
    for (stream, after, limit), found in zip(kinds, together, strict=True):
        assert ids(found) == ids(read_of_kind(store, stream, kind, after, limit))
    for (stream, until, limit), found in zip(backs, back, strict=True):
        top = store.version(stream) if until is None else until
        alone = read_between(store, stream, max(0, top - limit), top)[::-1]
        assert ids(found) == ids(alone)
        # The memory journal, read stream by stream, answers the same (its positions are its
        # own, so by version alone).
        assert ids(read_back(memory, [(stream, until, limit)])[0]) == ids(alone)
    assert many_streams.PARTS == 100
