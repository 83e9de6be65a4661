"""A run whose journal recorded no times (the reference runtime's flat journals: t=0) has no
start. The list's orders by time put it last on every database: PostgreSQL puts NULLs first
in a descending order, so on it such a run headed "newest first" (the list's default) and
"longest" for ever, and SQLite put it first under "oldest"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard import listing
from journal_store.models import RunSummary

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("sort", ["started", "oldest", "duration"])
def test_a_run_with_no_start_time_comes_last(sort):
    def run(run_id: str, started: datetime | None) -> None:
        RunSummary.objects.create(
            run_id=run_id,
            status="done",
            stage="complete",
            started_at=started,
            finished_at=started,
            duration=timedelta(0) if started else None,  # as the projector keeps it
        )

    run("r-reference", None)
    run("r-june", datetime(2026, 6, 1, tzinfo=UTC))
    run("r-july", datetime(2026, 7, 1, tzinfo=UTC))

    listed = [r.run_id for r in listing.runs(listing.RunFilter(sort=sort))]

    assert listed[-1] == "r-reference", listed
