"""The metrics page's "Undecided now" counts the open conflicts and dead letters of the runs its
filter chooses, and linked to the whole queues: 1 dead letter, a click, and every run's listed.
The queues now choose runs as the metrics page does (team, scenario, model, the days they
started in), validated as it validates them, and the page's links carry its filter."""

from __future__ import annotations

import html
from datetime import timedelta
from urllib.parse import urlencode

import pytest

from journal_store import projection
from journal_store.models import RunSummary
from services.control import Control
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_letters(owner) -> tuple[str, str, str, str]:
    """Two runs of two scenarios, each with a dead letter waiting for a person."""
    found = []
    for scenario in ("first-flight", "premature-done"):
        run_id = run_of(scenario, steps=1)
        found += [run_id, Control(run_id).dead_letter("a step kept failing", 3, "Boom").letter_id]
    projection.catch_up()
    return found[0], found[1], found[2], found[3]


def test_the_undecided_links_carry_the_metrics_filter_and_list_its_runs_items(
    as_owner, two_letters
):
    ours, our_letter, _, their_letter = two_letters
    day = RunSummary.objects.get(run_id=ours).started_on
    chosen = {"scenario": "first-flight", "since": day.isoformat(), "until": day.isoformat()}
    page = html.unescape(as_owner.get("/metrics?" + urlencode(chosen)).content.decode())
    query = urlencode({"scenario": "first-flight", "since": day, "until": day})
    assert f'<a href="/review/dead-letters?{query}">1 dead letter</a>' in page
    assert f'<a href="/review/conflicts?{query}">0 conflicts</a>' in page

    queue = as_owner.get(f"/review/dead-letters?{query}")
    assert queue.status_code == 200
    listed = queue.content.decode()
    assert our_letter in listed and their_letter not in listed
    assert "of scenario first-flight, started from" in listed
    # The status links keep the runs chosen.
    assert f"?status=all&amp;{html.escape(query)}" in listed
    # Unfiltered, the page links to the whole queues, which list both.
    page = as_owner.get("/metrics").content.decode()
    assert '<a href="/review/dead-letters">2 dead letters</a>' in page
    both = as_owner.get("/review/dead-letters").content.decode()
    assert our_letter in both and their_letter in both


def test_a_queue_takes_the_days_runs_started_in(as_owner, two_letters):
    ours, our_letter, _, their_letter = two_letters
    later = RunSummary.objects.get(run_id=ours).started_on + timedelta(days=1)
    listed = as_owner.get(f"/review/dead-letters?since={later}").content.decode()
    assert our_letter not in listed and their_letter not in listed
    api = as_owner.get("/api/review/dead-letters?scenario=premature-done").json()
    assert [item["letter_id"] for item in api["items"]] == [their_letter]


def test_a_queue_refuses_a_runs_filter_it_cannot_take_naming_the_field(as_owner, two_letters):
    response = as_owner.get("/review/dead-letters?since=yesterday&team=nobody")
    assert response.status_code == 400
    body = html.unescape(response.content.decode())
    assert "<strong>Started from</strong>: 'yesterday' is not a date (YYYY-MM-DD)" in body
    assert "<strong>team</strong>: no run or team knows team 'nobody'" in body
    assert "Nothing is listed" in body
    api = as_owner.get("/api/review/conflicts?until=2026-13-01")
    assert api.status_code == 422
    assert "until" in api.text
