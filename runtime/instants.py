"""Times read from events, shown without trusting them.

Appends and imports keep an event's times within what a clock shows (events/times.py). An event
stored before they did, or a journal file edited by hand and read by the command line, may
still hold a lease that "expires" at -1e18 or a stall "since" 1e300; time.gmtime and
datetime.fromtimestamp raise on those, and the fold that formats one raised in the catch-up
every page runs, stopping the whole store. So whatever shows an event's time asks here: a time
no clock shows is said as the number it is, or, where a datetime is needed, put at the nearest
end of the range a run's times lie in.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from runtime.events import LATEST_T


def shows(t: float) -> bool:
    """Whether the time is one a run's clock could have read (1970 to 3000-01-01)."""
    try:
        t = float(t)  # (a payload's whole number may be past what a float holds)
    except (OverflowError, TypeError, ValueError):
        return False
    return 0 <= t < LATEST_T  # NaN compares False; an infinity is out of the range


def clock(t: float) -> str:
    """The time of day, "14:03:07 UTC"; a time no clock shows, as its number."""
    if not shows(t):
        return f"t={t!r} (not a time)"
    return time.strftime("%H:%M:%S UTC", time.gmtime(t))


def moment(t: float) -> datetime:
    """The time as an aware datetime, within 1970 to 3000-01-01 (NaN: 1970)."""
    if not shows(t):
        t = LATEST_T - 1 if t >= LATEST_T else 0.0  # (NaN compares False: the start)
    return datetime.fromtimestamp(float(t), UTC)
