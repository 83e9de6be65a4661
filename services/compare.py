"""Comparing two stored runs (runtime/compare.py does the work; this reads the runs)."""

from __future__ import annotations

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import compare, flight
from services.runs import RunNotFound

# Two runs of this many events each are read whole to compare them; past it the page would
# take seconds, and a person comparing such runs should use `python -m runtime diff`.
EVENTS_MAX = 50_000


class TooLong(Exception):
    """A run is too long to compare on a page."""


def runs(a: str, b: str) -> compare.Comparison:
    """Compare runs `a` and `b`; RunNotFound names the first unknown id."""
    journal = DjangoJournal()
    sides = []
    for run_id in (a, b):
        summary = RunSummary.objects.filter(run_id=run_id).only("run_id", "event_count").first()
        if summary is None:
            raise RunNotFound(run_id)
        if summary.event_count > EVENTS_MAX:
            raise TooLong(
                f"run {run_id} has {summary.event_count:,} events; compare runs of up to "
                f"{EVENTS_MAX:,} here, or export both and use `python -m runtime diff`"
            )
        sides.append(flight.run_records(journal, run_id))
    return compare.compare(sides[0], sides[1], a, b)
