"""Whether this worker's clock agrees with the database's, as leases assume.

A lease's expiry is a time written by its holder's clock and judged by the reader's (the
reconciler, the next taker): a worker whose clock runs ahead takes over leases that are still
live by their holder's, and one that runs behind sees a dead holder's lease live for longer.
Leases are renewed when a third of them has run, so a difference of two thirds of a lease
hands a live worker's run to another. NTP keeps clocks to milliseconds; this is the check
that it does, when a worker starts (config/celery.py), against PostgreSQL's clock. On
PostgreSQL every worker writes to one server, whose clock stands in for all of them; SQLite is
one machine, one clock.
"""

from __future__ import annotations

import time

from django.db import connections

# Above this fraction of the lease the worker says so at its start: far below the two thirds
# that lose a live holder its lease, so that a drifting clock is seen before it costs a run.
WARN_FRACTION = 0.1


def skew(using: str = "default") -> float | None:
    """The database's clock minus this machine's, in seconds (None where the database is not a
    server of its own: SQLite). Read between two readings of ours, and judged at their middle,
    so the round trip's time is not counted as skew."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        before = time.time()
        cursor.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())")
        theirs = float(cursor.fetchone()[0])
        after = time.time()
    return theirs - (before + after) / 2


def clock_problem(difference: float | None, lease_seconds: float) -> str | None:
    """What to tell the operator about a clock `difference` seconds off the database's, for
    leases of `lease_seconds`; None when it is well within them."""
    if difference is None or abs(difference) <= WARN_FRACTION * lease_seconds:
        return None
    way = "behind" if difference > 0 else "ahead of"
    return (
        f"this worker's clock is {abs(difference):.1f} s {way} the database's, and leases "
        f"last {lease_seconds:g} s (MINUTES_STEP_LEASE_SECONDS): past {2 * lease_seconds / 3:.0f}"
        " s of difference a live worker's run is handed to another, which runs its tool again; "
        "keep the workers' clocks by NTP (timedatectl set-ntp true, or chrony)"
    )
