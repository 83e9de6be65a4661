"""When a step began, and the work done once a step before it first touches the world."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class StepStart:
    """When the step a session drives began (time.monotonic()), and what is done once a step,
    before its first live tool run or harness activity: the host's housekeeping after a worker
    that was killed (git's lock files, runtime/git_run.py), which must know what is older than
    the step. A session and its sub-sessions share one: they drive the same step."""

    def __init__(self) -> None:
        self.began = time.monotonic()
        self._before: list[Callable[[float], object]] = []
        self._readied: float | None = None
        self._lock = threading.Lock()  # sub-sessions may run on threads of their own

    def begin(self, at: float | None = None) -> None:
        """A step begins (`at`: when its lease was asked for, if earlier than now)."""
        self.began = time.monotonic() if at is None else at

    def before_live(self, work: Callable[[float], object]) -> None:
        """Have `work(began)` done once a step, before its first live work."""
        self._before.append(work)

    def ready(self) -> None:
        """Called before each live tool run and activity: the step's work, the first time."""
        with self._lock:
            if self._readied == self.began:
                return
            for work in self._before:
                work(self.began)
            self._readied = self.began
