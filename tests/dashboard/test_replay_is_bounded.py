""" "Check replay" flies the whole run again inside the web request: only whoever may steer the
run (who started it, or a reviewer) may ask, and a run longer than MINUTES_REPLAY_MAX_EVENTS
events is refused with the command that replays it off the web server, on the page and in the
API; a second check of a run nothing was added to is answered from the first. Before, any
signed-in person could spend a web worker's seconds on every click."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard.models import ApiToken
from journal_store.models import RunSummary
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def flown(owner):
    return run_of("first-flight")


def test_an_outsider_may_not_check_a_replay_by_page_or_api(as_outsider, outsider, flown):
    page = as_outsider.post(f"/runs/{flown}/replay", HTTP_HX_REQUEST="true")
    assert page.status_code == 403
    assert "may check a replay of it" in page.content.decode()
    api = Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(outsider, 't')[1]}")
    answer = api.post(f"/api/runs/{flown}/replay")
    assert answer.status_code == 403
    assert "may check a replay of it" in answer.json()["detail"]
    assert "Check replay" not in as_outsider.get(f"/runs/{flown}/").content.decode()


def test_the_owner_may_check_a_replay(as_owner, flown):
    page = as_owner.post(f"/runs/{flown}/replay", HTTP_HX_REQUEST="true").content.decode()
    assert "identical: all" in page
    assert "Check replay" in as_owner.get(f"/runs/{flown}/").content.decode()


def test_a_run_past_the_bound_is_refused_with_the_command_line_way(
    as_owner, token, flown, settings
):
    events = RunSummary.objects.get(run_id=flown).event_count
    settings.REPLAY_MAX_EVENTS = events - 1
    answered = as_owner.post(f"/runs/{flown}/replay", HTTP_HX_REQUEST="true")
    assert answered.status_code == 409  # refused, as the API says it (it answered 200)
    page = answered.content.decode()
    assert f"has {events} events, more than the {events - 1}" in page
    assert "python -m runtime replay" in page and "identical" not in page
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.post(f"/api/runs/{flown}/replay")
    assert answer.status_code == 409
    assert f"python manage.py export_journal {flown}" in answer.json()["detail"]
    settings.REPLAY_MAX_EVENTS = events
    assert api.post(f"/api/runs/{flown}/replay").json()["identical"] is True


def test_a_second_check_of_an_unchanged_run_is_answered_from_the_first(
    as_owner, flown, monkeypatch
):
    from runtime import flight
    from services import tags

    flown_again = []
    replay = flight.replay

    def counted(journal, run_id):
        flown_again.append(run_id)
        return replay(journal, run_id)

    monkeypatch.setattr(flight, "replay", counted)
    for _ in range(2):
        page = as_owner.post(f"/runs/{flown}/replay", HTTP_HX_REQUEST="true").content.decode()
        assert "identical: all" in page
    assert flown_again == [flown]
    tags.tag(flown, ["nightly"], [], "owner")  # an event added: the journal is another now
    assert "identical: all" in as_owner.post(f"/runs/{flown}/replay").content.decode()
    assert flown_again == [flown, flown]
