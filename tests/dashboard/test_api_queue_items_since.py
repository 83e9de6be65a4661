"""GET /api/review/conflicts and /api/review/dead-letters say when each item was opened and
decided, and where in the journal (its `position`), and take `after`: a script polls for what
arrived as the queue's page does. A script saw neither time nor order."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.test import Client

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import DeadLettered, TeamStarted
from services import letters
from tests.dashboard.polls import park

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(token):
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


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
