"""The time a run stood still before each fork, reckoned over the events a session holds: the
same whether the session holds every event or skipped most of them for a snapshot (None in
their places), where it stepped over every place in Python."""

from __future__ import annotations

import random

from runtime.events import BudgetDebited, RunForked
from runtime.fork_gaps import fork_gaps


def every_place(events, since=0):
    """The reckoning as it was written first: every place looked at."""
    gaps = 0.0
    for index in range(max(since, 1), len(events)):
        event, before = events[index], events[index - 1]
        if isinstance(event, RunForked) and before is not None and before.t and event.t:
            gaps += max(0.0, event.t - before.t)
    return gaps


def test_the_gaps_are_what_looking_at_every_place_gives():
    rng = random.Random(7)
    for _ in range(200):
        events = []
        t = 1000.0
        for _ in range(rng.randrange(0, 60)):
            t += rng.random() * 10
            kind = rng.random()
            if kind < 0.1:
                events.append(
                    RunForked(run_id="r-f", parent="r-p", at=3, number=3, by="p", t=t + 3600)
                )
            elif kind < 0.5:
                events.append(None)
            else:
                events.append(BudgetDebited(run_id="r-f", agent="coder", amount=1, t=t))
        since = rng.randrange(0, 5)
        assert fork_gaps(events, since) == every_place(events, since)


def test_a_fork_after_a_skipped_event_counts_no_gap():
    fork = RunForked(run_id="r-f", parent="r-p", at=3, number=3, by="p", t=5000.0)
    held = BudgetDebited(run_id="r-f", agent="coder", amount=1, t=1000.0)
    assert fork_gaps([held, fork]) == 4000.0
    assert fork_gaps([held, None, fork]) == 0.0
