"""Bulkheads: caps on how many workers run at once, per pool and per run."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass


class BulkheadFull(Exception):
    def __init__(self, name: str, limit: int) -> None:
        super().__init__(f"bulkhead {name} is full ({limit} in use)")
        self.name = name
        self.limit = limit


@dataclass(frozen=True)
class BulkheadStats:
    name: str
    limit: int
    in_use: int
    peak: int
    admitted: int
    waited: int  # admissions and refusals that had to wait for a slot first
    rejected: int  # refused: no slot at once (try_acquire) or within the timeout


class Bulkhead:
    """A bounded semaphore that counts: how many got in, waited, were turned away.

    The counts are the backpressure signal: a pool whose `rejected` climbs needs fewer
    fan-outs or more workers, and the numbers say which pool.
    """

    def __init__(self, name: str, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"bulkhead {name}: limit must be at least 1")
        self.name = name
        self.limit = limit
        self._cond = threading.Condition()
        self._in_use = 0
        self._peak = 0
        self._admitted = 0
        self._waited = 0
        self._rejected = 0

    def try_acquire(self) -> bool:
        """A slot now, or False at once."""
        return self.acquire(timeout=0)

    def acquire(self, timeout: float | None = None) -> bool:
        """A slot within `timeout` seconds (None: wait as long as it takes), or False."""
        with self._cond:
            if self._in_use >= self.limit:
                if timeout is not None and timeout <= 0:
                    self._rejected += 1
                    return False
                self._waited += 1
                if not self._cond.wait_for(lambda: self._in_use < self.limit, timeout):
                    self._rejected += 1
                    return False
            self._in_use += 1
            self._admitted += 1
            self._peak = max(self._peak, self._in_use)
            return True

    def release(self) -> None:
        with self._cond:
            if self._in_use == 0:
                raise RuntimeError(f"bulkhead {self.name}: released more slots than acquired")
            self._in_use -= 1
            self._cond.notify()

    @contextmanager
    def slot(self, timeout: float | None = None) -> Iterator[None]:
        """Hold a slot for the block, or raise BulkheadFull."""
        if not self.acquire(timeout):
            raise BulkheadFull(self.name, self.limit)
        try:
            yield
        finally:
            self.release()

    def stats(self) -> BulkheadStats:
        with self._cond:
            return BulkheadStats(
                self.name,
                self.limit,
                self._in_use,
                self._peak,
                self._admitted,
                self._waited,
                self._rejected,
            )


class Bulkheads:
    """A bulkhead per worker pool and one per run: a worker needs a slot in both.

    The pool cap keeps one kind of specialist (say, everything behind a slow orders API) from
    taking every thread; the run cap keeps one run's fan-out from starving the other runs.
    Slots are taken run first, then pool, always in that order, so two callers cannot each
    hold what the other waits for.
    """

    def __init__(self, pools: Mapping[str, int], per_run: int) -> None:
        self.pools = {name: Bulkhead(f"pool:{name}", limit) for name, limit in pools.items()}
        self.per_run = per_run
        self._runs: dict[str, Bulkhead] = {}
        self._lock = threading.Lock()

    def run(self, run_id: str) -> Bulkhead:
        with self._lock:
            if run_id not in self._runs:
                self._runs[run_id] = Bulkhead(f"run:{run_id}", self.per_run)
            return self._runs[run_id]

    def acquire(self, pool: str, run_id: str, timeout: float | None = None) -> bool:
        """Slots in the run's and the pool's bulkheads within `timeout` in all, or neither."""
        return self._enter(pool, run_id, timeout) is None

    def try_acquire(self, pool: str, run_id: str) -> bool:
        return self.acquire(pool, run_id, timeout=0)

    def _enter(self, pool: str, run_id: str, timeout: float | None) -> Bulkhead | None:
        """None when both slots are held; otherwise the bulkhead that turned us away."""
        deadline = None if timeout is None else time.monotonic() + timeout
        run, shared = self.run(run_id), self.pools[pool]
        if not run.acquire(timeout):
            return run
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not shared.acquire(left):
            run.release()
            return shared
        return None

    def release(self, pool: str, run_id: str) -> None:
        self.pools[pool].release()
        self.run(run_id).release()

    @contextmanager
    def slot(self, pool: str, run_id: str, timeout: float | None = None) -> Iterator[None]:
        refused = self._enter(pool, run_id, timeout)
        if refused is not None:
            raise BulkheadFull(refused.name, refused.limit)
        try:
            yield
        finally:
            self.release(pool, run_id)

    def forget(self, run_id: str) -> None:
        """Drop a finished run's bulkhead (kept while any of its slots is held)."""
        with self._lock:
            bulkhead = self._runs.get(run_id)
            if bulkhead is not None and bulkhead.stats().in_use == 0:
                del self._runs[run_id]
