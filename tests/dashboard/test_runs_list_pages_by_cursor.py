"""The runs list goes on after a cursor, the place of the last run a page showed, where it went
to an offset: a late page cost a read of every run before it, and a run started meanwhile
pushed every other one place down, so the next page showed one of the last page's runs again
(dashboard/run_pages.py). Paged through, the list gives every run once, in its order, on both
databases, whatever ties, filters and runs arriving; a cursor it cannot take is refused by
name."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connections, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from dashboard import listing, run_pages
from journal_store.models import RunSummary, RunTag
from tests.conftest import on_every_backend

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
PAGED = [sort for sort in listing.SORTS]


def run(alias: str = "default", **fields) -> RunSummary:
    fields.setdefault("status", "done")
    fields.setdefault("stage", "complete")
    fields.setdefault("finished_at", fields.get("started_at"))
    started, finished = fields.get("started_at"), fields["finished_at"]
    # As the projector keeps it (run_columns.stopped_after): none while running.
    fields.setdefault("duration", finished - started if started and finished else None)
    return RunSummary.objects.using(alias).create(**fields)


def seeded(alias: str = "default") -> None:
    """24 runs: starts tied in threes and three runs without one, tokens and costs tied, some
    costs unknown, durations tied, and two runs still running (no duration yet)."""
    for n in range(24):
        started = None if n % 8 == 7 else T0 + timedelta(minutes=n // 3)
        run(
            alias,
            run_id=f"r-{n:02d}",
            started_at=started,
            finished_at=started + timedelta(seconds=n * 37 % 11)
            if started and n not in (3, 10)
            else None,
            tokens=n % 6 * 100,
            cost=None if n % 5 == 4 else n % 4 * 0.25,
            findings_count=n % 3,
            status=("done", "failed", "interrupted")[n % 4 % 3],
            team=("solo", "repo-fix")[n % 2],
        )


def in_order(alias: str, sort: str) -> list[str]:
    """The whole list in the sort's order, as listing.runs reads it."""
    runs = RunSummary.objects.using(alias).all()
    return list(runs.order_by(*listing.SORTS[sort].order()).values_list("run_id", flat=True))


def paged(alias: str, sort: str, limit: int) -> list[list[str]]:
    pages, after = [], None
    while len(pages) < 100:  # a cursor that goes back would page for ever: fail instead
        runs = RunSummary.objects.using(alias).all()
        page = run_pages.page(runs, sort, after, limit)
        pages.append([r.run_id for r in page.runs])
        if page.next is None:
            return pages
        after = run_pages.Cursor.read(page.next, sort)
    raise AssertionError(f"more than 100 pages: {pages[:5]}")


@on_every_backend()
@pytest.mark.parametrize("sort", PAGED)
@pytest.mark.parametrize("limit", [1, 4, 7, 24, 100])
def test_paged_through_the_list_gives_every_run_once_in_its_order(alias, sort, limit):
    seeded(alias)
    pages = paged(alias, sort, limit)
    shown = [run_id for page in pages for run_id in page]
    assert shown == in_order(alias, sort)
    assert sorted(shown) == [f"r-{n:02d}" for n in range(24)]  # each once
    assert all(len(page) == limit for page in pages[:-1]) and 0 < len(pages[-1]) <= limit


@on_every_backend()
def test_ties_go_by_run_id_the_sorts_way_and_runs_without_a_start_last(alias):
    seeded(alias)
    starts = {r.run_id: r.started_at for r in RunSummary.objects.using(alias).all()}
    timed = [run_id for run_id, at in starts.items() if at is not None]
    untimed = sorted(run_id for run_id, at in starts.items() if at is None)
    newest = sorted(timed, key=lambda r: (starts[r], r), reverse=True) + untimed[::-1]
    oldest = sorted(timed, key=lambda r: (starts[r], r)) + untimed
    for sort, expected in (("started", newest), ("oldest", oldest)):
        assert [r for page in paged(alias, sort, 2) for r in page] == expected, sort


@on_every_backend()
def test_by_duration_longest_first_and_runs_still_running_last_with_those_without_a_start(alias):
    """A duration is kept once a run's clock stops (run_columns.stopped_after): the runs still
    running (r-03, r-10) have none yet and come last with the runs without a start, by run
    id, as the list said before only of the runs without a start."""
    seeded(alias)
    rows = RunSummary.objects.using(alias).all()
    took = {r.run_id: r.duration for r in rows if r.duration is not None}
    blank = sorted((r.run_id for r in rows if r.duration is None), reverse=True)
    assert {"r-03", "r-10", "r-07"} <= set(blank)
    longest = sorted(took, key=lambda r: (took[r], r), reverse=True)
    assert [r for page in paged(alias, "duration", 3) for r in page] == longest + blank


@on_every_backend()
def test_a_page_boundary_inside_a_tie_splits_it_without_losing_a_run(alias):
    """Every run started in the same instant: the run id alone orders them, page after page."""
    for n in range(10):
        run(alias, run_id=f"r-tie{n}", started_at=T0, tokens=5)
    for sort in ("started", "oldest", "tokens"):
        pages = paged(alias, sort, 3)
        assert [len(p) for p in pages] == [3, 3, 3, 1]
        shown = [r for page in pages for r in page]
        ids = [f"r-tie{n}" for n in range(10)]
        assert shown == (ids if sort == "oldest" else ids[::-1]), sort


def listed(api: Client, limit: int, **params) -> list[list[str]]:
    """Every page of GET /api/runs, following `next`."""
    pages, after = [], ""
    while len(pages) < 100:  # a cursor that goes back would page for ever: fail instead
        answer = api.get("/api/runs", {**params, "limit": limit, "after": after})
        assert answer.status_code == 200, answer.content
        body = answer.json()
        pages.append([r["run_id"] for r in body["items"]])
        if body["next"] is None:
            return pages
        after = body["next"]
    raise AssertionError(f"more than 100 pages: {pages[:5]}")


@pytest.mark.django_db
def test_runs_started_while_someone_pages_move_none_of_the_others(api):
    """Under an offset, a run started after the first page pushed the list down a place: the
    second page began with the first page's last run again."""
    for n in range(12):
        run(run_id=f"r-old{n:02d}", started_at=T0 + timedelta(minutes=n))
    first = api.get("/api/runs", {"limit": 5}).json()
    assert [r["run_id"] for r in first["items"]] == [f"r-old{n:02d}" for n in (11, 10, 9, 8, 7)]
    run(run_id="r-newest", started_at=T0 + timedelta(hours=1))  # started since: before the cursor
    # An imported journal's run, started long ago, arrives in the part not read yet.
    run(run_id="r-imported", started_at=T0 + timedelta(minutes=2, seconds=30))
    rest, after = [], first["next"]
    while after and len(rest) < 100:
        page = api.get("/api/runs", {"limit": 5, "after": after}).json()
        rest += [r["run_id"] for r in page["items"]]
        after = page["next"]
    before = [f"r-old{n:02d}" for n in (6, 5, 4, 3)]
    assert rest == [*before, "r-imported", "r-old02", "r-old01", "r-old00"]
    assert "r-newest" not in rest  # the list's poll for newer runs announces it


@pytest.mark.django_db
def test_filters_hold_for_every_page(api):
    seeded()
    RunTag.objects.bulk_create(RunTag(run_id=f"r-{n:02d}", tag="nightly") for n in range(0, 24, 3))
    for params in (
        {"status": "done"},
        {"team": "solo", "sort": "tokens"},
        {"q": "r-1"},
        {"tag": "nightly", "sort": "oldest"},
        {"status": "failed", "team": "repo-fix", "sort": "cost"},
        {"since": "2026-06-01", "until": "2026-06-01", "sort": "duration"},
    ):
        chosen = listing.RunFilter.of(params)
        expected = [r.run_id for r in listing.runs(chosen)]
        assert 2 < len(expected) < 24, params  # the filter selects some runs, not all
        pages = listed(api, 2, **params)
        assert [r for page in pages for r in page] == expected, params


@pytest.mark.django_db
def test_the_forks_of_a_run_are_paged_too(api):
    run(run_id="r-parent", started_at=T0)
    for n in range(5):
        run(run_id=f"r-fork{n}", started_at=T0 + timedelta(minutes=n), parent_id="r-parent")
    pages = listed(api, 2, parent="r-parent")
    assert pages == [["r-fork4", "r-fork3"], ["r-fork2", "r-fork1"], ["r-fork0"]]


def cursor_of(*packed) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(packed)).encode()).decode().rstrip("=")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("after", "said"),
    [
        ("not a cursor!", "'not a cursor!' is no place in the runs list"),
        ("A" * 401, "is no place in the runs list"),
        (cursor_of({"a": 1}), "is no place in the runs list"),
        (cursor_of("started", "2026-06-01T09:00:00", "r-01"), "is no place"),  # no offset
        (cursor_of("started", 5, "r-01"), "is no place"),
        (cursor_of("tokens", None, "r-01"), "is no place"),  # every run has tokens
        (cursor_of("tokens", True, "r-01"), "is no place"),
        (cursor_of("cost", "NaN", "r-01"), "is no place"),
        (cursor_of("duration", 10**30, "r-01"), "is no place"),
        (cursor_of("nonsense", 1, "r-01"), "is no place"),
        (cursor_of("started", None, ""), "is no place"),
        (cursor_of("tokens", 100, "r-01"), "a place in the list sorted by tokens, not by started"),
    ],
)
def test_a_cursor_the_list_cannot_take_is_refused_naming_it(api, as_owner, after, said):
    seeded()
    refused = api.get("/api/runs", {"after": after})
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert problem["loc"] == ["query", "after"] and said in problem["msg"], problem
    page = as_owner.get("/", {"after": after})
    assert page.status_code == 400 and "after" in page.content.decode()
    assert "r-00" not in page.content.decode()  # no runs listed as if from the start


@pytest.mark.django_db
def test_a_cursor_of_the_page_before_is_taken_with_its_sort_only(api):
    seeded()
    by_tokens = api.get("/api/runs", {"sort": "tokens", "limit": 3}).json()["next"]
    assert api.get("/api/runs", {"sort": "tokens", "after": by_tokens}).status_code == 200
    # A bad sort is named alone: no cursor is read against an order nobody asked for.
    [problem] = api.get("/api/runs", {"sort": "size", "after": by_tokens}).json()["detail"]
    assert problem["loc"] == ["query", "sort"]


@pytest.mark.django_db
def test_an_offset_past_the_first_page_is_refused_saying_how_to_page(api):
    seeded()
    assert len(api.get("/api/runs", {"offset": 0, "limit": 5}).json()["items"]) == 5
    refused = api.get("/api/runs", {"offset": 5, "limit": 5})
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert problem["loc"] == ["query", "offset"] and "paged by `after`" in problem["msg"]


def plans(alias: str, sort: str) -> list[str]:
    """The query plans of two late pages' statements (one that ends among the runs with a
    value, one among those without), where the database may use any index it can rather than
    the one it would choose for so few rows: with scans of the whole table and sorting made as
    dear as it can make them (PostgreSQL), or as it plans for an SQLite never ANALYZEd (Django
    never runs it)."""
    key = listing.SORTS[sort]
    runs = RunSummary.objects.using(alias).all()
    rows = list(runs.order_by(*key.order()))
    valued = [r for r in rows if getattr(r, key.column) is not None]
    connection = connections[alias]
    with CaptureQueriesContext(connection) as asked:
        for row in (valued[5], valued[-1]):
            after = run_pages.Cursor(sort, getattr(row, key.column), row.run_id)
            run_pages.page(runs, sort, after, 5)
    found = []
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
        for query in asked.captured_queries:
            explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
            cursor.execute(explain + query["sql"])
            found.append("\n".join(str(row[-1]) for row in cursor.fetchall()))
    assert len(found) == 2 + key.nullable  # the second page read the runs without one too
    return found


@on_every_backend()
@pytest.mark.parametrize("sort", PAGED)
def test_a_late_page_is_read_from_an_index_in_its_order(alias, sort):
    """No sort of every run the filter selects: the index of the column and the run id gives
    the page's rows in order (migrations 0035, 0038: the duration too, now kept, where it was
    worked out from the clock and every run sorted)."""
    seeded(alias)
    for plan in plans(alias, sort):
        assert "TEMP B-TREE" not in plan and " Sort " not in f" {plan} ", plan
        assert "run_" in plan and "_id" in plan, plan  # run_started_id, run_tokens_id, ...
