"""The time a run stood still before each fork made from it.

A fork's copied events keep its parent's times, so between the parent's event it was made
after and its RunForked lies however long the parent ran on, or sat, before a person forked
it. A clock that counts the run's own time (its wall-clock ceiling, a specialist's deadline)
leaves those gaps out; a reply's deadline does the same in runtime/coordination/deadlines.py,
stepped with the loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from runtime.events import Event, RunForked


def fork_gaps(events: Sequence[Event | None], since: int = 0) -> float:
    """Seconds between each RunForked at index `since` or later and the event before it."""
    gaps = 0.0
    for index in range(max(since, 1), len(events)):
        event, before = events[index], events[index - 1]
        if isinstance(event, RunForked) and before is not None and before.t and event.t:
            gaps += max(0.0, event.t - before.t)
    return gaps
