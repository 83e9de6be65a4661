"""The runs list's days (`since`, `until`): whole days in UTC, both ends included, asked as
bounds of the start itself so that the start's index seeks to them (dashboard/listing.py),
where `started_at__date` wrapped the column in a function and read every run started after
the range. The same runs as before at each edge of a day, and none without a start."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from dashboard import listing
from journal_store.models import RunSummary

pytestmark = pytest.mark.django_db

STARTS = {
    "r-before": datetime(2026, 12, 4, 23, 59, 59, 999999, tzinfo=UTC),
    "r-first": datetime(2026, 12, 5, 0, 0, tzinfo=UTC),
    "r-last": datetime(2026, 12, 6, 23, 59, 59, 999999, tzinfo=UTC),
    "r-after": datetime(2026, 12, 7, 0, 0, tzinfo=UTC),
    "r-none": None,
}


@pytest.fixture(autouse=True)
def runs():
    RunSummary.objects.bulk_create(
        RunSummary(run_id=run_id, status="finished", started_at=at, started_on=at and at.date())
        for run_id, at in STARTS.items()
    )


def listed(**params: str) -> set[str]:
    return set(listing.selected(listing.RunFilter.of(params)).values_list("run_id", flat=True))


def test_both_days_are_whole_and_included():
    assert listed(since="2026-12-05", until="2026-12-06") == {"r-first", "r-last"}
    assert listed(since="2026-12-05") == {"r-first", "r-last", "r-after"}
    assert listed(until="2026-12-06") == {"r-before", "r-first", "r-last"}
    # As the days of the starts themselves read them (what __date asked).
    for since, until in ((date(2026, 12, 4), date(2026, 12, 4)), (date(2026, 12, 7), None)):
        expected = {
            r
            for r, at in STARTS.items()
            if at and at.date() >= since and (until is None or at.date() <= until)
        }
        asked = {"since": since.isoformat(), **({"until": until.isoformat()} if until else {})}
        assert listed(**asked) == expected


def test_the_last_and_first_days_there_are_take_every_run_with_a_start():
    # The day after 9999-12-31 is none: its bound was an OverflowError, a 500.
    everyone = {r for r, at in STARTS.items() if at}
    assert listed(until=date.max.isoformat()) == everyone
    assert listed(since=date.min.isoformat()) == everyone
    assert listed(since="2026-12-05", until=date.max.isoformat()) == {
        "r-first",
        "r-last",
        "r-after",
    }
