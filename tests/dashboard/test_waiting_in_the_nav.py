"""The navigation's Dead letters and Conflicts links say how many items wait for a person, on
every page that draws it; the htmx parts and polls, which do not draw it, do not ask."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboard import waiting
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter
from journal_store.queues import OPEN
from runtime.events import DeadLettered, TeamStarted
from services import letters
from tests.dashboard.polls import park

pytestmark = pytest.mark.django_db


def lettered(run_id: str) -> None:
    started = TeamStarted(run_id=run_id, team="solo", scenario="", task="t")
    letter = DeadLettered(run_id=run_id, letter_id=f"{run_id}:1", reason="no reply")
    DjangoJournal().append(f"run-{run_id}", [started, letter], 0)


def nav_of(page: str) -> str:
    nav = re.search(r'<nav aria-label="Main">(.*?)</nav>', page, re.S)
    assert nav, "the page has no navigation"
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", nav.group(1))).split()).replace(" )", ")")


def test_the_links_count_what_waits_until_a_person_decides(as_reviewer):
    assert "Dead letters Conflicts" in nav_of(as_reviewer.get("/").content.decode())
    lettered("r-0000000000a1")
    lettered("r-0000000000b2")
    park("r-0000000000a1", "cf-one")
    projection.catch_up()
    for path in ("/", "/metrics", "/runs/r-0000000000a1/", "/review/conflicts"):
        nav = nav_of(as_reviewer.get(path).content.decode())
        assert "Dead letters (open: 2) Conflicts (open: 1)" in nav, (path, nav)
    letters.decide_letter("r-0000000000a1:1", "discard", "rosa", "not needed")
    letters.decide_letter("r-0000000000b2:1", "retry", "rosa", "again")
    projection.catch_up()
    assert "Dead letters Conflicts (open: 1)" in nav_of(as_reviewer.get("/").content.decode())


def test_the_parts_and_polls_do_not_ask(as_reviewer):
    lettered("r-0000000000a1")
    projection.catch_up()
    for path, headers in (
        ("/runs/newer", {}),
        ("/review/dead-letters/newer", {}),
        ("/", {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "runs"}),
        ("/runs/r-0000000000a1/row", {}),
    ):
        with CaptureQueriesContext(connection) as captured:
            assert as_reviewer.get(path, **headers).status_code in (200, 204, 286)
        asked = [q["sql"] for q in captured if "projection_conflict" in q["sql"]]
        assert asked == [], path


def test_a_page_signed_out_does_not_ask(client):
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/login").status_code == 200
    assert not [q for q in captured if "projection_conflict" in q["sql"]]


def test_a_decision_taken_in_place_sends_the_counts_again(as_reviewer):
    lettered("r-0000000000a1")
    lettered("r-0000000000b2")
    park("r-0000000000a1", "cf-one")
    projection.catch_up()
    answer = as_reviewer.post(
        "/review/dead-letters/r-0000000000a1:1/discard",
        {"reason": "not needed"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    letters_count = re.search(
        r'<span id="waiting-letters" hx-swap-oob="true">(.*?)</span>\s*</span>', answer, re.S
    )
    assert letters_count and "(open: </span>1<" in letters_count.group(0)
    assert '<span id="waiting-conflicts" hx-swap-oob="true">' in answer
    # Without htmx the answer is a redirect to the queue, whose navigation counts anew.
    plain = as_reviewer.post("/review/dead-letters/r-0000000000b2:1/retry", {"reason": "again"})
    assert plain.status_code == 302
    assert "Dead letters Conflicts (open: 1)" in nav_of(as_reviewer.get("/").content.decode())


def test_a_conflict_resolved_in_place_sends_the_counts_again(as_reviewer):
    park("r-0000000000a1", "cf-one")
    park("r-0000000000a1", "cf-two")
    projection.catch_up()
    answer = as_reviewer.post(
        "/review/conflicts/cf-one/resolve",
        {"choice": "none", "reason": "neither holds"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    counted = re.search(
        r'<span id="waiting-conflicts" hx-swap-oob="true">(.*?)</span>\s*</span>', answer, re.S
    )
    assert counted and "(open: </span>1<" in counted.group(0)
    assert '<span id="waiting-letters" hx-swap-oob="true"></span>' in answer  # none wait


def test_past_99_open_items_the_link_says_99_plus_and_counts_no_further(as_reviewer):
    # Every open item's index entry was counted on every page: the more left open, the more
    # every page cost (tests/dashboard/test_store_pages_cost_the_same_at_any_size.py).
    when = datetime(2026, 12, 7, tzinfo=UTC)
    DeadLetter.objects.bulk_create(
        DeadLetter(
            letter_id=f"r-{n:012x}:1",
            run_id=f"r-{n:012x}",
            status=OPEN,
            position=n + 1,
            created_at=when,
            reason="no reply",
        )
        for n in range(150)
    )
    for open_now, said in ((99, "Dead letters (open: 99)"), (100, "Dead letters (open: 99+)")):
        DeadLetter.objects.filter(position__gt=open_now).update(status="discarded")
        DeadLetter.objects.filter(position__lte=open_now).update(status=OPEN)
        assert said in nav_of(as_reviewer.get("/").content.decode())
    with CaptureQueriesContext(connection) as queries:
        waiting.open_items()
    [count] = queries.captured_queries
    assert f"LIMIT {waiting.CAP + 1}" in count["sql"]
