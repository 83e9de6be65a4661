"""How long to wait before trying a failed call again: exponential backoff with jitter.

Retrying at once hammers whatever just failed, and a fleet of agents retrying in step turns
one hiccup into a stampede. So the n-th retry waits about `base * factor**(n-1)` seconds (at
most `cap`), of which a random half is jitter ("equal jitter": never less than half the
step, so a retry never comes at once).

The draw is random, so a run records it (ToolRetryScheduled) and a replay reads it back
instead of drawing again; nothing here knows about journals (`runtime.loop` does that).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Backoff:
    """The waits between attempts; `rng` and `sleep` are given so tests can fix both."""

    base: float = 0.2
    factor: float = 2.0
    cap: float = 10.0
    rng: random.Random = field(default_factory=random.Random, compare=False)
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def __post_init__(self) -> None:
        if self.base < 0 or self.factor < 1 or self.cap < self.base:
            raise ValueError("need base >= 0, factor >= 1 and cap >= base")

    def delay(self, retry: int) -> float:
        """The wait before retry number `retry` (1 for the first retry), jitter included."""
        step = min(self.cap, self.base * self.factor ** (retry - 1))
        return round(step / 2 + self.rng.uniform(0, step / 2), 3)


def doubling(attempt: int, longest: float, rng: random.Random | None = None) -> float:
    """The wait before a failed step of a run (services/steps.py), or a specialist whose model
    endpoint was down (runtime/fanout/restarts.py), comes again: doubling from 2 s, at most
    `longest`, of which up to half is jitter, so that what failed together does not come back
    together. A seeded `rng` gives the same wait each time it is asked (a specialist's next
    start is decided afresh at every look at it)."""
    jitter = rng.uniform(0.5, 1.0) if rng is not None else random.uniform(0.5, 1.0)
    return min(longest, 2.0**attempt) * jitter
