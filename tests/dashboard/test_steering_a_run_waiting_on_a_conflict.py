"""A run waiting on its parked conflict cannot be interrupted or resumed, and the refusal says
where it stands and what moves it (a decision in the conflict queue), on the API and in the
commands; it said the run 'has already finished (waiting)', a run the page calls waiting for
a person."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from journal_store.models import StoredEvent
from services import runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db
SAID = "waits for a person's decision on its parked conflict (decide it in the conflict queue)"


@pytest.fixture
def waiting():
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "S-1"})
    assert drive(run_id) == "escalated"
    assert runs.status_of(run_id) == "waiting"
    return run_id


@pytest.mark.parametrize("action", ["interrupt", "resume"])
def test_the_api_says_the_run_waits_on_its_conflict(token, waiting, action):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    before = StoredEvent.objects.count()
    answer = api.post(
        f"/api/runs/{waiting}/{action}", {"reason": "x"}, content_type="application/json"
    )
    assert answer.status_code == 409
    assert answer.json() == {"detail": f"run {waiting} {SAID}: nothing was changed"}
    assert StoredEvent.objects.count() == before


@pytest.mark.parametrize("command", ["interrupt_run", "resume_run"])
def test_the_commands_say_the_run_waits_on_its_conflict(waiting, command):
    before = StoredEvent.objects.count()
    with pytest.raises(CommandError, match="waits for a person's decision on its parked"):
        call_command(command, waiting, stdout=io.StringIO())
    assert StoredEvent.objects.count() == before
