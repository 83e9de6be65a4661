"""DjangoJournal's reads of many streams in one statement (runtime/page_reads.py).

Each stream's part is the statement its own read makes (DjangoJournal.read_kind's; a read of
the (stream, version) index back from a version), as a subquery with its own ORDER BY and
LIMIT, the parts joined by UNION ALL: each is planned as that read alone (the same index, the
same bound), and the page costs one round trip where it cost one a stream. An OR of the
streams' conditions would be one plan for all of them, and a LIMIT a stream could not have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# from_row looked up at each read, as journal.py's own reads do: a test counts the rows read
from journal_store import journal as stored
from journal_store.journal import DjangoJournal, kind_seek
from journal_store.journal_rows import SELECT
from runtime.journal import Recorded
from runtime.page_reads import BackSeek, KindSeek

# Streams read by one statement: well under SQLite's 500 terms of a compound SELECT
# (SQLITE_MAX_COMPOUND_SELECT) and its parameters' limit. An API page of 1,000 conflicts
# takes ten.
PARTS = 100


def read_kinds(
    journal: DjangoJournal, kind: str, seeks: Sequence[KindSeek]
) -> list[list[Recorded]]:
    """For each (stream, after, limit): the stream's events of `kind` with position > after, in
    position order, the first `limit` (as DjangoJournal.read_kind reads one stream)."""
    vendor = journal.connection.vendor
    parts = [kind_seek(vendor, stream, kind, after, limit) for stream, after, limit in seeks]
    return read_parts(journal, parts, lambda rec: rec.position)


def read_backs(journal: DjangoJournal, seeks: Sequence[BackSeek]) -> list[list[Recorded]]:
    """For each (stream, until, limit): the stream's last `limit` events at or below version
    `until` (its last when None), newest first: a backward read of the (stream, version)
    index from there, as DjangoJournal.version reads the last one."""
    parts = []
    for stream, until, limit in seeks:
        below, params = ("", [stream]) if until is None else (" AND version <= %s", [stream, until])
        where = f"WHERE stream = %s{below} ORDER BY version DESC LIMIT %s"
        parts.append((where, [*params, limit]))
    return read_parts(journal, parts, lambda rec: -rec.version)


def read_parts(
    journal: DjangoJournal, parts: list[tuple[str, list[Any]]], order: Any
) -> list[list[Recorded]]:
    """Each part's records (its SELECT's WHERE, ORDER BY and LIMIT, and their parameters),
    read PARTS at a time, in `order` within each part (UNION ALL promises none)."""
    found: list[list[Recorded]] = [[] for _ in parts]
    for start in range(0, len(parts), PARTS):
        chunk = parts[start : start + PARTS]
        union = " UNION ALL ".join(
            f"SELECT {start + n} AS part, p{n}.* FROM ({SELECT} {where}) AS p{n}"
            for n, (where, _) in enumerate(chunk)
        )
        with journal.connection.cursor() as cursor:
            cursor.execute(union, [p for _, params in chunk for p in params])
            rows = cursor.fetchall()
        for row in rows:
            found[row[0]].append(stored.from_row(row[1:]))
    for records in found:
        records.sort(key=order)
    return found
