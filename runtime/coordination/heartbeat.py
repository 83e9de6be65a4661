"""The heartbeat: renewing a holder's leases from a thread of its own while the holder works,
and taking them for lost when they cannot be renewed (runtime/coordination/leases.py says what
a lease is, and why a renewal does not move its epoch)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType

from runtime.coordination.leases import Lease, Leases
from runtime.journal import StaleEpoch

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HeartbeatTiming:
    """How long a holder's leases last, and how long the heartbeat waits on them (see
    `Heartbeat`): `ttl`, each grant's and renewal's; `stop_wait`, what `stop()` gives a renewal
    in flight (None: a tenth of the ttl, at most 1 s); `grace`, how long past a lease's expiry
    an overdue renewal may still answer (None: one more ttl)."""

    ttl: float
    stop_wait: float | None = None
    grace: float | None = None


class Heartbeat:
    """Renews leases from a thread of its own while their holder works: when a third of the
    shortest one has run (`wait`).

    `stop()` ends it and hands back the leases as they stand (their versions moved with each
    renewal: release those, not the ones first granted). A renewal that finds the lease taken
    over stops renewing it and logs so; the holder learns it at its next fenced append
    (StaleEpoch), and `on_lost` runs at once (to end what the holder runs outside the journal:
    its tool's processes, its git). Errors in `transient` (the database briefly locked) are
    logged and tried again soon, until the lease's expiry (as its last renewal landed, on the
    leases' clock) has passed: the holder can then no longer tell whether it still holds the
    lease, and it is taken for lost as one taken over is. So is a lease whose expiry passes
    while its renewal hangs in the journal (waiting on another writer's lock: SQLite's busy
    wait, a PostgreSQL session holding the append lock), by a second thread that watches the
    expiries (`_watch`): the thread that renews is stuck inside the renewal, and the holder's
    children went on running after another worker could have taken the work over. A lease
    taken for lost stays lost, even if the renewal that hung lands after all: its holder has
    ended what it ran. Anything else ends the renewing thread with its traceback; the lease is
    then taken for lost at its expiry, and expires as if the holder had died. `on_lost` runs on
    either thread; `on_exit` on the renewing one as it ends (to close its database connection);
    `on_stop` on the caller of `stop()`.

    With `on_overdue`, a lease whose expiry passes while its renewal hangs is not lost at once
    but overdue: `on_overdue` stops the holder where it is (its writer waits, its children are
    ended) until the renewal answers. One that lands at the same epoch proves nobody took the
    lease meanwhile (a grant would have moved the stream under its compare-and-swap), and
    `on_kept` says whether the holder may go on: yes unless the wait already cost it something
    (a child ended, whose caller took it for its own failure). Before, the lateness alone (a
    commit that answered late, a lock let go a moment after the expiry) cost the whole step,
    though nobody else held the lease. A renewal that is refused (a higher epoch: taken over),
    fails, or has not answered `timing.grace` seconds past the expiry loses the lease as before,
    as does `stop()` with a lease still overdue (the holder's work is over; nothing may stay
    waiting on it). `on_overdue` and `on_kept` run on either thread, one at a time with
    `on_lost`.

    `stop()` waits for a renewal in flight for `timing.stop_wait` seconds at most, not for as
    long as the journal keeps it (a lock another writer holds, a connection that does not
    answer): the holder's work is over and its outcome decided, and it would wait on a renewal
    it no longer needs before it could give the lease back. A renewal still in flight then
    writes nothing that matters: the holder's release moves the lease stream, so the renewal's
    compare-and-swap fails and it finds the lease given back (or, landing first, the release
    finds it ours and goes on from it); nothing is reported after `stop()` (no `on_lost` for a
    lease whose holder has let go, which would end the children and give up the writer of
    whatever the holder's thread does next), and no further lease is renewed.
    """

    def __init__(
        self,
        leases: Leases,
        held: Sequence[Lease],
        timing: HeartbeatTiming,
        *,
        transient: tuple[type[BaseException], ...] = (),
        on_exit: Callable[[], object] | None = None,
        on_lost: Callable[[Lease], object] | None = None,
        on_stop: Callable[[], object] | None = None,
        on_overdue: Callable[[Lease], object] | None = None,
        on_kept: Callable[[Lease], bool] | None = None,
    ) -> None:
        self.leases = leases
        self.held = list(held)
        self.ttl = ttl = timing.ttl
        self.transient = transient
        self.on_exit = on_exit
        self.on_lost = on_lost
        self.on_stop = on_stop
        self.on_overdue = on_overdue
        self.on_kept = on_kept
        self.grace = ttl if timing.grace is None else timing.grace
        # A renewal about to answer is worth a moment: release goes on from its version.
        self.stop_wait = min(1.0, ttl / 10) if timing.stop_wait is None else timing.stop_wait
        self.lost: list[Lease] = []
        self.renewals = 0
        self._gone: set[int] = set()  # where in `held` the leases taken for lost are
        self._overdue: set[int] = set()  # those past their expiry, their renewal not answered
        self.kept = 0  # overdue leases whose late renewal landed, and their holder went on
        # Between the renewing thread taking a renewal and the watch taking the lease for lost.
        self._lock = threading.Lock()
        # Held while `on_lost`, `on_overdue` or `on_kept` runs: one at a time, and none after
        # stop() (which takes it) returns. Reentrant: a lease not kept is lost under it.
        self._reporting = threading.RLock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)
        self._watcher = threading.Thread(target=self._watch, name="lease-watch", daemon=True)

    @property
    def overdue(self) -> list[Lease]:
        """The leases past their expiry whose renewal has not answered yet."""
        with self._lock:
            return [self.held[i] for i in sorted(self._overdue)]

    def start(self) -> Heartbeat:
        self._thread.start()
        self._watcher.start()
        return self

    def stop(self) -> list[Lease]:
        with self._reporting:  # an `on_lost` under way has finished; none starts from now on
            for i in sorted(self._overdue):
                self._lose(i, "its holder stopped before its late renewal answered")
            self._stop.set()
        if self._watcher.is_alive():
            self._watcher.join()  # it reads no journal: it ends at once
        if self._thread.is_alive():
            self._thread.join(self.stop_wait)  # a renewal in flight: not for as long as it hangs
        if self.on_stop is not None:
            self.on_stop()
        return list(self.held)

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.wait()):
                self.beat()
        finally:
            if self.on_exit is not None:
                self.on_exit()

    def wait(self) -> float:
        """How long until the next beat: until the shortest lease still held has two thirds of
        its ttl left, a third of it after a renewal that landed. Counted from what is left, not
        from when the last beat returned: after a beat that was slow (one lease's renewal
        waited on the journal while the next one's ran down) or failed (the database busy),
        the next comes at once, not a third of a lease later with less than that left. Never
        less than a thirtieth of the ttl, so a journal failing fast is not hammered."""
        live = self._expiries()
        if not live:
            return self.ttl / 3  # nothing left to renew: only stop() is awaited
        left = min(live) - self.leases.clock()
        return max(left - 2 * self.ttl / 3, self.ttl / 30)

    def _expiries(self) -> list[float]:
        return [lease.expires for i, lease in enumerate(self.held) if i not in self._gone]

    def _deadlines(self) -> list[float]:
        """When the watch acts on each lease still held: at its expiry, and an overdue one's
        `grace` later."""
        return [
            lease.expires + (self.grace if i in self._overdue else 0.0)
            for i, lease in enumerate(self.held)
            if i not in self._gone
        ]

    def beat(self) -> None:
        """Renew every lease still held, once."""
        for i, lease in enumerate(self.held):
            if self._stop.is_set():
                return  # the holder let go while an earlier renewal hung: renew no more
            if i in self._gone:
                continue
            try:
                renewed = self.leases.renew(lease, self.ttl)
            except StaleEpoch as exc:
                self._lose(i, str(exc))
                continue
            except self.transient as exc:
                if self.leases.clock() < lease.expires:
                    log.warning("lease %s not renewed (will try again): %s", lease.resource, exc)
                    continue
                # Past its expiry and still not renewed: anybody may have taken it since, and
                # the holder would hear of it only from the journal that does not answer now
                # (at a renewal or an append that lands). Ended now, as if taken over.
                self._lose(i, f"not renewed before it expired: {exc}")
                continue
            self._landed(i, renewed)

    def _landed(self, i: int, renewed: Lease) -> None:
        """`held[i]`'s renewal landed: held again, unless it was lost meanwhile (the watch gave
        up on it, and its holder ended what it ran), or was overdue and its holder cannot go
        on."""
        with self._reporting:
            with self._lock:
                if i in self._gone:  # the watch took it for lost while this hung
                    return
                self.held[i] = renewed
                self.renewals += 1
                late = i in self._overdue
                self._overdue.discard(i)
            if not late or self._stop.is_set():
                return
            if self.on_kept is not None and self.on_kept(renewed):
                self.kept += 1
                log.warning(
                    "lease %s of %s renewed after its expiry, nobody having taken it: kept",
                    renewed.resource,
                    renewed.holder,
                )
                return
            self._lose(i, "renewed after its expiry, when its holder had ended what it ran")

    def _watch(self) -> None:
        """Take each lease for lost (with `on_overdue`: for overdue, and lost `grace` later)
        once its expiry has passed with no renewal landed, whatever the renewing thread is
        doing (waiting inside a renewal the journal has not answered). Reads no journal: this
        thread must not wait on what the other one waits on."""
        while not self._stop.wait(self._until_expiry()):
            now = self.leases.clock()
            for i in range(len(self.held)):
                if self.on_overdue is not None and i not in self._overdue:
                    self._fall_overdue(i, now)
                elif self.on_overdue is None or now >= self.held[i].expires + self.grace:
                    self._lose(i, "its expiry passed and no renewal landed", expired_at=now)

    def _fall_overdue(self, i: int, now: float) -> None:
        """`held[i]` expired by `now` with no renewal landed: its holder is stopped where it is
        until the renewal answers (under the lock: one that landed meanwhile keeps it)."""
        with self._reporting:
            if self._stop.is_set():
                return
            with self._lock:
                lease = self.held[i]
                if i in self._gone or i in self._overdue or lease.expires > now:
                    return
                self._overdue.add(i)
            log.warning(
                "lease %s of %s expired before its renewal answered: its holder waits",
                lease.resource,
                lease.holder,
            )
            if self.on_overdue is not None:
                self.on_overdue(lease)

    def _until_expiry(self) -> float:
        """How long the watch sleeps: until the first expiry still held, and never more than a
        tenth of the ttl, since the leases' clock is read, not slept on (a wall clock stepped
        by NTP; a test's clock, moved without time passing)."""
        live = self._deadlines()
        if not live:
            return self.ttl / 3  # nothing left to watch: only stop() is awaited
        return min(max(min(live) - self.leases.clock(), 0.0), self.ttl / 10)

    def _lose(self, i: int, why: str, expired_at: float | None = None) -> None:
        """Take `held[i]` for lost, once; with `expired_at`, only if it expired by then (under
        the lock: a renewal that landed meanwhile keeps it)."""
        with self._reporting:
            if self._stop.is_set():
                return  # the holder let go: what became of its lease is the release's to say
            with self._lock:
                lease = self.held[i]
                if i in self._gone or (expired_at is not None and lease.expires > expired_at):
                    return
                self._gone.add(i)
                self._overdue.discard(i)
                self.lost.append(lease)
            log.warning("lease %s of %s lost: %s", lease.resource, lease.holder, why)
            if self.on_lost is not None:
                self.on_lost(lease)
