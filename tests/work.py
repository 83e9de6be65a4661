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
    and of Python (the functions it calls, ours and the interpreter's)."""
    steps, calls = [0], [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    def called(frame: object, event: str, arg: object) -> None:
        if event in ("call", "c_call"):
            calls[0] += 1

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
