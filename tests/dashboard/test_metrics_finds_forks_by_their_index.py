"""/metrics finds the chosen forks through the index of parent_id, whatever the filter: with 3,000
runs it does as much as with 200 to find the same few forks.

A filter's sums add back the past a chosen fork copied from a run left out (services/
shared_past.py), so every request asks which of the chosen runs are forks. Asked of the chosen
runs, SQLite took the filter's own index (the team's, the start day's) and read every run it
chose to find the forks among them: 161 SQLite steps to 2,306 for a team's, 209 to 3,057 for a
week's, from 200 runs to 3,000. The forks are now read from the index of parent_id and each
looked up by its key among the chosen runs. The whole page hides the difference once the rollup
is read (tests/dashboard/test_store_pages_cost_the_same_at_any_size.py: 1.26x), so the look-up
is counted alone (tests/work.py).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from bench import store_rows
from journal_store.models import RunSummary
from services import shared_past
from services.metrics import MetricsFilter
from tests.work import work_of

pytestmark = pytest.mark.django_db
SIZES = (200, 3_000)
BOUND = 1.5
FORKS = 5
WEEK = (store_rows.NOW - timedelta(days=7)).date()
FILTERS = {
    "team": MetricsFilter(team="support-desk"),
    "the last week": MetricsFilter(since=WEEK),
    "scenario": MetricsFilter(scenario="first-flight"),
    "every run": MetricsFilter(),
}


def store(size: int) -> set[str]:
    """`size` runs, FORKS of them forks of the support desk made in the last week, each of a
    run started before it (so no filter here keeps a fork in its parent's groups); their ids."""
    return store_rows.with_forks(size, FORKS)


def test_the_chosen_forks_are_found_with_as_much_work_at_3000_runs_as_at_200():
    work: dict[int, dict[str, tuple[int, int]]] = {}
    for size in SIZES:
        forks = store(size)
        work[size] = {}
        for name, chosen in FILTERS.items():
            found = shared_past.family(chosen.runs())
            # The same forks as before, chosen, with the parent above each (left out here, or
            # of another day): what the sums add back is unchanged.
            assert {r.run_id for r in found.runs.values() if r.chosen} >= forks, name
            assert {run.run_id for run, _ in found.above} == forks, name
            work[size][name] = work_of(lambda chosen=chosen: shared_past.family(chosen.runs()))
        RunSummary.objects.all().delete()
    short, long = (work[size] for size in SIZES)
    grown = {
        name: f"{short[name]} -> {long[name]}"
        for name in FILTERS
        if long[name][0] > BOUND * short[name][0] or long[name][1] > BOUND * short[name][1]
    }
    assert not grown, grown
