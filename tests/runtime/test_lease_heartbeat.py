"""A heartbeat renews its holder's leases from a thread of its own while the holder works: the
lease outlives its ttl, the holder's fenced appends keep passing, and a takeover ends it."""

from __future__ import annotations

import time

from runtime.coordination.heartbeat import Heartbeat, HeartbeatTiming
from runtime.coordination.leases import Leases
from runtime.events import BudgetDebited, LeaseGranted, LeaseRenewed
from runtime.fenced import Fenced
from runtime.journal import MemoryJournal, append_next


def until(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_heartbeat_keeps_a_lease_past_its_ttl_and_the_holder_writes_all_along():
    journal = MemoryJournal()
    leases = Leases(journal)
    ttl = 0.3
    lease = leases.acquire("x", "w1", ttl=ttl)
    fenced = Fenced(journal, lease.stream, lease.epoch)
    with Heartbeat(leases, [lease], HeartbeatTiming(ttl)) as beat:
        for n in range(1, 6):  # the holder appends while its lease is renewed under it
            fenced.append("run-a", [BudgetDebited(amount=n)], n - 1)
            until(lambda n=n: beat.renewals >= n)
            assert leases.acquire("x", "w2", ttl=ttl) is None  # nobody else gets it
    [held] = beat.stop()
    assert held.epoch == lease.epoch and held.version == lease.version + beat.renewals
    assert held.expires > lease.expires + ttl  # well past where the grant ran out
    assert leases.release(held, "done") is True
    kinds = [r.event.kind for r in journal.read("lease-x")]
    assert kinds == ["LeaseGranted", *["LeaseRenewed"] * beat.renewals, "LeaseReleased"]
    assert journal.version("run-a") == 5


def test_a_heartbeat_that_finds_its_lease_taken_over_stops_renewing_it():
    journal = MemoryJournal()
    leases = Leases(journal)
    lease = leases.acquire("x", "w1", ttl=0.3)
    beat = Heartbeat(leases, [lease], HeartbeatTiming(0.3)).start()
    until(lambda: beat.renewals >= 1)
    # Somebody is granted the lease (as after an expiry the holder did not see coming).
    intruder = LeaseGranted(resource="x", holder="w2", expires=9e9)
    [granted] = append_next(journal, "lease-x", [intruder])
    until(lambda: beat.lost)
    [held] = beat.stop()
    assert beat.lost == [held]
    assert leases.current("x").holder == "w2"
    after = journal.read("lease-x", after=granted.version)
    assert not any(isinstance(r.event, LeaseRenewed) for r in after)
    assert leases.release(held) is False  # not ours to give back
    assert leases.current("x").holder == "w2"


def test_a_heartbeat_renews_every_lease_it_holds():
    journal = MemoryJournal()
    leases = Leases(journal)
    held = [leases.acquire(name, "w1", ttl=0.3) for name in ("worker-1", "slots-1")]
    with Heartbeat(leases, held, HeartbeatTiming(0.3)) as beat:
        until(lambda: beat.renewals >= 4)
    renewed = beat.stop()
    assert [lease.resource for lease in renewed] == ["worker-1", "slots-1"]
    assert all(lease.version >= 3 for lease in renewed)
    assert all(leases.release(lease) for lease in renewed)
