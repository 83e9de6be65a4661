"""Bulkheads: caps on parallel workers, per pool and per run, that hold under threads."""

from __future__ import annotations

import threading
import time

import pytest

from runtime.fanout.bulkheads import Bulkhead, BulkheadFull, Bulkheads


def wait_until(predicate, what):
    # Polls for a state; the deadline only keeps a broken build from hanging, nothing is timed.
    deadline = time.monotonic() + 10
    while not predicate():
        assert time.monotonic() < deadline, f"never reached: {what}"
        time.sleep(0.001)


def test_a_bulkhead_never_lets_more_than_its_limit_in():
    bulkhead = Bulkhead("pool:orders", 3)
    lock = threading.Lock()
    inside = 0
    most = 0
    gate = threading.Event()

    def worker():
        nonlocal inside, most
        with bulkhead.slot():
            with lock:
                inside += 1
                most = max(most, inside)
            gate.wait(10)  # the first three hold their slots until the rest are queued
            with lock:
                inside -= 1

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    wait_until(lambda: bulkhead.stats().waited == 5, "five threads waiting")
    assert bulkhead.stats().in_use == 3
    gate.set()
    for t in threads:
        t.join(10)
    stats = bulkhead.stats()
    assert most == 3 and stats.peak == 3
    assert (stats.in_use, stats.admitted, stats.waited, stats.rejected) == (0, 8, 5, 0)


def test_try_acquire_refuses_at_once_and_acquire_gives_up_after_its_timeout():
    bulkhead = Bulkhead("pool:kb", 1)
    assert bulkhead.try_acquire()
    assert not bulkhead.try_acquire()
    assert not bulkhead.acquire(timeout=0.01)
    stats = bulkhead.stats()
    assert (stats.rejected, stats.waited) == (2, 1)
    with pytest.raises(BulkheadFull), bulkhead.slot(timeout=0):
        pass
    bulkhead.release()
    assert bulkhead.try_acquire()
    bulkhead.release()
    with pytest.raises(RuntimeError, match="released more"):
        bulkhead.release()


def test_a_worker_needs_a_slot_in_its_run_and_its_pool():
    heads = Bulkheads({"orders": 3}, per_run=2)
    assert heads.try_acquire("orders", "r1")
    assert heads.try_acquire("orders", "r1")
    with pytest.raises(BulkheadFull) as full, heads.slot("orders", "r1", timeout=0):
        pass
    assert full.value.name == "run:r1"  # the run's cap, not the pool's
    assert heads.try_acquire("orders", "r2")  # other runs still get in
    with pytest.raises(BulkheadFull) as full, heads.slot("orders", "r3", timeout=0):
        pass
    assert full.value.name == "pool:orders"
    assert heads.run("r3").stats().in_use == 0  # the run slot was given back
    heads.release("orders", "r1")
    assert heads.try_acquire("orders", "r3")


def test_pool_and_run_caps_hold_under_threads():
    heads = Bulkheads({"orders": 3}, per_run=2)
    lock = threading.Lock()
    inside = {"pool": 0, "r1": 0, "r2": 0}
    most = dict.fromkeys(inside, 0)

    def worker(run_id):
        for _ in range(20):
            with heads.slot("orders", run_id):
                with lock:
                    for key in ("pool", run_id):
                        inside[key] += 1
                        most[key] = max(most[key], inside[key])
                time.sleep(0)  # let others run while the slot is held
                with lock:
                    inside["pool"] -= 1
                    inside[run_id] -= 1

    threads = [threading.Thread(target=worker, args=(f"r{i % 2 + 1}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert most["pool"] <= 3 and most["r1"] <= 2 and most["r2"] <= 2
    assert heads.pools["orders"].stats().admitted == 160
    heads.forget("r1")
    assert heads.run("r1").stats().admitted == 0  # a fresh one: the old was dropped
