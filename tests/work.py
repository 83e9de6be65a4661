"""The work a read asks of SQLite and of Python, counted rather than timed: what the suite's
flat-costs guards compare at two sizes (tests/dashboard/test_costs_stay_flat_as_a_run_grows.py,
a run's; test_store_pages_cost_the_same_at_any_size.py, the store's). No load on the machine
moves either count, where a time would."""

from __future__ import annotations

import sys
from collections.abc import Callable

from django.db import connection


def work_of(work: Callable[[], object]) -> tuple[int, int]:
    """What `work` asks of SQLite (its virtual machine's steps, on this thread's connection)
    and of Python (the functions it calls, ours and the interpreter's): the lesser of two
    calls counted, each. A write now and then sets off work that is no one call's: FTS5
    merges the segments of the search page's index (an event's text) as they pile up, in the
    statement of the write that tips them, and a person's stop and go-on of a run counted
    2,627 steps at 200 events and 4,714 at 3,000 once on CI, where it is 2,640 at both."""
    first = counted(work)
    again = counted(work, warm=False)
    return min(first[0], again[0]), min(first[1], again[1])


def counted(work: Callable[[], object], warm: bool = True) -> tuple[int, int]:
    """One call of `work` counted, after one not counted (`warm`)."""
    steps, calls = [0], [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    def called(frame: object, event: str, arg: object) -> None:
        if event in ("call", "c_call"):
            calls[0] += 1

    if warm:
        work()  # as a person's second look finds it: Django's and SQLite's caches warm
    connection.ensure_connection()
    connection.connection.set_progress_handler(tick, 1)
    sys.setprofile(called)
    try:
        work()
    finally:
        sys.setprofile(None)
        connection.connection.set_progress_handler(None, 1)
    return steps[0], calls[0]
