"""Leases: ownership of a resource for a while, with an epoch that fences the holder's writes.

The lease on resource R is the stream `lease-R`:

    LeaseGranted    a holder took it until `expires`; the version of this event is the epoch
    LeaseRenewed    the holder pushed `expires` on (a heartbeat); it names the epoch it extends
    LeaseReleased   the holder gave it back, saying what became of the work
    LeaseClosed     whoever owns the work settled it without the holder: no grant after it

Every operation reads the stream's last event only, never the whole stream (a long run's
driver lease grows by a grant, a release and a few renewals every step), and writes by
compare-and-swap on the stream's version: of two holders racing for a lease, exactly one is
granted it. Writes made under a lease carry `(stream, epoch)` as their fence
(`Journal.append(..., fence=)`, or a `Fenced` journal), and the journal refuses them once the
lease no longer stands at that epoch.

Why a renewal does not move the epoch. A heartbeat renews from a thread of its own while the
holder's work appends, fenced, from another. Were the epoch the stream's version, each
renewal would fence the holder out of its own appends, unless every append and every renewal
took one lock and the holder's fence (in its Fenced journal, in its sub-sessions, in the
epochs its gates check) were moved under that lock at each renewal — a lock held across a
database round trip on every append, and every copy of the epoch kept in step. Instead the
epoch is the version of the grant, and a lease stands at it while the stream's last event is
that grant or a renewal naming it (`runtime.journal.standing_epoch`). Only the holder moves the
stream while its grant stands; anybody else can move it only by a new grant once the lease has
expired. So a renewal needs no lock with the appends: it either lands (the epoch stands, the
appends pass) or finds a new grant (the renewal is lost, and the holder's next append is
refused with StaleEpoch). A takeover fences the old holder out at once, as before.

Attempts. A lease taken for a piece of work (`at_version`: a run's step, named by the run's
version when it began) counts the work's starts in its events: a grant carries this start's
number, a renewal repeats it, a release carries the starts that count so far — a start that
ended handing its work on is not counted. The next grant reads the count off the last event;
a reset (a person retrying a dead letter, at some global position) starts it again at 1.
Streams written before the count was carried (DriverLeased/DriverReleased, or LeaseGranted v1)
are counted the old way, over the whole stream, once: the next grant carries the count on.

Time. A grant or a renewal counts its expiry from when it lands, not from when it was built:
the append stamps it once it holds the journal's lock (`landing`; runtime.journal.landed).
Built before, a renewal that waited on another writer (SQLite's write lock held by a long
transaction, PostgreSQL's append lock by a slow session) for more than the time its lease had
left landed already expired, and the reconciler handed a run whose holder was alive and
renewing to another worker. One still waiting when the lease's expiry passes is too late all
the same: anybody may take the lease from then on, and the heartbeat stops the holder where it
is until the renewal answers, and takes the lease for lost unless it lands at the epoch (see
runtime/coordination/heartbeat.py). The heartbeat schedules its next beat by the time left on its
leases, so a beat that was slow or failed is followed by another at once. Expiry is judged by
the reader's clock against the writer's: the workers' clocks must agree to well within a
lease (NTP keeps them to milliseconds).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from runtime.events import (
    DriverLeased,
    DriverReleased,
    Event,
    LeaseClosed,
    LeaseGranted,
    LeaseReleased,
    LeaseRenewed,
)
from runtime.journal import (
    Fence,
    Journal,
    Recorded,
    StaleEpoch,
    Stamp,
    WrongExpectedVersion,
    standing_epoch,
)

log = logging.getLogger(__name__)


def stream_of(resource: str) -> str:
    return f"lease-{resource}"


@dataclass(frozen=True)
class Lease:
    """A lease as its holder holds it."""

    resource: str
    holder: str
    epoch: int  # the version of the grant: what the holder's appends are fenced by
    expires: float
    version: int = 0  # the stream's version after the holder's last write: where it writes next
    at_version: int | None = None  # the work it was taken for (None: no work counted)
    attempt: int = 1  # this start of that work, since the count was last reset

    @property
    def stream(self) -> str:
        return stream_of(self.resource)

    @property
    def fence(self) -> Fence:
        return (self.stream, self.epoch)


@dataclass(frozen=True)
class Standing:
    """What a lease stream's last event says about the lease."""

    holder: str
    epoch: int  # 0 once released
    expires: float  # 0.0 once released
    t: float  # when the event was written
    position: int
    at_version: int | None
    attempt: int  # the count carried (meaningless when `legacy`)
    outcome: str = ""
    legacy: bool = False  # written before the count was carried: count over the stream
    closed: bool = False  # LeaseClosed: nobody may take it again

    @property
    def released(self) -> bool:
        return self.epoch == 0

    def live(self, now: float) -> bool:
        return not self.released and self.expires > now


def standing(last: Recorded | None) -> Standing | None:
    """The lease's state from its stream's last record (None: never granted)."""
    if last is None:
        return None
    e = last.event
    epoch = standing_epoch(last)
    where = (e.t, last.position)
    if isinstance(e, LeaseRenewed):
        return Standing(e.holder, epoch, e.expires, *where, e.at_version, e.attempt)
    if isinstance(e, LeaseGranted):  # a v1 grant counted nothing: its attempt reads 0
        old = e.attempt == 0
        return Standing(e.holder, epoch, e.expires, *where, e.at_version, e.attempt, legacy=old)
    if isinstance(e, LeaseReleased):  # a v1 release named no epoch
        old = e.epoch is None
        return Standing(e.holder, 0, 0.0, *where, e.at_version, e.attempt, e.outcome, legacy=old)
    if isinstance(e, DriverLeased):
        return Standing(e.holder, epoch, e.expires, *where, e.at_version, 0, legacy=True)
    if isinstance(e, DriverReleased):
        return Standing(e.holder, 0, 0.0, *where, None, 0, e.outcome, legacy=True)
    if isinstance(e, LeaseClosed):
        return Standing(e.by, 0, 0.0, *where, None, 0, e.reason, closed=True)
    # Anything else (an imported journal may put what it likes in its own lease stream) holds
    # no lease, as the journal's fence judges it too.
    return Standing("", 0, 0.0, *where, None, 0, legacy=True)


def landing(ttl: float, clock: Callable[[], float] = time.time) -> Stamp:
    """The stamp of a grant or a renewal: written when it lands (under the journal's lock), it
    expires `ttl` after that, however long its append waited for the lock."""

    def stamp(event: Event) -> Event:
        now = clock()
        return event.model_copy(update={"t": now, "expires": now + ttl})

    return stamp


def granted_at(last: Recorded | None) -> int | None:
    """The version of the lease's latest grant, read from its stream's last record (0: never
    granted), or None where that record does not say (a release written before releases named
    their grant, a closing)."""
    if last is None:
        return 0
    e = last.event
    if isinstance(e, LeaseGranted | DriverLeased):
        return last.version
    if isinstance(e, LeaseRenewed | LeaseReleased):
        return e.epoch
    return None


def taken_since(last: Recorded | None, sent: int) -> bool:
    """Whether the lease was granted after its stream's version `sent` (when the work was asked
    for), as its last record `last` says: somebody has taken the work up since."""
    granted = granted_at(last)
    return granted is not None and granted > sent


def counted_over(records: Iterable[Recorded], at_version: int | None, since: int) -> int:
    """The starts of the work at `at_version` after position `since`, over a whole stream: how
    streams were counted before their events carried the count. A start released "waiting"
    handed its work on and does not count."""
    count = 0
    previous_here = False
    for r in records:
        if r.position <= since:
            continue
        e = r.event
        if isinstance(e, LeaseGranted | DriverLeased):
            previous_here = e.at_version == at_version
            count += previous_here
        elif isinstance(e, LeaseReleased | DriverReleased) and previous_here:
            count -= e.outcome == "waiting"
            previous_here = False
    return count


class Leases:
    """The lease primitive over any Journal. `run_id` goes on the events' envelope, so a run's
    export carries the leases it was driven under. `clock` is what expiries are stamped and
    judged by (time.time; a test's own to stall a write without waiting)."""

    def __init__(
        self, journal: Journal, run_id: str = "", clock: Callable[[], float] = time.time
    ) -> None:
        self.journal = journal
        self.run_id = run_id
        self.clock = clock

    @staticmethod
    def stream(resource: str) -> str:
        return stream_of(resource)

    def last(self, resource: str) -> Recorded | None:
        """The lease stream's last record: two point reads, whatever the stream's length."""
        stream = self.stream(resource)
        version = self.journal.version(stream)
        if not version:
            return None
        records = self.journal.read(stream, after=version - 1)
        return records[-1] if records else None

    def closed(self, resource: str) -> bool:
        """Whether the lease was closed for good (LeaseClosed): nobody may take it again."""
        state = standing(self.last(resource))
        return state is not None and state.closed

    def current(self, resource: str) -> Lease | None:
        """The lease as it stands (live or expired), or None when released or never granted."""
        last = self.last(resource)
        state = standing(last)
        if last is None or state is None or state.released:
            return None
        return Lease(
            resource,
            state.holder,
            state.epoch,
            state.expires,
            last.version,
            state.at_version,
            state.attempt,
        )

    def attempts(self, resource: str, at_version: int | None, since: int = 0) -> int:
        """The starts of the work at `at_version` since position `since` (0 when the lease was
        last taken for other work)."""
        last = self.last(resource)
        state = standing(last)
        if state is None or state.position <= since:
            return 0
        if state.legacy:
            return counted_over(self.journal.read(self.stream(resource)), at_version, since)
        return state.attempt if state.at_version == at_version else 0

    def acquire(
        self,
        resource: str,
        holder: str,
        ttl: float,
        *,
        at_version: int | None = None,
        since: int = 0,
        sent: int | None = None,
    ) -> Lease | None:
        """The lease, or None while somebody else's is live (or another taker won the race),
        or for good once it is closed. Taking it moves the epoch; its holder may take it again.
        `at_version` names the work it is taken for and `since` the position after which its
        starts count. `sent`: the stream's version when the work was asked for; None when it
        was granted since (`taken_since`: whoever took it goes on with the work)."""
        last = self.last(resource)
        state = standing(last)
        now = self.clock()
        if state is not None and state.closed:
            return None
        if sent is not None and taken_since(last, sent):
            return None
        if state is not None and state.live(now) and state.holder != holder:
            return None
        version = last.version if last is not None else 0
        if state is None or state.position <= since:
            attempt = 1
        elif state.legacy:
            counted = self.journal.read(self.stream(resource))
            attempt = counted_over(counted, at_version, since) + 1
        else:
            attempt = state.attempt + 1 if state.at_version == at_version else 1
        grant = LeaseGranted(
            run_id=self.run_id,
            resource=resource,
            holder=holder,
            expires=now + ttl,
            at_version=at_version,
            attempt=attempt,
        )
        stamp = landing(ttl, self.clock)
        try:
            [record] = self.journal.append(self.stream(resource), [grant], version, stamp=stamp)
        except WrongExpectedVersion:
            return None  # another taker got there first: it holds the lease, we do not
        expires = record.event.expires if isinstance(record.event, LeaseGranted) else grant.expires
        return Lease(resource, holder, version + 1, expires, version + 1, at_version, attempt)

    def close(self, resource: str, by: str, reason: str, at: int | None = None) -> bool:
        """Close the lease for good (LeaseClosed): no grant after it, and a holder still at work
        is fenced out. `at`: only if the stream still stands at that version (what the closer
        decided on is still so); None: whatever it stands at. False when it moved from `at`."""
        closed = LeaseClosed(run_id=self.run_id, resource=resource, by=by, reason=reason)
        for _ in range(3 if at is None else 1):
            last = self.last(resource)
            if last is not None and isinstance(last.event, LeaseClosed):
                return True  # closed by a step of the run that died before it said so
            version = last.version if last is not None else 0
            try:
                self.journal.append(self.stream(resource), [closed], version if at is None else at)
            except WrongExpectedVersion:
                continue  # a renewal or a grant moved it: look again, or say so
            return True
        return False

    def renew(self, lease: Lease, ttl: float) -> Lease:
        """Push the lease's expiry on; the epoch stays. Raises StaleEpoch when the lease was
        taken over or given back since the holder last wrote to it."""
        renewal = LeaseRenewed(
            run_id=self.run_id,
            resource=lease.resource,
            holder=lease.holder,
            expires=self.clock() + ttl,  # stamped again as it lands
            epoch=lease.epoch,
            at_version=lease.at_version,
            attempt=lease.attempt,
        )
        version = lease.version
        stamp = landing(ttl, self.clock)
        for _ in range(2):
            try:
                [record] = self.journal.append(lease.stream, [renewal], version, stamp=stamp)
            except WrongExpectedVersion:
                # A renewal of ours whose answer was lost moved the stream: still ours, go on
                # from where it stands. Anything else took it from us.
                version = self._still_ours(lease)
                continue
            landed = record.event
            expires = landed.expires if isinstance(landed, LeaseRenewed) else renewal.expires
            return replace(lease, expires=expires, version=record.version)
        raise StaleEpoch(lease.stream, lease.epoch, standing_epoch(self.last(lease.resource)))

    def release(
        self,
        lease: Lease,
        outcome: str = "",
        *,
        counted: bool = True,
        retry_after: float | None = None,
    ) -> bool:
        """Give the lease back; False when it was not ours any more (taken over after it
        expired: the new holder releases it, not us). `counted=False` when this start handed
        its work on rather than doing it, so the work's next start is not a retry.
        `retry_after`: what the model endpoint that failed the work asked us to wait."""
        released = LeaseReleased(
            run_id=self.run_id,
            resource=lease.resource,
            holder=lease.holder,
            epoch=lease.epoch,
            outcome=outcome,
            at_version=lease.at_version,
            attempt=lease.attempt if counted else lease.attempt - 1,
            retry_after=retry_after,
        )
        version = lease.version
        for _ in range(2):
            try:
                self.journal.append(lease.stream, [released], version)
            except WrongExpectedVersion:
                try:
                    version = self._still_ours(lease)
                except StaleEpoch:
                    return False
                continue
            return True
        return False

    def _still_ours(self, lease: Lease) -> int:
        """The stream's version when the lease still stands at its epoch with its holder (a
        write of ours landed without our hearing of it); StaleEpoch otherwise."""
        last = self.last(lease.resource)
        state = standing(last)
        if last is None or state is None or state.epoch != lease.epoch:
            raise StaleEpoch(lease.stream, lease.epoch, state.epoch if state else 0)
        if state.holder != lease.holder:
            raise StaleEpoch(lease.stream, lease.epoch, state.epoch)
        return last.version
