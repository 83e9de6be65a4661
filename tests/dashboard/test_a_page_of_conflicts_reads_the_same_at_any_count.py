"""A page of open conflicts makes as many queries whatever number of conflicts it shows: each
card's reads (the decisions on its claims since it was parked, what its fact or order holds
now) are made for the page's cards at once (services/review.cards_of).

Read card by card, each open conflict cost its own two or three queries: 72 for the queue's
page of 25 against 9 for its rows, 68 for the API's page of 25 and 130 for one of 50 (counted
on bench/conflict_store.py's conflicts, 2026-12-07)."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bench import conflict_store
from journal_store.models import Conflict

pytestmark = pytest.mark.django_db

READS = {
    # Every conflict, open ones among them: no line naming the oldest open one, which reads
    # once more when that one is on another page (with 40, not with 5).
    "page": "/review/conflicts?status=all",  # 25 a page (dashboard/views/review.py)
    "open page": "/review/conflicts?status=open",
    "API": "/api/review/conflicts?status=open&limit=50",
}


def queries(client, url: str) -> tuple[list[str], int]:
    """The queries of one read of `url`, and how many conflicts it showed."""
    client.get(url)  # once first: what a first request alone reads (a session, a token)
    with CaptureQueriesContext(connection) as ctx:
        answer = client.get(url)
    assert answer.status_code == 200
    if url.startswith("/api/"):
        shown = len(answer.json()["items"])
    else:
        shown = answer.content.count(b'<section class="card" id="cf-')
    return [q["sql"] for q in ctx.captured_queries], shown


def cards(found: list[str]) -> list[str]:
    """The queries of the cards' reads: of the journal's rows (their claims' decisions, their
    facts) and of the desk's orders; not the projection's check of its rows, which reads
    the journal's last position."""
    tables = ("journal_event", "desk_order")
    return [q for q in found if any(t in q for t in tables) and "projection_" not in q]


def counted(as_reviewer, api, count: int) -> dict[str, tuple[list[str], int]]:
    # Few facts and decisions a subject: each card's reads take one round at either count
    # (a fact's window, a page of decisions), so that only the count of cards differs.
    Conflict.objects.all().delete()
    conflict_store.build(count, random.Random(count), facts=3, decisions=3, tag=f"N{count}")
    assert Conflict.objects.filter(status="open").count() == count
    clients = {"page": as_reviewer, "open page": as_reviewer, "API": api}
    return {name: queries(clients[name], url) for name, url in READS.items()}


def test_the_queues_page_and_api_make_as_many_queries_for_40_open_conflicts_as_for_5(
    as_reviewer, api
):
    few, many = counted(as_reviewer, api, 5), counted(as_reviewer, api, 40)
    assert [few[name][1] for name in READS] == [5, 5, 5]
    assert [many[name][1] for name in READS] == [25, 25, 40]  # pages of 25, the API's of 50
    assert len(few["page"][0]) == len(many["page"][0])
    assert len(few["API"][0]) == len(many["API"][0])
    assert len(cards(few["open page"][0])) == len(cards(many["open page"][0]))
    # The cards' reads, for the page's cards at once: the decisions on their claims, the
    # journal's facts, the desk's orders (then the rows' check of the projection and the
    # navigation's counts, which every page makes).
    assert len(cards(few["page"][0])) == 3, cards(few["page"][0])
