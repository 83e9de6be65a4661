"""`GET /api/runs` answers a page of runs in a number of queries that does not grow with the
rows it lists: each row's stalled time and fork point were asked for row by row (one query
per active run, and more per fork), so a page of 100 forks in flight cost hundreds."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from journal_store import projection
from journal_store.journal import DjangoJournal
from services import forks
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def listed(client) -> tuple[int, list[dict]]:
    with CaptureQueriesContext(connection) as asked:
        body = client.get("/api/runs?limit=100").json()
    return len(asked), body["items"]


def test_a_page_of_forks_in_flight_costs_the_same_queries_as_one(owner, as_owner):
    parent = run_of("first-flight")
    at = next(
        r.position
        for r in DjangoJournal().read(f"run-{parent}")
        if r.event.kind == "ToolReturned" and r.event.tool == "read_file"
    )

    def fork() -> str:
        return forks.fork_run(parent, at, forks.Changes(), "owner")

    first = fork()
    projection.catch_up()
    one, items = listed(as_owner)
    assert {i["run_id"]: i["fork_at"] for i in items if i["parent_id"]} == {first: at}
    more = [fork() for _ in range(4)]
    projection.catch_up()
    five, items = listed(as_owner)
    forked = {i["run_id"]: i for i in items if i["parent_id"]}
    assert set(forked) == {first, *more}
    assert all(i["fork_at"] == at for i in forked.values())
    assert all("stalled_since" in i for i in forked.values())
    assert five == one, (one, five)
