"""A filter no index serves in the list's order (a status by tokens, a tag in any order) is
checked on a window of the order's index before the runs beyond it are read by the filter's
own (dashboard/run_pages.py walked, listing.walked): the pages are the very pages the
filter's index gives, whether the window fills a page or not, and the walk reads the order's
index, not a sort of every run the filter selects."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connections
from django.db.models import Max
from django.test.utils import CaptureQueriesContext

from dashboard import listing, run_pages
from journal_store.models import Finding, RunSummary, RunTag

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
ALIAS = "default"
RUNS = 120
# Common and rare, alone and together; a tag on a third of the runs and one on three of them.
FILTERS = {
    "failed": {"status": "failed"},
    "running (rare)": {"status": "running"},
    "a team": {"team": "support-desk"},
    "a status of a team": {"status": "failed", "team": "support-desk"},
    "tagged": {"tag": "nightly"},
    "tagged rarely": {"tag": "audit"},
    "a finding": {"finding": "loop"},
    "failed since a day": {"status": "failed", "since": (T0 + timedelta(days=1)).date()},
    "tagged until a day": {"tag": "nightly", "until": (T0 + timedelta(days=1)).date()},
}


def seeded(alias: str) -> None:
    """RUNS runs over three days: ties in every column (starts in pairs, tokens and costs on a
    few values), some without a start, a cost or a duration, a few running."""
    rng = random.Random(7)
    runs = []
    for n in range(RUNS):
        started = None if n % 29 == 0 else T0 + timedelta(minutes=n // 2 * 37)
        running = n % 37 == 5
        finished = None if running or started is None else started + timedelta(seconds=n % 7)
        runs.append(
            RunSummary(
                run_id=f"r-{rng.getrandbits(40):010x}",
                team=rng.choice(["repo-fix", "repo-fix", "support-desk"]),
                status="running" if running else rng.choice(["done", "done", "failed"]),
                stage="fix",
                started_at=started,
                finished_at=finished,
                duration=finished - started if finished and started else None,
                tokens=rng.choice([0, 100, 100, 2_000, 50_000]),
                cost=None if n % 11 == 0 else rng.choice([0.0, 0.5, 1.25]),
                findings_count=n % 3,
            )
        )
    RunSummary.objects.using(alias).bulk_create(runs)
    tags = [RunTag(run_id=r.run_id, tag="nightly") for r in runs[::3]]
    tags += [RunTag(run_id=r.run_id, tag="audit") for r in runs[90:93]]
    RunTag.objects.using(alias).bulk_create(tags)
    Finding.objects.using(alias).bulk_create(
        Finding(run_id=r.run_id, kind="loop", summary="", positions=[], first_position=1)
        for r in runs[::5]
    )


def paged(alias: str, chosen: listing.RunFilter, limit: int) -> list[list[str]]:
    """Every page of the filter's runs, walked where listing.walked says."""
    pages, after = [], None
    while len(pages) < RUNS + 2:
        runs = listing.selected(chosen).using(alias)
        walk = listing.walked(chosen)
        found = run_pages.page(
            runs, chosen.sort, after, limit, walk.using(alias) if walk is not None else None
        )
        pages.append([r.run_id for r in found.runs])
        if found.next is None:
            return pages
        after = run_pages.Cursor.read(found.next, chosen.sort)
    raise AssertionError("the pages went on for ever")


# (the first window, the most in all), in pages' worth: one window, then the filter's index;
# a first window and the ones the filter needs after it; the list's own.
WINDOWS = [(1, 1), (1, 4), (run_pages.FIRST_WINDOW, run_pages.WINDOW)]


@pytest.mark.django_db
@pytest.mark.parametrize(("first", "most"), WINDOWS)
@pytest.mark.parametrize("sort", list(listing.SORTS))
def test_walked_pages_are_the_pages_of_the_filters_index(sort, first, most, monkeypatch):
    """Through every page of each filter, in every order, pages of 3 and of 50: windows of a
    page's worth whose ends fall inside ties, the page filled in the first only where the
    filter is common, in later ones, or by the filter's index after them; and the list's own
    windows (the whole store in one for pages of 50). SQLite's alone: PostgreSQL is not walked
    (listing.walked), its planner weighs the two."""
    monkeypatch.setattr(run_pages, "FIRST_WINDOW", first)
    monkeypatch.setattr(run_pages, "WINDOW", most)
    seeded(ALIAS)
    for name, asked in FILTERS.items():
        chosen = listing.RunFilter(sort=sort, **asked)
        whole = listing.selected(chosen).using(ALIAS).order_by(*listing.SORTS[sort].order())
        every = list(whole.values_list("run_id", flat=True))
        for limit in (3, 50):
            expected = [every[n : n + limit] for n in range(0, len(every), limit)] or [[]]
            assert paged(ALIAS, chosen, limit) == expected, (name, limit)


@pytest.mark.django_db
def test_a_walk_is_asked_only_where_no_index_of_the_filters_serves_the_order():
    assert listing.walked(listing.RunFilter()) is None
    assert listing.walked(listing.RunFilter(status="failed")) is None  # migration 0053
    assert listing.walked(listing.RunFilter(team="solo", sort="oldest")) is None
    assert listing.walked(listing.RunFilter(status="failed", sort="status")) is None
    assert listing.walked(listing.RunFilter(team="solo", sort="status")) is not None
    assert listing.walked(listing.RunFilter(status="failed", sort="tokens")) is not None
    assert listing.walked(listing.RunFilter(tag="nightly")) is not None
    assert listing.walked(listing.RunFilter(status="failed", team="solo")) is not None


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["failed", "tagged", "a finding", "a status of a team"])
def test_sqlite_walks_the_orders_index_and_sorts_nothing(name):
    """The window's walk reads the order's index (no TEMP B-TREE of the runs the filter
    selects, as the filter's index and a sort gave) and its end is read from that index
    alone."""
    seeded("default")
    chosen = listing.RunFilter(sort="tokens", **FILTERS[name])
    walk = listing.walked(chosen)
    assert walk is not None
    with CaptureQueriesContext(connections["default"]) as queries:
        run_pages.page(listing.selected(chosen), "tokens", None, 5, walk)
    edge, near = (q["sql"] for q in queries.captured_queries[:2])
    with connections["default"].cursor() as cursor:
        for sql, index in ((edge, "COVERING INDEX run_tokens_id"), (near, "INDEX run_tokens_id")):
            plan = " ".join(row[3] for row in cursor.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert index in plan and "TEMP B-TREE" not in plan, plan


@pytest.mark.django_db
@pytest.mark.parametrize("window", [1, run_pages.WINDOW])
@pytest.mark.parametrize("name", [*FILTERS, "none"])
def test_the_newest_start_the_poll_counts_from_is_the_latest_the_filter_selects(
    name, window, monkeypatch
):
    """In a window of two runs (the walk's end found, then the filter's index beyond) and in
    WINDOW's."""
    monkeypatch.setattr(run_pages, "WINDOW", window)
    seeded("default")
    chosen = listing.RunFilter(sort="tokens", **FILTERS.get(name, {}))
    selected = listing.selected(chosen)
    assert (
        run_pages.newest_start(chosen) == selected.aggregate(Max("started_at"))["started_at__max"]
    ), name


@pytest.mark.django_db
@pytest.mark.parametrize("window", [4, run_pages.NEWEST_WINDOW])
def test_the_poll_counts_the_runs_started_since_its_mark_that_the_filter_selects(
    window, monkeypatch
):
    """Walked where at most `window` runs started since the mark, by the filter's index where
    more did: the count is the filter's either way, from every mark."""
    monkeypatch.setattr(run_pages, "NEWEST_WINDOW", window)
    seeded("default")
    starts = sorted(
        set(RunSummary.objects.exclude(started_at=None).values_list("started_at", flat=True))
    )
    for name, asked in [*FILTERS.items(), ("none", {})]:
        chosen = listing.RunFilter(sort="tokens", **asked)
        selected = listing.selected(chosen).exclude(started_at=None)
        assert run_pages.started_since(chosen, None) == selected.count(), name
        for mark in (
            starts[0] - timedelta(days=1),
            starts[len(starts) // 2],
            starts[-3],
            starts[-1],
        ):
            expected = selected.filter(started_at__gt=mark).count()
            assert run_pages.started_since(chosen, mark) == expected, (name, mark)
