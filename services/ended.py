"""What follows a run's end, wherever it ended: its last step (services/steps.py) or a person
discarding the dead letter that stopped it (services/letters.py)."""

from __future__ import annotations

from journal_store.snapshots import DatabaseSnapshots
from runtime import status, streams
from services import traces


def run_ended(run_id: str, outcome: str) -> None:
    """Its trace to the collector, if one is set; and, once it has a verdict, its agent loop's
    snapshot deleted: nothing will resume it."""
    traces.run_ended(run_id)
    if outcome in status.VERDICTS:
        DatabaseSnapshots().discard(streams.journal(run_id))
