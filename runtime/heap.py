"""Settle a long-lived process's heap once it has imported what it runs.

CPython's collector looks for reference cycles. Its oldest generation is searched whole, every
object the process holds included: Django's and the teams' modules, classes and settings
(about 200,000 objects in a worker) and, in a step that replays a run, every event of it. On a
20,000-event run a cold step spent 30-37% of its time in the collector (bench/collector.py,
docs/benchmarks.md).

`settle` collects once, then moves everything the process holds by then into the collector's
permanent generation (`gc.freeze`): those objects live as long as the process and are never
searched again. What the process makes afterwards is collected as before, as often as before:
a cycle holding a database connection or a file is still freed as soon as CPython would have
freed it. (A young generation larger than CPython's 700 took a few percent more off a replay,
but left such cycles alive for longer; not worth it.)

Workers call it as each process starts (config/celery.py), and the command line before it
runs a command (`replay` of a 20,000-event journal: 1.27 s before, 1.05 s after). The web server
does not: its pages at 20,000 events took 0.95-1.02 of their time with it, nothing to keep.
"""

from __future__ import annotations

import gc


def settle() -> None:
    gc.collect()  # what start-up left behind is freed, not frozen
    gc.freeze()
