"""No fork starts at or after a dead letter in the run's own journal, and the timeline offers
none there: a run whose harness parked its task, whose step's letter a person then discarded
(the discard, the harness letter's settled discard and the verdict in one write). The timeline
offered a fork after the DeadLettered and after the discard, and both were refused blaming
"the fork's settings": the letter's id names its run, so the fork's replay parted there
whatever was changed. The API and the page now say so, naming the letter; a fork before it is
made."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from services import letters, runs
from services.control import Control
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db

SAYS = "fork at an event before the letter"


@pytest.fixture
def discarded(owner) -> tuple[str, dict[str, int]]:
    """The run, and the positions of its last four events on its own stream, by kind."""
    run_id = runs.start_run("repo-fix", "reject-loop", by="owner")
    assert drive(run_id) == "dead-lettered"
    control = Control(run_id).dead_letter("the step kept dying", 3, "boom").letter_id
    letters.decide_letter(control, "discard", "rosa", "give up")
    rows = DjangoJournal().read(f"run-{run_id}")[-4:]
    kinds = [r.event.kind for r in rows]
    assert kinds == ["TaskEscalated", "DeadLettered", "DeadLetterDiscarded", "TeamFinished"]
    return run_id, {r.event.kind: r.position for r in rows}


def written() -> tuple[int, int]:
    return StoredEvent.objects.count(), RunSummary.objects.count()


def test_the_api_refuses_a_fork_after_the_letter_naming_it(token, discarded):
    run_id, at = discarded
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    letter = f"{run_id}:1"
    before = written()
    for kind, said in (
        ("DeadLettered", f"is the run's dead letter {letter} (DeadLettered)"),
        ("DeadLetterDiscarded", f"comes after the run's dead letter {letter}"),
    ):
        body = {"at": at[kind], "max_turns": 3}
        refused = api.post(f"/api/runs/{run_id}/fork", body, content_type="application/json")
        assert refused.status_code == 400, refused.content
        detail = refused.json()["detail"]
        assert said in detail and SAYS in detail
        assert "would not replay" not in detail and "change less" not in detail
    assert written() == before
    body = {"at": at["TaskEscalated"]}
    made = api.post(f"/api/runs/{run_id}/fork", body, content_type="application/json")
    assert made.status_code == 201, made.content


def test_the_page_says_why_before_anything_is_typed(as_owner, discarded):
    run_id, at = discarded
    for kind in ("DeadLettered", "DeadLetterDiscarded"):
        response = as_owner.get(f"/runs/{run_id}/fork?at={at[kind]}")
        page = html.unescape(response.content.decode())
        assert response.status_code == 400
        assert f"the run's dead letter {run_id}:1" in page and SAYS in page
        assert "Fork and run" not in page
    response = as_owner.get(f"/runs/{run_id}/fork?at={at['TaskEscalated']}")
    assert response.status_code == 200 and "Fork and run" in response.content.decode()


def test_the_timeline_offers_no_fork_from_the_letter_on(as_owner, discarded):
    run_id, at = discarded
    page = as_owner.get(
        f"/runs/{run_id}/tabs/timeline?after={at['TaskEscalated'] - 1}", HTTP_HX_REQUEST="true"
    ).content.decode()
    rows = set(map(int, re.findall(r'id="e(\d+)"', page)))
    links = set(map(int, re.findall(r"/fork\?at=(\d+)", page)))
    assert set(at.values()) <= rows
    assert at["TaskEscalated"] in links
    assert not links & {at["DeadLettered"], at["DeadLetterDiscarded"], at["TeamFinished"]}
    # Nor any row after the letter on another stream of the run (its control letter's).
    assert not {p for p in links if p > at["DeadLettered"]}
