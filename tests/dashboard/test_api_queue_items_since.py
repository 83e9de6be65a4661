"""GET /api/review/conflicts and /api/review/dead-letters say when each item was opened and
decided, and where in the journal (its `position`), and take `after`: a script polls for what
arrived as the queue's page does. A script saw neither time nor order. Newest first, they page
by `before`, the `next` of the page before, where they paged by an offset."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.db import connections, transaction
from django.test.utils import CaptureQueriesContext

from dashboard.queries import queue_rows
from journal_store import projection, queues
from journal_store.journal import DjangoJournal
from runtime.events import DeadLettered, TeamStarted
from services import letters
from tests.conftest import on_every_backend
from tests.dashboard.polls import park

pytestmark = pytest.mark.django_db


def lettered(run_id: str) -> None:
    started = TeamStarted(run_id=run_id, team="solo", scenario="", task="t")
    letter = DeadLettered(run_id=run_id, letter_id=f"{run_id}:1", reason="no reply")
    DjangoJournal().append(f"run-{run_id}", [started, letter], 0)
    projection.catch_up()


def test_the_items_say_when_and_where_they_were_opened_and_decided(api):
    lettered("r-0000000000a1")
    lettered("r-0000000000b2")
    items = api.get("/api/review/dead-letters").json()["items"]
    assert [i["letter_id"] for i in items] == ["r-0000000000b2:1", "r-0000000000a1:1"]
    newer, older = items
    assert newer["position"] > older["position"] > 0
    assert datetime.fromisoformat(newer["created_at"]) >= datetime.fromisoformat(
        older["created_at"]
    )
    assert newer["decided_at"] is None
    letters.decide_letter("r-0000000000a1:1", "discard", "rosa", "not needed")
    projection.catch_up()
    decided = api.get("/api/review/dead-letters?status=decided").json()["items"]
    assert [i["letter_id"] for i in decided] == ["r-0000000000a1:1"]
    assert datetime.fromisoformat(decided[0]["decided_at"]) >= datetime.fromisoformat(
        decided[0]["created_at"]
    )


def test_after_lists_only_what_was_opened_since(api):
    park("r-0000000000a1", "cf-one")
    projection.catch_up()
    seen = max(i["position"] for i in api.get("/api/review/conflicts").json()["items"])
    assert api.get(f"/api/review/conflicts?after={seen}").json()["items"] == []
    park("r-0000000000a1", "cf-two")
    projection.catch_up()
    arrived = api.get(f"/api/review/conflicts?after={seen}").json()["items"]
    assert [i["conflict_id"] for i in arrived] == ["cf-two"]
    assert arrived[0]["position"] > seen
    assert len(api.get("/api/review/conflicts?after=").json()["items"]) == 2  # blank: not asked


def test_a_poller_that_asks_after_the_highest_position_it_got_misses_nothing(api):
    """Newest first, `after` and `limit` gave the newest `limit` after a position: asking
    again after the highest of those skipped the ones below it for good."""
    for n in range(5):
        lettered(f"r-00000000000{n}")
    seen, got = 0, []
    for _ in range(4):
        page = api.get(f"/api/review/dead-letters?status=all&after={seen}&limit=2").json()
        got += [i["letter_id"] for i in page["items"]]
        seen = max([seen, *(i["position"] for i in page["items"])])
    assert got == [f"r-00000000000{n}:1" for n in range(5)]  # each once, oldest first
    lettered("r-000000000009")
    [arrived] = api.get(f"/api/review/dead-letters?after={seen}&limit=2").json()["items"]
    assert arrived["letter_id"] == "r-000000000009:1"


@pytest.mark.parametrize("after", ["-1", "x", "9" * 40])
def test_an_after_that_is_no_position_is_a_422_naming_it(api, after):
    refused = api.get(f"/api/review/dead-letters?after={after}")
    assert refused.status_code == 422
    problem = refused.json()["detail"][0]
    assert problem["loc"] == ["query", "after"] and "is not a position" in problem["msg"]


def paged(api, **params) -> list[list[str]]:
    """Every page of the dead letters, each after the `next` of the one before."""
    pages, more = [], {}
    while len(pages) < 50:  # a `next` that went back would page for ever: fail instead
        body = api.get("/api/review/dead-letters", {**params, **more}).json()
        pages.append([i["letter_id"] for i in body["items"]])
        if body["next"] is None:
            return pages
        more = {"after" if "after" in params else "before": body["next"]}
    raise AssertionError(f"more than 50 pages: {pages[:5]}")


def test_newest_first_a_page_at_a_time_each_letter_once_whatever_opens_meanwhile(api):
    """Under an offset, a letter opened after the first page pushed the others down a place:
    the second page began with the first page's last letter again."""
    for n in range(7):
        lettered(f"r-00000000000{n}")
    first = api.get("/api/review/dead-letters", {"limit": 3}).json()
    assert [i["letter_id"] for i in first["items"]] == [f"r-00000000000{n}:1" for n in (6, 5, 4)]
    lettered("r-000000000009")  # newer than every cursor: the queue's poll announces it
    rest = paged(api, limit=3, before=first["next"])
    assert rest == [[f"r-00000000000{n}:1" for n in (3, 2, 1)], ["r-000000000000:1"]]
    # Oldest first, `next` is the `after` of the page that follows.
    assert paged(api, limit=3, after=0) == [
        [f"r-00000000000{n}:1" for n in (0, 1, 2)],
        [f"r-00000000000{n}:1" for n in (3, 4, 5)],
        [f"r-00000000000{n}:1" for n in (6, 9)],
    ]


def test_the_filters_hold_for_every_page(api):
    for n in range(5):
        lettered(f"r-00000000000{n}")
    letters.decide_letter("r-000000000001:1", "discard", "reviewer", "seen")
    letters.decide_letter("r-000000000003:1", "retry", "reviewer", "again")
    projection.catch_up()
    assert paged(api, limit=1, status="decided") == [["r-000000000003:1"], ["r-000000000001:1"]]
    assert paged(api, limit=2) == [["r-000000000004:1", "r-000000000002:1"], ["r-000000000000:1"]]


@pytest.mark.parametrize(
    ("query", "field", "said"),
    [
        ("before=x", "before", "is not a position"),
        ("before=-3", "before", "is not a position"),
        ("before=5&after=2", "before", "newest first only"),
        ("offset=10", "offset", "paged by `before`"),
    ],
)
def test_a_page_the_queue_cannot_give_is_a_422_naming_why(api, query, field, said):
    refused = api.get(f"/api/review/dead-letters?{query}")
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert problem["loc"] == ["query", field] and said in problem["msg"], problem
    assert api.get("/api/review/dead-letters?offset=0&before=").status_code == 200


@on_every_backend()
@pytest.mark.parametrize("status", ["open", "all", "decided"])
def test_a_page_of_a_queue_is_read_from_an_index_in_its_order(alias, status):
    """No sort of every item of the status (migration 0035): the plan of a late page, where
    the database may use any index it can rather than scan so few rows (PostgreSQL: with
    scans of the whole table and sorting made as dear as it can make them)."""
    rows = queue_rows(queues.DEAD_LETTERS).using(alias).order_by("-position")
    rows = rows if status == "all" else rows.filter(status="open")
    rows = rows.exclude(status="open") if status == "decided" else rows
    connection = connections[alias]
    with CaptureQueriesContext(connection) as asked:
        list(rows.filter(position__lt=1_000)[:11])
    [query] = asked.captured_queries
    explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(explain + query["sql"])
        plan = "\n".join(str(row[-1]) for row in cursor.fetchall())
    assert "TEMP B-TREE" not in plan and " Sort " not in f" {plan} ", plan
    assert "deadletter_" in plan and "position" in plan, plan


@on_every_backend()
@pytest.mark.parametrize("queue", queues.QUEUES, ids=lambda q: q.name)
def test_the_oldest_open_item_is_a_seek_not_a_sort_of_the_open_ones(alias, queue):
    """Named above a queue's page of its open items at every page (and on the metrics page):
    it was found by a sort of every open item, which grew the page with them (migration
    0041)."""
    connection = connections[alias]
    with CaptureQueriesContext(connection) as asked:
        queues.oldest_open(queue, queue.model._default_manager.using(alias).all())
    [query] = asked.captured_queries
    explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(explain + query["sql"])
        plan = "\n".join(str(row[-1]) for row in cursor.fetchall())
    assert "TEMP B-TREE" not in plan and " Sort " not in f" {plan} ", plan
    assert "_status_created" in plan, plan
