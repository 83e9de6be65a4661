"""A lease's renewal counts its expiry from when it lands, not from when it was built: one that
waited on another writer's lock for longer than its lease had left used to land already
expired, and the reconciler handed a run whose holder was alive to another worker. The
heartbeat beats by the time left on its leases, and a lost lease ends its holder's tool runs:
one taken over, or one whose renewals kept failing until it expired."""

from __future__ import annotations

import threading

from runtime.coordination.heartbeat import Heartbeat, HeartbeatTiming
from runtime.coordination.leases import Leases, landing, standing
from runtime.events import LeaseGranted, LeaseRenewed
from runtime.journal import MemoryJournal, append_next


class Clock:
    """A clock the test moves; it says when it was read."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.read = threading.Event()

    def __call__(self) -> float:
        self.read.set()
        return self.now


class Busy(Exception):
    """What a journal that is busy for a while raises (the heartbeat's `transient`)."""


def test_a_renewal_that_waited_on_the_lock_stands_for_its_ttl_from_its_landing():
    journal = MemoryJournal()
    clock = Clock(1000.0)
    leases = Leases(journal, clock=clock)
    lease = leases.acquire("x", "w1", ttl=6)
    assert lease.expires == 1006.0
    clock.read.clear()
    renewed = []
    renewing = threading.Thread(target=lambda: renewed.append(leases.renew(lease, ttl=6)))
    with journal._lock:  # another writer holds the journal, as SQLite's write lock was held
        renewing.start()
        assert clock.read.wait(10)  # the renewal is built; its append waits on the lock
        clock.now += 7  # longer than the whole lease
    renewing.join(10)
    [held] = renewed
    assert held.expires == 1013.0  # 6 s from when it landed, not from when it was built
    last = leases.last("x")
    assert isinstance(last.event, LeaseRenewed) and last.event.expires == 1013.0
    assert last.event.t == 1007.0  # written when it landed
    assert standing(last).live(clock())
    assert leases.acquire("x", "w2", ttl=6) is None  # nobody takes a lease being renewed


class Gated(MemoryJournal):
    """A journal whose appends wait at a gate before taking its lock: reads go on meanwhile
    (a grant reads the lease before it writes)."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()
        self.gate = threading.Event()

    def append(self, *args, **kw):
        self.waiting.set()
        assert self.gate.wait(10)
        return super().append(*args, **kw)


def test_a_grant_stands_for_its_ttl_from_its_landing():
    journal = Gated()
    clock = Clock(1000.0)
    leases = Leases(journal, clock=clock)
    granted = []
    taking = threading.Thread(target=lambda: granted.append(leases.acquire("x", "w1", ttl=6)))
    taking.start()
    assert journal.waiting.wait(10)  # built at 1000, its append held up
    clock.now += 7
    journal.gate.set()
    taking.join(10)
    assert granted[0].expires == 1013.0 == leases.current("x").expires


def test_a_stamped_renewal_retried_returns_what_was_stored():
    journal = MemoryJournal()
    clock = Clock(1000.0)
    lease = Leases(journal, clock=clock).acquire("x", "w1", ttl=6)
    renewal = LeaseRenewed(resource="x", holder="w1", expires=0.0, epoch=lease.epoch)
    [first] = journal.append("lease-x", [renewal], 1, stamp=landing(6, clock))
    clock.now += 3  # the answer was lost; the same renewal is sent again
    [again] = journal.append("lease-x", [renewal], 1, stamp=landing(6, clock))
    assert first == again and again.event.expires == 1006.0  # stored once, never restamped
    assert journal.version("lease-x") == 2


def test_the_next_beat_comes_a_third_of_the_ttl_after_a_renewal_that_landed():
    clock = Clock(1000.0)
    leases = Leases(MemoryJournal(), clock=clock)
    lease = leases.acquire("x", "w1", ttl=6)
    beat = Heartbeat(leases, [lease], HeartbeatTiming(6))
    clock.now += 2
    beat.beat()
    assert beat.held[0].expires == 1008.0
    assert beat.wait() == 2.0


def test_after_a_slow_beat_that_did_not_renew_the_next_comes_at_once():
    clock = Clock(1000.0)
    journal = MemoryJournal()
    leases = Leases(journal, clock=clock)
    held = [leases.acquire(name, "w1", ttl=6) for name in ("worker-1", "slots-1")]
    real = journal.append

    def stalled(stream, events, expected_version, **kw):
        clock.now += 1.5  # waited on the database this long, then was told it is busy
        raise Busy("database is locked")

    beat = Heartbeat(leases, held, HeartbeatTiming(6), transient=(Busy,))
    clock.now += 2
    journal.append = stalled
    beat.beat()  # both renewals fail after 1.5 s each: 5 s of a 6 s lease, and nothing renewed
    assert beat.renewals == 0
    assert beat.wait() == 6 / 30  # not 2 s more: try again at once
    journal.append = real
    beat.beat()
    assert beat.renewals == 2 and beat.wait() == 2.0  # renewed: back to a third of the lease


def test_renewals_that_fail_until_the_lease_expires_lose_it():
    """The journal answered every renewal with a transient error until the lease's expiry had
    passed: anybody may have taken it since, and the holder would hear of it only once the
    journal answers. The heartbeat takes it for lost then (on_lost ends the holder's children)
    and renews it no more, rather than let the holder's work go on meanwhile."""
    clock = Clock(1000.0)
    journal = MemoryJournal()
    leases = Leases(journal, clock=clock)
    lease = leases.acquire("x", "w1", ttl=6)
    lost = []
    beat = Heartbeat(
        leases, [lease], HeartbeatTiming(6, stop_wait=0.0), transient=(Busy,), on_lost=lost.append
    )
    real = journal.append

    def busy(*args, **kw):
        raise Busy("database is locked")

    journal.append = busy
    clock.now = 1005.9
    beat.beat()
    assert lost == [] == beat.lost  # not yet expired: tried again soon
    clock.now = 1006.0
    beat.beat()
    assert lost == [lease] == beat.lost
    journal.append = real
    beat.beat()
    assert beat.renewals == 0 and leases.current("x").expires == 1006.0  # not renewed again


def test_a_lost_lease_is_reported_on_the_heartbeats_thread_at_once():
    journal = MemoryJournal()
    leases = Leases(journal)
    lease = leases.acquire("x", "w1", ttl=0.3)
    lost = []
    found = threading.Event()
    beat = Heartbeat(
        leases,
        [lease],
        HeartbeatTiming(0.3),
        on_lost=lambda lease: (lost.append(lease), found.set()),
    )
    append_next(journal, "lease-x", [LeaseGranted(resource="x", holder="w2", expires=9e9)])
    beat.start()
    assert found.wait(10)
    beat.stop()
    assert lost == [lease] == beat.lost


def test_a_renewal_that_hangs_past_the_expiry_loses_the_lease_while_it_hangs():
    """The journal took the renewal and did not answer (a lock another writer held): the
    thread that renews waits inside it. The lease is taken for lost once its expiry passes all
    the same (on_lost ends the holder's children), not once the journal answers: until then
    anybody may have taken it over, and the holder's children went on running beside them."""
    journal = Gated()
    clock = Clock(1000.0)
    leases = Leases(journal, clock=clock)
    journal.gate.set()
    lease = leases.acquire("x", "w1", ttl=6)
    journal.gate.clear()
    journal.waiting.clear()
    lost = threading.Event()
    beat = Heartbeat(leases, [lease], HeartbeatTiming(6), on_lost=lambda lease: lost.set())
    clock.now = 1004.0  # two thirds of the lease have run: the first beat is due at once
    beat.start()
    try:
        assert journal.waiting.wait(10)  # the renewal is in the journal, and stays there
        assert not lost.wait(1.0)  # within its lease: it may still land
        clock.now = 1006.0
        assert lost.wait(10)  # while the renewal still hangs
        assert beat.lost == [lease] and beat.renewals == 0
    finally:
        journal.gate.set()
        [held] = beat.stop()
    beat._thread.join(10)  # stop() waits for the renewal only a moment
    assert leases.last("x").event.kind == "LeaseRenewed"  # it landed in the end
    assert held == lease and beat.renewals == 0  # lost it stays: its holder has stopped
    assert leases.release(held) is True  # still the holder's to give back: nobody took it


def test_a_renewal_that_answers_after_the_stop_reports_nothing():
    """The holder stopped its heartbeat while a renewal hung (stop() waits for it only a
    moment), and another worker took the lease before the renewal answered: the renewal is
    refused, and nothing is reported. An `on_lost` then ended the children and gave up the
    writer of whatever the holder's thread had gone on to (a warm flight's next step)."""
    journal = Gated()
    clock = Clock(1000.0)
    leases = Leases(journal, clock=clock)
    journal.gate.set()
    lease = leases.acquire("x", "w1", ttl=6)
    journal.gate.clear()
    journal.waiting.clear()
    lost = []
    beat = Heartbeat(leases, [lease], HeartbeatTiming(6, stop_wait=0.0), on_lost=lost.append)
    clock.now = 1004.0  # the first beat is due at once
    beat.start()
    try:
        assert journal.waiting.wait(10)  # the renewal waits at the gate
        stopper = threading.Thread(target=beat.stop)
        stopper.start()
        stopper.join(10)  # a guard, not a measure: the gate stays shut meanwhile
        assert not stopper.is_alive(), "stop() waited for the hung renewal"
        clock.now = 1007.0  # the lease ran out; another worker takes it
        taken = leases.last("x").version
        grant = LeaseGranted(resource="x", holder="w2", expires=9e9)
        MemoryJournal.append(journal, "lease-x", [grant], taken)
    finally:
        journal.gate.set()
    beat._thread.join(10)
    assert not beat._thread.is_alive()
    assert lost == [] == beat.lost  # refused, and said to nobody
    assert leases.current("x").holder == "w2"  # the stray renewal wrote nothing
