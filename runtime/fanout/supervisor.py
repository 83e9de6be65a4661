"""Let it crash, within reason: restarts of a worker counted per window, with a cap.

Takes its clock as an argument: tests move time by hand and never sleep.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

Clock = Callable[[], float]


@dataclass(frozen=True)
class Restart:
    worker_id: str
    count: int  # restarts within the window, this one included


@dataclass(frozen=True)
class GiveUp:
    worker_id: str
    count: int
    window_seconds: float


class Supervisor:
    """Let it crash, within reason: up to `max_restarts` restarts of a worker per window.

    Giving up is final for that worker: a restart loop that pauses long enough to leave the
    window is still a restart loop, and deciding otherwise is a person's call.
    """

    def __init__(
        self, max_restarts: int = 3, window_seconds: float = 60.0, clock: Clock = time.monotonic
    ) -> None:
        self.max_restarts = max_restarts
        self.window_seconds = window_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._restarts: dict[str, deque[float]] = {}
        self._gave_up: set[str] = set()

    def restart(self, worker_id: str) -> Restart | GiveUp:
        """Ask to restart a worker: a Restart to go ahead, or GiveUp when over the cap."""
        with self._lock:
            recent = self._recent(worker_id)
            if worker_id in self._gave_up or len(recent) >= self.max_restarts:
                self._gave_up.add(worker_id)
                return GiveUp(worker_id, len(recent), self.window_seconds)
            recent.append(self.clock())
            return Restart(worker_id, len(recent))

    def restarts(self, worker_id: str) -> int:
        with self._lock:
            return len(self._recent(worker_id))

    def _recent(self, worker_id: str) -> deque[float]:
        recent = self._restarts.setdefault(worker_id, deque())
        cutoff = self.clock() - self.window_seconds
        while recent and recent[0] <= cutoff:
            recent.popleft()
        return recent
