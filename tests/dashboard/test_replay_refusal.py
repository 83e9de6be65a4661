"""Replaying a run whose journal cannot be flown here is a refusal that says why, on the page
and in the API: not a server error, and nothing is written."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ModelCalled, RunStarted

pytestmark = pytest.mark.django_db


@pytest.fixture
def headless():
    """A run stream that does not start with TeamStarted (a journal from elsewhere, say)."""
    DjangoJournal().append(
        "run-r-headless",
        [
            RunStarted(run_id="r-headless", agent="coder", task="t"),
            ModelCalled(run_id="r-headless", agent="coder", turn=1),
        ],
        0,
    )
    projection.catch_up()
    return "r-headless"


def test_the_api_refuses_to_replay_a_run_it_cannot_fly_with_409_and_the_reason(api, headless):
    before = StoredEvent.objects.count()
    response = api.post(f"/api/runs/{headless}/replay")
    assert response.status_code == 409
    assert "does not start with TeamStarted" in response.json()["detail"]
    assert StoredEvent.objects.count() == before


def test_the_page_says_why_a_run_cannot_be_replayed(as_reviewer, headless):
    answered = as_reviewer.post(f"/runs/{headless}/replay")
    assert answered.status_code == 409  # as the API's (the page answered 200)
    page = answered.content.decode()
    assert "does not start with TeamStarted" in page and "error" in page
