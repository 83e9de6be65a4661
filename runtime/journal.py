"""The Journal protocol, its typed failures, and the in-memory implementation.

The one primitive is `append(stream, events, expected_version)`: all or nothing, and it fails
with `WrongExpectedVersion` when the stream has moved. Versions count from 1; expected version 0
means "the stream must not exist yet". Every event also gets a global position (its place in
the whole journal), which is what projections read by.

Appending an event id that is already stored is not an error: it is a retry of a write whose
answer was lost, and it returns the original records without writing anything.

`append_batches([(stream, events, expected_version), ...])` is the same primitive over several
streams at once: every batch is written or none is (a fork writes its run's streams with it).

Fencing is part of the primitive: `append(..., fence=(lease stream, epoch))` is refused with
`StaleEpoch` unless that lease still stands at that epoch, checked in the same atomic step as
the expected version. A lease stands at the version of its live grant; a renewal names the
grant it extends and keeps its epoch, a new grant or a release ends it (`standing_epoch`, from
the lease stream's last event alone). `Fenced` (runtime/fenced.py) wraps any Journal so that
every append of one writer carries its fence.

Guards are the expected version of streams the append does not write: `append(...,
guards=[(stream, version)])` is refused with WrongExpectedVersion, naming the guarded stream,
unless each stream still stands at its version, checked in the same atomic step. A write that
was allowed by what another stream said (a mutation by the intent it serves, a reservation by
the holds beside it) carries that stream's version as a guard, so that the check and the write
are one step: a person superseding the intent in between makes the write fail, where a check
made before the write would have let it through under the old intent.

A stamp is how an event says when it landed: `append(..., stamp=)` rebuilds each new event by
`stamp(event)` once the append holds its lock (memory and JSONL under their lock, SQLite in its
IMMEDIATE transaction, PostgreSQL after the append lock), and writes what it returns. A lease's
grant and renewal count their expiry from there (runtime/coordination/leases.py): built before
the append, a renewal that waited on another writer's lock for most of its ttl landed with an
expiry already past, and the lease lapsed under a holder that was renewing it. The stamp runs
once, before the event is written: what is stored never changes after, and a retry of a stored
id returns the stored record, not stamped again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from runtime.events import (
    ClaimAsserted,
    DriverLeased,
    Event,
    LeaseGranted,
    LeaseRenewed,
    depth_problem,
    float_problem,
    integer_problem,
)

Fence = tuple[str, int]  # (lease stream, epoch)
Guard = tuple[str, int]  # (stream, version): the append goes in only while it stands there
Batch = tuple[str, Sequence[Event], int]  # (stream, events, expected version)
Stamp = Callable[[Event], Event]  # rebuilds a new event as the append lands it (see above)


@dataclass(frozen=True, slots=True)
class Recorded:
    """An event as stored: where it sits in its stream and in the whole journal."""

    stream: str
    version: int
    position: int
    event: Event


class JournalError(Exception):
    """Base of the journal's typed failures."""


class WrongExpectedVersion(JournalError):
    """The stream moved since the writer read it: somebody else got there first."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream!r} is at version {actual}, not {expected}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class StaleEpoch(JournalError):
    """The writer's lease was taken over: its epoch is no longer the current one (fencing)."""

    def __init__(self, lease: str, epoch: int, current: int) -> None:
        super().__init__(f"lease {lease!r} is at epoch {current}; this writer holds {epoch}")
        self.lease = lease
        self.epoch = epoch
        self.current = current


class LeaseLost(StaleEpoch):
    """The writer's holder gave its lease up (`Fenced.give_up`: its heartbeat took it for lost,
    run out while no renewal landed), though nobody may have taken it over yet: the journal's
    fence would still let it write, and it writes nothing more."""

    def __init__(self, lease: str, epoch: int) -> None:
        JournalError.__init__(
            self, f"lease {lease!r} at epoch {epoch} was given up by this writer's holder"
        )
        self.lease = lease
        self.epoch = epoch
        self.current = epoch


class DuplicateEventId(JournalError):
    """A batch mixes stored and new event ids, or repeats an id: it is not a retry."""


class OutOfRange(JournalError, ValueError):
    """An event carries a number the journal's readers cannot hold (events.MAX_INT)."""


class UnfindableClaim(JournalError, ValueError):
    """A claim under an id no read could find it by (claim_id_problem)."""


def claim_id_problem(event: Event) -> str | None:
    """A claim whose id holds a NUL character: claims are found by their id (the database's
    index on it, which reads the id with each NUL as a space, and whose read models hold
    U+FFFD for it), and the runtime's ids are hashes, which never hold one."""
    if isinstance(event, ClaimAsserted) and "\x00" in event.claim_id:
        return "field 'claim_id' holds a NUL character (U+0000), which no claim's id does"
    return None


class Journal(Protocol):
    def append(
        self,
        stream: str,
        events: Sequence[Event],
        expected_version: int,
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
        stamp: Stamp | None = None,
    ) -> list[Recorded]:
        """Append atomically at `expected_version` (WrongExpectedVersion when the stream moved);
        with a fence, only while that lease stands at that epoch (StaleEpoch otherwise); with
        guards, only while each of those streams stands at its version (WrongExpectedVersion
        naming the guarded stream otherwise); with a stamp, each new event as `stamp` rebuilds
        it once the append holds its lock."""
        ...

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        """The stream's events with version > after, in version order."""
        ...

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        """Every stream's events with position > after, in position order."""
        ...

    def version(self, stream: str) -> int:
        """The stream's current version; 0 when it does not exist."""
        ...


@runtime_checkable
class BatchJournal(Journal, Protocol):
    def append_batches(
        self,
        batches: Sequence[Batch],
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
    ) -> list[Recorded]:
        """Append each (stream, events, expected version) in order, all or none: the first
        refusal or failure (WrongExpectedVersion, a write that fails, the fence or a guard)
        leaves nothing of any batch written. A stream may come back in a later batch, expected
        at its version after the earlier ones."""
        ...


@runtime_checkable
class RangeJournal(Journal, Protocol):
    """A journal that reads a stream between two versions (the database's, by its (stream,
    version) index; the memory journal's, a slice of its list): `read_between` asks for it by
    type, and slices a read of the stream from `after` on any other."""

    def read_range(self, stream: str, after: int, until: int) -> list[Recorded]:
        """The stream's events with after < version <= until, in version order."""
        ...


@runtime_checkable
class SeekingJournal(RangeJournal, Protocol):
    """A journal that seeks a stream's rows by its indexes (the database's): `read_of_kind`,
    `read_run_of_kind`, `last_of_kind`, `read_at_versions` and `last_record` ask for it by
    type, and pick the rows out of a read of the whole stream on any other. `Fenced`
    (runtime/fenced.py) has these reads too, each by the journal it wraps."""

    def read_kind(
        self, stream: str, kind: str, after: int = 0, limit: int | None = None
    ) -> list[Recorded]:
        """The stream's events of `kind` with journal position > `after` (a position, not a
        version), in position order: the first `limit` of them."""
        ...

    def of_kind(self, run_id: str, stream: str, kind: str) -> list[Recorded]:
        """The stream's events of `kind` whose envelope names run `run_id`, in position
        order."""
        ...

    def last_kind(self, stream: str, kind: str) -> Recorded | None:
        """The stream's last event of `kind`; None when it has none."""
        ...

    def at_versions(self, stream: str, versions: Sequence[int]) -> list[Recorded]:
        """The stream's events at these versions, each once, in version order (a version the
        stream has not reached is left out)."""
        ...

    def last(self, stream: str) -> Recorded | None:
        """The stream's last event (at its version); None when the stream does not exist."""
        ...


def read_between(journal: Journal, stream: str, after: int, until: int) -> list[Recorded]:
    """The stream's events with after < version <= until: by the journal's own ranged read
    where it has one (a database reads only those rows), else by slicing a read."""
    if isinstance(journal, RangeJournal):
        return journal.read_range(stream, after, until)
    return journal.read(stream, after)[: max(0, until - after)]


def read_of_kind(
    journal: Journal, stream: str, kind: str, after: int = 0, limit: int | None = None
) -> list[Recorded]:
    """The stream's events of `kind` with journal position > `after` (a position, not a
    version), the first `limit` of them: by the journal's own read where it has one (a
    database reads only those rows), else by picking them out of a read of the whole stream."""
    if isinstance(journal, SeekingJournal):
        return journal.read_kind(stream, kind, after, limit)
    found = [r for r in journal.read(stream) if r.position > after and r.event.kind == kind]
    return found if limit is None else found[:limit]


def read_run_of_kind(journal: Journal, run_id: str, stream: str, kind: str) -> list[Recorded]:
    """The stream's events of `kind` that run `run_id` wrote (their envelope's run_id), in
    order: by the journal's own read where it has one (a database seeks its (run, kind,
    position) index, whatever other runs wrote to a stream they share), else picked out of a
    read of the whole stream."""
    if isinstance(journal, SeekingJournal):
        return journal.of_kind(run_id, stream, kind)
    return [r for r in journal.read(stream) if r.event.kind == kind and r.event.run_id == run_id]


def last_of_kind(journal: Journal, stream: str, kind: str) -> Recorded | None:
    """The stream's last event of `kind`: by the journal's own read where it has one (a
    database seeks it by an index kept for the kind), else from the end of a whole read."""
    if isinstance(journal, SeekingJournal):
        return journal.last_kind(stream, kind)
    return next((r for r in reversed(journal.read(stream)) if r.event.kind == kind), None)


def read_at_versions(journal: Journal, stream: str, versions: Sequence[int]) -> list[Recorded]:
    """The stream's events at these versions, in version order: in one read by the journal's
    own where it has one, else a ranged read of each, else picked out of one whole read."""
    if isinstance(journal, SeekingJournal):
        return journal.at_versions(stream, versions)
    if not isinstance(journal, RangeJournal):
        wanted = set(versions)
        return [r for r in journal.read(stream) if r.version in wanted]
    return [r for v in sorted(set(versions)) for r in journal.read_range(stream, v - 1, v)]


@runtime_checkable
class ClaimsJournal(Journal, Protocol):
    """A journal that finds a stream's claims by their ids (the database's, by its claims' id
    index): runtime/coordination/noted.py asks for it by type, and reads each run's claims on
    any other journal."""

    def claims_named(self, stream: str, ids: Sequence[str], before: int) -> list[Recorded]:
        """The stream's claims (ClaimAsserted) under these ids at journal positions below
        `before`, in position order."""
        ...


@runtime_checkable
class ScanningJournal(Journal, Protocol):
    def read_prefix(self, prefix: str) -> list[Recorded]:
        """Every event of the streams whose names start with `prefix`, in position order."""
        ...


@runtime_checkable
class OwnedJournal(ScanningJournal, Protocol):
    """A journal that knows which streams each run wrote to (the database's, by its index of
    runs; the file journal's, kept as it reads the file): runtime/fork.py `owned` asks for it
    by type, and picks a run's streams out of a read by prefix on any other journal."""

    def read_owned(self, run_id: str, prefix: str) -> list[Recorded]:
        """Every event of the streams whose names start with `prefix` that run `run_id` wrote
        to (an event of that stream names the run), the other runs' events on them too, in
        position order."""
        ...


@runtime_checkable
class RunIndexedJournal(ScanningJournal, Protocol):
    """A journal that reads a run by its index of runs, and several streams in one read (the
    database's): runtime/flight.py `figured_records` asks for it by type, and reads the whole
    journal on any other."""

    def read_run(self, run_id: str, after: int = 0) -> list[Recorded]:
        """Every event whose envelope names run `run_id`, on whichever stream, with position >
        `after`, in position order."""
        ...

    def read_streams(self, names: Sequence[str], prefixes: Sequence[str]) -> list[Recorded]:
        """Every event of the streams `names` and of those whose names start with one of
        `prefixes`, each once (a stream two of them name too), in position order."""
        ...


def standing_epoch(last: Recorded | None) -> int:
    """The epoch a lease stream stands at, read from its last event: the version of the grant
    that is live (a renewal names the grant it extends), or 0 when the lease was given back or
    never granted. Expiry is not judged here: a holder whose lease ran out may still write
    until somebody else is granted it, and that grant is what fences it out."""
    if last is None:
        return 0
    if isinstance(last.event, LeaseRenewed):
        return last.event.epoch
    if isinstance(last.event, LeaseGranted | DriverLeased):
        return last.version
    return 0


def check_guards(guards: Sequence[Guard], version: Callable[[str], int]) -> None:
    """Raise WrongExpectedVersion, naming the guarded stream, unless each guarded stream stands
    at its version (`version(stream)` reads it). Call it where the append is atomic, with the
    fence: the guards are judged before anything is written, a retry's included."""
    for stream, expected in guards:
        current = version(stream)
        if current != expected:
            raise WrongExpectedVersion(stream, expected, current)


def landed(events: Sequence[Event], stamp: Stamp | None) -> Sequence[Event]:
    """The events as `stamp` rebuilds them, called where the append holds its lock. The id
    must stay: a retry is known by it (the stored record is returned, not a new stamp)."""
    if stamp is None:
        return events
    stamped = [stamp(e) for e in events]
    if [e.id for e in stamped] != [e.id for e in events]:
        raise ValueError("a stamp changed an event's id: a retry could no longer be known")
    return stamped


def check_fence(fence: Fence | None, last: Recorded | None) -> None:
    """Raise StaleEpoch unless the lease whose last record is `last` stands at the fence's
    epoch. Call it where the append is atomic (under the writer's lock or in its transaction)."""
    if fence is None:
        return
    current = standing_epoch(last)
    if current != fence[1]:
        raise StaleEpoch(fence[0], fence[1], current)


def last_record(journal: Journal, stream: str) -> Recorded | None:
    """The stream's last record, never the whole stream: by the journal's one-row read where
    it has one (the database's `last`), else its version and the record at it."""
    if isinstance(journal, SeekingJournal):
        return journal.last(stream)
    version = journal.version(stream)
    found = read_between(journal, stream, version - 1, version) if version else []
    return found[-1] if found else None


def append_next(
    journal: Journal,
    stream: str,
    events: Sequence[Event],
    attempts: int = 20,
    stamp: Stamp | None = None,
) -> list[Recorded]:
    """Append at whatever version the stream is at: for logs whose order between writers does
    not matter (an inbox, a list of claims). A lost race just means reading the version again.
    A `stamp` rebuilds the events as they land, as `append`'s does.
    """

    def once() -> list[Recorded]:
        at = journal.version(stream)
        if stamp is None:  # called as before: a journal that takes no stamp (a test's) still works
            return journal.append(stream, events, at)
        return journal.append(stream, events, at, stamp=stamp)

    for _ in range(attempts - 1):
        try:
            return once()
        except WrongExpectedVersion:
            continue
    return once()


def check_batch(stream: str, events: Sequence[Event], expected_version: int) -> None:
    if not stream:
        raise ValueError("stream name must not be empty")
    if not events:
        raise ValueError("append needs at least one event")
    if expected_version < 0:
        raise ValueError(f"expected_version must be >= 0, got {expected_version}")
    ids = [e.id for e in events]
    if len(set(ids)) != len(ids):
        raise DuplicateEventId("the batch repeats an event id")
    for event in events:
        # Whoever made the event (a caller's settings, a model's usage, an agent's amount),
        # a number the read models cannot hold is refused here, before anything is written.
        if problem := integer_problem(event):
            raise OutOfRange(f"{event.kind}: {problem}")
        # Nor a time no clock can show (a lease expiring at -1e18) or a float that is not
        # finite (written as null: the event could not be read back): events/times.py.
        if problem := float_problem(event):
            raise OutOfRange(f"{event.kind}: {problem}")
        # Nor an event nested past what a line may be: it could not be read back (every
        # reader of the journal would stop on it), nor exported and imported.
        if problem := depth_problem(event):
            raise OutOfRange(f"{event.kind}: {problem}")
        if problem := claim_id_problem(event):
            raise UnfindableClaim(f"{event.kind}: {problem}")


def check_batches(batches: Sequence[Batch]) -> None:
    """check_batch for each, and no event id in two of them (the second would read as a retry
    of the first, written by the same call)."""
    if not batches:
        raise ValueError("append_batches needs at least one batch")
    seen: set[str] = set()
    for stream, events, expected_version in batches:
        check_batch(stream, events, expected_version)
        ids = {e.id for e in events}
        if not seen.isdisjoint(ids):
            raise DuplicateEventId(f"an event id of the batch for {stream!r} is in an earlier one")
        seen |= ids


def replayed_batch(
    stream: str, events: Sequence[Event], found: list[Recorded | None]
) -> list[Recorded] | None:
    """Decide whether a batch is a retry of one already stored.

    `found` holds, per event, the stored record with the same id (or None). A full match in the
    same stream is a retry and returns the originals; no match returns None (a new write);
    anything in between is refused.
    """
    if all(r is None for r in found):
        return None
    if any(r is None for r in found):
        raise DuplicateEventId("the batch mixes stored and new event ids")
    records = [r for r in found if r is not None]
    if any(r.stream != stream for r in records):
        raise DuplicateEventId(
            f"an event id in the batch is stored in another stream than {stream!r}"
        )
    return records


class MemoryJournal:
    """A Journal in a Python list: for tests, replays and benchmarks. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._all: list[Recorded] = []
        self._streams: dict[str, list[Recorded]] = {}
        self._by_id: dict[str, Recorded] = {}

    def append(
        self,
        stream: str,
        events: Sequence[Event],
        expected_version: int,
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
        stamp: Stamp | None = None,
    ) -> list[Recorded]:
        check_batch(stream, events, expected_version)
        with self._lock:
            self._check(fence, guards)
            return self._append(stream, landed(events, stamp), expected_version)

    def append_batches(
        self,
        batches: Sequence[Batch],
        fence: Fence | None = None,
        guards: Sequence[Guard] = (),
    ) -> list[Recorded]:
        check_batches(batches)
        with self._lock:
            self._check(fence, guards)
            mark = len(self._all)
            try:
                return [r for s, events, x in batches for r in self._append(s, events, x)]
            except BaseException:
                # Undo the batches before the one refused, newest first.
                for rec in reversed(self._all[mark:]):
                    self._streams[rec.stream].pop()
                    del self._by_id[rec.event.id]
                del self._all[mark:]
                raise

    def _check(self, fence: Fence | None, guards: Sequence[Guard]) -> None:
        """The fence and the guards, under the lock."""
        if fence is not None:
            lease = self._streams.get(fence[0])
            check_fence(fence, lease[-1] if lease else None)
        check_guards(guards, lambda stream: len(self._streams.get(stream, [])))

    def _append(
        self, stream: str, events: Sequence[Event], expected_version: int
    ) -> list[Recorded]:
        """The append, under the lock."""
        retried = replayed_batch(stream, events, [self._by_id.get(e.id) for e in events])
        if retried is not None:
            return retried
        records = self._streams.setdefault(stream, [])
        if len(records) != expected_version:
            raise WrongExpectedVersion(stream, expected_version, len(records))
        out = []
        for event in events:
            rec = Recorded(stream, len(records) + 1, len(self._all) + 1, event)
            records.append(rec)
            self._all.append(rec)
            self._by_id[event.id] = rec
            out.append(rec)
        return out

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        with self._lock:
            return list(self._streams.get(stream, [])[after:])

    def read_range(self, stream: str, after: int, until: int) -> list[Recorded]:
        with self._lock:
            return list(self._streams.get(stream, [])[after:until])

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        with self._lock:
            end = None if limit is None else after + limit
            return self._all[after:end]

    def version(self, stream: str) -> int:
        with self._lock:
            return len(self._streams.get(stream, []))

    def read_prefix(self, prefix: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self._all if r.stream.startswith(prefix)]


if TYPE_CHECKING:  # read_between asks for this protocol by type: mypy holds the journal to it
    range_journal: type[RangeJournal] = MemoryJournal
