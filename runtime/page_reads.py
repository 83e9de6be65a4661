"""Reads of many streams at once, for a page that shows one thing per stream.

A page of the review queue's conflicts shows, for each conflict, the decisions on its subject's
claims since it was parked and what its subject's fact holds now: read one stream at a time,
each card cost its own round trips (two or three a card: 63 queries for a page of 25), and the
page's cost grew with what it showed. A journal that can (`ManyStreamsJournal`: the database's)
answers each of these reads for every stream of the page in one statement, each stream's part
read as its own read would be (the same index, the same bound, the same limit); any other
journal is asked stream by stream, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from runtime.journal import Journal, Recorded, read_between, read_of_kind

# A stream, the journal position its events are read after, and how many at most (None: all).
KindSeek = tuple[str, int, int | None]
# A stream, the version its events are read back from (None: its last; else one the stream has
# reached, such as the one below a window read before), and how many at most.
BackSeek = tuple[str, int | None, int]


@runtime_checkable
class ManyStreamsJournal(Journal, Protocol):
    """A journal that answers a read of several streams in one go (the database's, one
    statement of each stream's seek): `read_of_kinds` and `read_back` ask for it by type."""

    def read_kinds(self, kind: str, seeks: Sequence[KindSeek]) -> list[list[Recorded]]:
        """For each (stream, after, limit): the stream's events of `kind` with journal
        position > after, in position order, the first `limit` of them."""
        ...

    def read_backs(self, seeks: Sequence[BackSeek]) -> list[list[Recorded]]:
        """For each (stream, until, limit): the stream's last `limit` events at or below
        version `until` (its last when None), newest first."""
        ...


def read_of_kinds(journal: Journal, kind: str, seeks: Sequence[KindSeek]) -> list[list[Recorded]]:
    """`read_of_kind` of each seek, in one read where the journal can."""
    if not seeks:
        return []
    if isinstance(journal, ManyStreamsJournal):
        return journal.read_kinds(kind, seeks)
    return [read_of_kind(journal, stream, kind, after, limit) for stream, after, limit in seeks]


def read_back(journal: Journal, seeks: Sequence[BackSeek]) -> list[list[Recorded]]:
    """Each seek's stream's last `limit` events at or below its version (its last when
    None), newest first: in one read where the journal can, else a ranged read of each."""
    if not seeks:
        return []
    if isinstance(journal, ManyStreamsJournal):
        return journal.read_backs(seeks)
    found = []
    for stream, until, limit in seeks:
        top = journal.version(stream) if until is None else until
        found.append(read_between(journal, stream, max(0, top - limit), top)[::-1])
    return found
