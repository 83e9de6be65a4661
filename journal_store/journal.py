"""DjangoJournal: the runtime's Journal protocol on the database (SQLite or PostgreSQL).

A batch append is one transaction: the expected-version check and the inserts commit together
or not at all (append_batches: several streams' batches in one). Appending event ids that are
already stored is a retry whose answer was lost: it writes nothing and returns the original
records.

Positions must become visible in order: a reader that has seen position P must never later
find a new event below P, or a projector reading by position would skip it forever. On SQLite
there is one writer at a time (transactions begin IMMEDIATE). On PostgreSQL, sequence values
are handed out at insert time but become visible at commit, so two concurrent appends could
commit out of order; every append therefore takes one transaction-level advisory lock first,
which makes appends (and so positions) commit one after the other.

The hot paths (append, read, export, catch-up) speak SQL through Django's connection rather
than the ORM: the ORM's per-field conversions cost more than the database did (see
docs/benchmarks.md). The model in models.py still owns the schema and its migrations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, connections, transaction

from journal_store.journal_rows import SELECT, Readings, Row, Unreadable
from journal_store.journal_rows import from_row as from_row  # looked up here at each read
from runtime.events import BY_KIND, Event, EventFormatError, payload_json
from runtime.fenced import Fenced as Fenced  # it lives in the runtime now; old imports still work
from runtime.journal import (
    Batch,
    ClaimsJournal,
    DuplicateEventId,
    Fence,
    Guard,
    OwnedJournal,
    Recorded,
    RunIndexedJournal,
    SeekingJournal,
    Stamp,
    WrongExpectedVersion,
    check_batch,
    check_batches,
    check_fence,
    check_guards,
    landed,
    replayed_batch,
)
from runtime.page_reads import BackSeek, KindSeek, ManyStreamsJournal

# from_row is looked up in this module at each read, by its reads and many_streams': the tests'
# counting_rows (tests/coordination/counting.py) counts the rows read by patching it here.
APPEND_LOCK = 0x4D696E75746573  # "Minutes": the advisory lock that serializes appends
INSERT = (
    "INSERT INTO journal_event "
    "(id, stream, version, run_id, kind, v, agent, task_id, turn, data, t, recorded_at) VALUES "
)
ROW = "(" + ", ".join(["%s"] * 12) + ")"
CHUNK = 500  # rows per INSERT statement on SQLite: well under its parameter limit
# PostgreSQL gets one single-row statement per event through psycopg's executemany, which
# pipelines them: the statement is parsed once, where a 1,200-placeholder VALUES list was
# parsed anew on every append (and text arrays cost as much to escape).
INSERT_ONE = INSERT + ROW + " RETURNING position"


def recorded_at(t: float, vendor: str) -> Any:
    """The timestamp column's value. SQLite stores naive UTC text, as Django would."""
    moment = datetime.fromtimestamp(t, tz=UTC)
    return moment.replace(tzinfo=None).isoformat(" ") if vendor == "sqlite" else moment


# A claim's id in its row's payload, as the claims' id index (migrations 0045, and 0052 on
# PostgreSQL) is on it: the statement spells it as the index does, for the planner to use the
# index. PostgreSQL's casts the text with each NUL's escape replaced by a space's first: jsonb
# refuses the escape, and the cast failed every append of a claim holding one.
CLAIM_ID = {
    "sqlite": "json_extract(data, '$.claim_id')",
    "postgresql": "(replace(data, E'\\\\u0000', E'\\\\u0020')::jsonb ->> 'claim_id')",
}


# On PostgreSQL, a stream's rows after a position, as two bounds on the row (stream,
# position), in that order (read_kind, last_kind): only a (stream, position) index can seek by
# them, never the primary key, and with no `stream = %s` the planner does not take the stream
# for a constant, so the order (stream, position) is that index's alone. Written `stream = %s
# AND position > %s ORDER BY position`, the planner walked the primary key from `after` (or
# back from the journal's end) filtering the stream out of every row: with stale statistics
# (the rows after `after` guessed few) and with fresh ones (the stream guessed spread evenly
# over the table): 80,000 rows, 35 ms at 20,000 claims, where the seek takes 0.03 ms.
# `stream = %s` beside the bounds is worse: the btree starts at the stream's first entry.
IN_STREAM = (
    "(stream, position) > (%s, %s::bigint) AND (stream, position) < (%s, 9223372036854775807)"
)

# A stream's name as an index in byte order holds it: SQLite's (stream, version) index is in
# its BINARY collation, which is that order; on PostgreSQL the database's collation may be
# any locale's, so the name is compared under COLLATE "C", as the index of migration 0050
# (journal_stream_prefix) holds it. A LIKE on the name was a scan of the whole table on both:
# SQLite's LIKE is case-blind and PostgreSQL's cannot use a btree in a locale's order.
STREAM_BYTES = {"postgresql": 'stream COLLATE "C"'}


def prefix_range(vendor: str, prefix: str) -> tuple[str, list[Any]]:
    """The condition, and its parameters, of the streams whose names start with `prefix`:
    from the prefix up to (not with) its successor. In code point order, which is UTF-8's
    byte order, the names that start with it are exactly those; '%' and '_' are characters
    like any other."""
    name = STREAM_BYTES.get(vendor, "stream")
    upper = successor(prefix)
    if upper is None:  # nothing sorts after every name that starts with it: no upper bound
        return f"{name} >= %s", [prefix]
    return f"{name} >= %s AND {name} < %s", [prefix, upper]


def successor(prefix: str) -> str | None:
    """The least string greater than every string that starts with `prefix` (None if there is
    none: the prefix is empty or all U+10FFFF): its last character made the next one."""
    kept = prefix.rstrip(chr(0x10FFFF))
    if not kept:
        return None
    following = ord(kept[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # surrogates are no characters of a UTF-8 name
        following = 0xE000
    return kept[:-1] + chr(following)


class DjangoJournal:
    """A Journal on one of Django's database connections (`using`)."""

    def __init__(self, using: str = "default") -> None:
        self.using = using

    @property
    def connection(self) -> Any:
        return connections[self.using]

    def serialize_appends(self) -> None:
        """Inside a transaction: wait until no other append is in flight (see module doc)."""
        if self.connection.vendor == "postgresql":
            with self.connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK])

    # --- writing -----------------------------------------------------------------------------

    def append(
        self,
        stream: str,
        events: Sequence[Event],
        expected_version: int,
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
        stamp: Stamp | None = None,
    ) -> list[Recorded]:
        """Append atomically. With `fence=(lease stream, epoch)`, refuse (StaleEpoch) unless the
        lease still stands at that epoch (runtime.journal.standing_epoch); with `guards`,
        refuse (WrongExpectedVersion naming the stream) unless each guarded stream stands at
        its version. Both are read in the same transaction, after the append lock: a writer
        whose lease was taken over, or whose intent was superseded, cannot write. A `stamp`
        rebuilds the new events there too, once the lock is held (runtime.journal.landed)."""
        check_batch(stream, events, expected_version)
        try:
            with transaction.atomic(using=self.using):
                self.check_locked(fence, guards)
                return self.append_locked(stream, landed(events, stamp), expected_version)
        except IntegrityError:
            # Only a path that skipped the checks gets here (an id stored in another stream,
            # or a writer that did not take the lock). The transaction is gone; look again.
            with transaction.atomic(using=self.using):
                retried = self.retry_of(stream, events)
                if retried is not None:
                    return retried
                current = self.version(stream)
                if current != expected_version:
                    raise WrongExpectedVersion(stream, expected_version, current) from None
                raise DuplicateEventId("an event id in the batch is already stored") from None

    def append_batches(
        self,
        batches: Sequence[Batch],
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
    ) -> list[Recorded]:
        """Several streams' batches in one transaction: all or none (a fork's streams; an
        effect's start and what it reserves), fenced and guarded as `append` is."""
        check_batches(batches)
        try:
            with transaction.atomic(using=self.using):
                self.check_locked(fence, guards)
                return [r for s, events, x in batches for r in self.append_locked(s, events, x)]
        except IntegrityError:
            # As in append: only an id stored in another stream, or a writer that skipped the
            # lock. The transaction is gone, and with it every batch.
            raise DuplicateEventId("an event id of the batches is already stored") from None

    def check_locked(self, fence: Fence | None, guards: Sequence[Guard]) -> None:
        """Take the append lock, then check the fence and the guards: on PostgreSQL the lock
        comes first, so what they read is what the last append committed, and nothing can
        move them before this transaction commits (on SQLite the transaction began IMMEDIATE:
        it is the only writer already)."""
        self.serialize_appends()
        if fence is not None:
            check_fence(fence, self.last(fence[0]))
        check_guards(guards, self.version)

    def append_locked(
        self, stream: str, events: Sequence[Event], expected_version: int
    ) -> list[Recorded]:
        """The append, inside a transaction that has already serialized appends."""
        current = self.version(stream)
        if current != expected_version:
            # A retry of a batch that did commit finds the stream moved: answer it as before.
            retried = self.retry_of(stream, events)
            if retried is not None:
                return retried
            raise WrongExpectedVersion(stream, expected_version, current)
        vendor = self.connection.vendor
        rows = [
            (
                e.id,
                stream,
                current + i + 1,
                e.run_id,
                e.kind,
                e.v,
                e.agent,
                e.task_id,
                e.turn,
                payload_json(e),
                e.t,
                recorded_at(e.t, vendor),
            )
            for i, e in enumerate(events)
        ]
        positions: list[int] = []
        with self.connection.cursor() as cursor:
            if vendor == "postgresql":
                raw = cursor.cursor  # psycopg's own cursor, for executemany(returning=True)
                with self.connection.wrap_database_errors:  # its errors as Django's
                    raw.executemany(INSERT_ONE, rows, returning=True)
                    while True:
                        positions.append(raw.fetchone()[0])
                        if not raw.nextset():
                            break
            else:
                for start in range(0, len(rows), CHUNK):
                    chunk = rows[start : start + CHUNK]
                    params = [value for row in chunk for value in row]
                    cursor.execute(
                        INSERT + ", ".join([ROW] * len(chunk)) + " RETURNING position", params
                    )
                    positions += sorted(row[0] for row in cursor.fetchall())
        # Appends are serialized, so the positions of one batch are consecutive and follow the
        # order of the rows; RETURNING itself promises no order.
        return [Recorded(stream, current + i + 1, positions[i], e) for i, e in enumerate(events)]

    def retry_of(self, stream: str, events: Sequence[Event]) -> list[Recorded] | None:
        """The stored records when every event of the batch is already stored (else None)."""
        found = {
            r.event.id: r
            for r in self.select(
                "WHERE id IN ({})".format(", ".join(["%s"] * len(events))), [e.id for e in events]
            )
        }
        return replayed_batch(stream, events, [found.get(e.id) for e in events])

    # --- reading -----------------------------------------------------------------------------

    def select(self, where: str, params: Sequence[Any]) -> list[Recorded]:
        with self.connection.cursor() as cursor:
            cursor.execute(f"{SELECT} {where}", params)
            return [from_row(row) for row in cursor.fetchall()]

    def readings(self, where: str, params: Sequence[Any]) -> Readings:
        """As select, but a row no event model reads is set beside the records, where select
        raises at it: for the readers that go on past such a row and say it (the control
        stream's look before a step drives, the trace tab, the timeline)."""
        with self.connection.cursor() as cursor:
            cursor.execute(f"{SELECT} {where}", params)
            rows = cursor.fetchall()
        found = Readings([], [])
        for row in rows:
            try:
                found.records.append(from_row(row))
            except EventFormatError as exc:
                found.unreadable.append(Unreadable(row, exc))
        return found

    def rows(self, where: str, params: Sequence[Any], chunk: int = 2_000) -> Iterator[Row]:
        """Rows in `chunk`s through a server-side cursor where the backend has one: a reader of
        a million events holds `chunk` of them at a time."""
        with self.connection.chunked_cursor() as cursor:
            cursor.execute(f"{SELECT} {where}", params)
            while batch := cursor.fetchmany(chunk):
                yield from batch

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        return self.select("WHERE stream = %s AND version > %s ORDER BY version", [stream, after])

    def read_range(self, stream: str, after: int, until: int) -> list[Recorded]:
        """The stream's events with after < version <= until (a resume from a snapshot reads
        the events before its loop and after the snapshot, not those between)."""
        return self.select(
            "WHERE stream = %s AND version > %s AND version <= %s ORDER BY version",
            [stream, after, until],
        )

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        if limit is None:
            return self.select("WHERE position > %s ORDER BY position", [after])
        return self.select("WHERE position > %s ORDER BY position LIMIT %s", [after, limit])

    def read_run(self, run_id: str, after: int = 0) -> list[Recorded]:
        """Every stream's events of one run, in position order."""
        return self.select("WHERE run_id = %s AND position > %s ORDER BY position", [run_id, after])

    def read_prefix(self, prefix: str) -> list[Recorded]:
        """Every event of the streams whose names start with `prefix`, in position order: the
        names between the prefix and the next string that does not start with it, a seek of
        an index in byte order (`prefix_range`), never a LIKE (see STREAM_BYTES)."""
        where, params = prefix_range(self.connection.vendor, prefix)
        return self.select(f"WHERE {where} ORDER BY position", params)

    def read_streams(self, names: Sequence[str], prefixes: Sequence[str]) -> list[Recorded]:
        """Every event of the streams `names` and of those whose names start with one of
        `prefixes`, in position order: one statement, a seek of an index for each (as `read`
        and `read_prefix`), where a run's own streams read one by one cost a round trip each.
        A UNION of the seeks, not an OR of them: SQLite, its cost of nine ranges reckoned
        above a scan's, read the table whole."""
        terms = [prefix_range(self.connection.vendor, p) for p in prefixes]
        if names:
            terms.insert(0, ("stream IN ({})".format(", ".join(["%s"] * len(names))), [*names]))
        if not terms:
            return []
        union = " UNION ALL ".join(f"{SELECT} WHERE {t}" for t, _ in terms)
        with self.connection.cursor() as cursor:
            cursor.execute(f"{union} ORDER BY position", [p for _, ps in terms for p in ps])
            found = {row[0]: from_row(row) for row in cursor.fetchall()}
        return list(found.values())  # a stream two of them name, once

    def read_owned(self, run_id: str, prefix: str) -> list[Recorded]:
        """Every event of the streams named `prefix`... that run `run_id` wrote to, in position
        order (runtime/fork.py owned): the streams found by the (run, position) index, then
        read by the (stream, version) one: what the run wrote, where read_prefix costs every
        stream so named, whichever run's."""
        named, params = prefix_range(self.connection.vendor, prefix)
        return self.select(
            "WHERE stream IN (SELECT DISTINCT stream FROM journal_event WHERE run_id = %s "
            f"AND {named}) ORDER BY position",
            [run_id, *params],
        )

    def of_kind(self, run_id: str, stream: str, kind: str) -> list[Recorded]:
        """The stream's events of one kind, in order: a seek by the (run, kind, position)
        index, where reading the stream to pick them out would cost what the run has grown
        to."""
        return self.select(
            "WHERE run_id = %s AND kind = %s AND stream = %s ORDER BY position",
            [run_id, kind, stream],
        )

    def read_kind(
        self, stream: str, kind: str, after: int = 0, limit: int | None = None
    ) -> list[Recorded]:
        """The stream's events of one kind with position > after, in order (the first `limit`
        of them). The kind is written into the statement (a known kind's name, never a
        caller's text) so that the planner can use an index kept for that kind alone:
        ClaimsReconciled's (journal_claims_decided) makes it a seek to just those rows; another
        kind is read by the (stream, version) index, its other rows skipped in the database."""
        where, params = kind_seek(self.connection.vendor, stream, kind, after, limit)
        return self.select(where, params)

    def read_kinds(self, kind: str, seeks: Sequence[KindSeek]) -> list[list[Recorded]]:
        """read_kind of several streams (stream, after, limit), in one statement: a page of
        conflict cards reads the decisions on each card's claims at once."""
        from journal_store import many_streams  # it builds on this module's reads

        return many_streams.read_kinds(self, kind, seeks)

    def read_backs(self, seeks: Sequence[BackSeek]) -> list[list[Recorded]]:
        """Several streams' last events (stream, until, limit), newest first, in one
        statement: a page of conflict cards reads what each card's fact holds at once."""
        from journal_store import many_streams

        return many_streams.read_backs(self, seeks)

    def last_kind(self, stream: str, kind: str) -> Recorded | None:
        """The stream's last event of one kind (one row): LiveClaimsNoted's index
        (journal_claims_noted) makes it a seek; the kind is written into the statement as
        read_kind's is, for the planner to use it."""
        if kind not in BY_KIND:
            raise ValueError(f"no event kind {kind!r}")
        if self.connection.vendor == "postgresql":
            where = f"WHERE kind = '{kind}' AND {IN_STREAM} ORDER BY stream DESC, position DESC"
            found = self.select(where + " LIMIT 1", [stream, 0, stream])
        else:
            where = f"WHERE stream = %s AND kind = '{kind}' ORDER BY position DESC LIMIT 1"
            found = self.select(where, [stream])
        return found[0] if found else None

    def at_versions(self, stream: str, versions: Sequence[int]) -> list[Recorded]:
        """The stream's events at these versions, in version order (by the (stream, version)
        index, one statement)."""
        wanted = sorted({int(v) for v in versions})
        if not wanted:
            return []
        if self.connection.vendor == "postgresql":
            # One seek per version, each the whole key of the unique (stream, version) index,
            # which the planner knows is one row whatever its statistics say. `version IN
            # (...)` was estimated from the column's values across all streams (version 1 is
            # every stream's), so at 20,000 claims PostgreSQL read the stream whole by its
            # stream alone, or the table (13-80 ms where the seeks take 0.04). OFFSET 0 keeps
            # the subquery apart, so the versions drive the seeks and not the other way round.
            with self.connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT e.* FROM unnest(%s::integer[]) AS wanted(v) CROSS JOIN LATERAL "
                    f"({SELECT} WHERE stream = %s AND version = wanted.v OFFSET 0) AS e "
                    "ORDER BY e.version",
                    [wanted, stream],
                )
                return [from_row(row) for row in cursor.fetchall()]
        marks = ", ".join(["%s"] * len(wanted))
        return self.select(
            f"WHERE stream = %s AND version IN ({marks}) ORDER BY version", [stream, *wanted]
        )

    def claims_named(self, stream: str, ids: Sequence[str], before: int) -> list[Recorded]:
        """The stream's claims (ClaimAsserted) under these ids at journal positions below
        `before`: a seek by the claims' id index (migration 0045), where picking them out of
        their runs' claims read every claim those runs made on the subject."""
        wanted = sorted(set(ids))
        if not wanted:
            return []
        named = CLAIM_ID.get(self.connection.vendor)
        marks = ", ".join(["%s"] * len(wanted))
        if named is None:  # no such index here: the claims' rows are picked out in Python
            found = self.select(
                "WHERE stream = %s AND kind = 'ClaimAsserted' AND position < %s ORDER BY position",
                [stream, before],
            )
            return [r for r in found if getattr(r.event, "claim_id", None) in wanted]
        # A seek by the id, never a range of positions: without statistics SQLite took the
        # (stream, position) index and read every claim before `before` (so the index is named
        # to it), and `+position` is a bound no planner takes to an index.
        indexed = "INDEXED BY journal_claims_by_id " if self.connection.vendor == "sqlite" else ""
        return self.select(
            f"{indexed}WHERE stream = %s AND kind = 'ClaimAsserted' AND {named} IN ({marks}) "
            "AND +position < %s ORDER BY position",
            [stream, *wanted, before],
        )

    def first(self, stream: str) -> Recorded | None:
        """The stream's first event (a run's TeamStarted, its settings), or None."""
        found = self.select("WHERE stream = %s AND version = 1", [stream])
        return found[0] if found else None

    def last(self, stream: str) -> Recorded | None:
        """The stream's last event (one row, by the (stream, version) index), or None."""
        found = self.select("WHERE stream = %s ORDER BY version DESC LIMIT 1", [stream])
        return found[0] if found else None

    def version(self, stream: str) -> int:
        # Written as the index's last entry, not MAX(version): PostgreSQL's planner chose
        # between the two by its statistics, and with a stream grown since they were taken
        # (rows=1 guessed) it aggregated over the whole stream: 40,004 index entries, 41 ms
        # at 20,000 claims where the backward scan takes 0.04 ms (bench/whole_reads.py).
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT version FROM journal_event WHERE stream = %s ORDER BY version DESC LIMIT 1",
                [stream],
            )
            found = (cursor.fetchone() or (0,))[0]
        return int(found or 0)

    def last_position(self) -> int:
        with self.connection.cursor() as cursor:
            cursor.execute("SELECT MAX(position) FROM journal_event")
            (found,) = cursor.fetchone()
        return int(found or 0)


if TYPE_CHECKING:  # the reads that ask for these protocols by type: mypy holds the journal to them
    claims_journal: type[ClaimsJournal] = DjangoJournal
    owned_journal: type[OwnedJournal] = DjangoJournal
    run_indexed_journal: type[RunIndexedJournal] = DjangoJournal
    seeking_journal: type[SeekingJournal] = DjangoJournal
    many_streams_journal: type[ManyStreamsJournal] = DjangoJournal


def kind_seek(
    vendor: str, stream: str, kind: str, after: int, limit: int | None
) -> tuple[str, list[Any]]:
    """The WHERE, ORDER BY and LIMIT of a read of the stream's events of `kind` after a
    journal position (DjangoJournal.read_kind's, and each stream's part of many_streams'), and
    its parameters. The kind is written in, checked to be a kind's name."""
    if kind not in BY_KIND:
        raise ValueError(f"no event kind {kind!r}")
    if vendor == "postgresql":
        where = f"WHERE kind = '{kind}' AND {IN_STREAM} ORDER BY stream, position"
        params: list[Any] = [stream, after, stream]
    else:
        where = f"WHERE stream = %s AND kind = '{kind}' AND position > %s ORDER BY position"
        params = [stream, after]
    if limit is None:
        return where, params
    return f"{where} LIMIT %s", [*params, limit]
