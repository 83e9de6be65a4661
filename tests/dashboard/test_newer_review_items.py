"""A review queue's page says when items arrive after it was drawn: a reviewer who kept the
dead letters or the conflicts open saw a new one only on a reload."""

from __future__ import annotations

from html import unescape

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import DeadLettered, TeamStarted
from tests.dashboard.polls import link_of, park, poll_of, quiet, said

pytestmark = pytest.mark.django_db

ITEMS = "newer-items"  # the element of a queue's page that polls


def lettered(run_id: str, n: int, team: str = "solo") -> None:
    started = TeamStarted(run_id=run_id, team=team, scenario="", task="t")
    letter = DeadLettered(run_id=run_id, letter_id=f"{run_id}:{n}", reason=f"letter {n}")
    DjangoJournal().append(f"run-{run_id}", [started, letter], 0)
    projection.catch_up()


def parked(run_id: str, n: int) -> None:
    park(run_id, f"cf-{run_id}-{n}")
    projection.catch_up()


def test_a_new_dead_letter_is_announced_with_a_link_to_the_queue(as_reviewer):
    lettered("r-0000000000a1", 1)
    poll = poll_of(as_reviewer.get("/review/dead-letters").content.decode(), ITEMS)
    assert quiet(as_reviewer.get(poll))
    lettered("r-0000000000b2", 1)
    answer = said(as_reviewer.get(poll))
    assert "1 new dead letter since this page was drawn: show it" in answer
    link = link_of(answer)
    page = as_reviewer.get(link).content.decode()
    assert "r-0000000000b2:1" in page
    assert quiet(as_reviewer.get(poll_of(page, ITEMS)))


def test_a_new_conflict_is_announced(as_reviewer):
    parked("r-0000000000a1", 1)
    poll = poll_of(as_reviewer.get("/review/conflicts").content.decode(), ITEMS)
    assert quiet(as_reviewer.get(poll))
    parked("r-0000000000a1", 2)
    parked("r-0000000000a1", 3)
    answer = said(as_reviewer.get(poll))
    assert "2 new conflicts since this page was drawn: show them" in answer
    assert "<title>(2) Claim conflicts · Minutes</title>" in answer


def test_an_empty_queue_announces_its_first_item(as_reviewer):
    poll = poll_of(as_reviewer.get("/review/conflicts").content.decode(), ITEMS)
    assert "after=0" in poll
    parked("r-0000000000a1", 1)
    assert "1 new conflict" in said(as_reviewer.get(poll))


def test_one_runs_queue_counts_only_that_runs_items(as_reviewer):
    lettered("r-0000000000a1", 1)
    poll = poll_of(
        as_reviewer.get("/review/dead-letters?run=r-0000000000a1").content.decode(), ITEMS
    )
    assert "run=r-0000000000a1" in poll
    lettered("r-0000000000b2", 1)
    assert quiet(as_reviewer.get(poll))
    answer = said(as_reviewer.get(poll.replace("a1", "b2")))
    assert "run=r-0000000000b2" in link_of(answer) and "1 new dead letter" in answer


def test_the_decided_items_and_later_pages_do_not_poll(as_reviewer):
    lettered("r-0000000000a1", 1)
    for asked in ("?status=decided", "?status=retried"):
        page = as_reviewer.get(f"/review/dead-letters{asked}").content.decode()
        assert 'id="newer-items"' not in page
    assert 'id="newer-items"' in as_reviewer.get("/review/dead-letters?status=all").content.decode()


@pytest.mark.parametrize("after", ["-1", "x", "9" * 40, "\uff11"])
def test_a_position_that_is_none_is_refused_naming_it(as_reviewer, after):
    refused = as_reviewer.get("/review/conflicts/newer", {"after": after})
    assert refused.status_code == 400
    why = unescape(refused.content.decode())
    assert "after" in why and "is not a position" in why


def test_a_run_that_is_no_run_id_is_refused(as_reviewer):
    refused = as_reviewer.get("/review/dead-letters/newer", {"run": "../etc", "after": "x"})
    assert refused.status_code == 400
    why = unescape(refused.content.decode())
    assert "is not a run id" in why and "'x' is not a position" in why


def test_the_poll_wants_a_signed_in_person(client):
    for path in ("/review/conflicts/newer", "/review/dead-letters/newer"):
        asked = client.get(path)
        assert asked.status_code == 302 and "/login" in asked["Location"]
