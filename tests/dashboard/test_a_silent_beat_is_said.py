"""With no beat queuing stalled runs again (no worker started with --beat, or it died, or no
worker takes its rounds), a run that stalls waits for good: the runs list, the API's list and a
stalled run's page say so, and since when, where they said only "stalled since"
(services/beat.py)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from journal_store import projection
from journal_store.models import BeatRound, RunSummary
from services import beat
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def long_ago(run_id: str, seconds: float) -> None:
    RunSummary.objects.filter(run_id=run_id).update(
        started_at=timezone.now() - timedelta(seconds=seconds)
    )


def rounds_ended(seconds_ago: float) -> None:
    at = timezone.now() - timedelta(seconds=seconds_ago)
    BeatRound.objects.update_or_create(what=beat.REVIVING, defaults={"at": at})


def test_a_round_that_ends_is_recorded_and_one_the_database_refused_is_not():
    assert beat.round_of(beat.REVIVING, lambda: ["r-1"]) == ["r-1"]
    at = beat.last_round()
    assert at is not None and (timezone.now() - at).total_seconds() < 5

    def refused() -> list[str]:
        raise OperationalError("the database does not answer")

    assert beat.round_of(beat.SETTLING, refused) == []
    assert beat.last_round(beat.SETTLING) is None


@pytest.fixture
def active_run(owner):
    run_id = run_of("first-flight", steps=1)
    projection.catch_up()
    assert RunSummary.objects.get(run_id=run_id).status == "running"
    return run_id


def test_the_beat_is_silent_only_while_a_run_has_been_active_longer_than_its_patience(
    active_run, settings
):
    settings.RECONCILE_SECONDS = 15
    assert beat.patience() == 60
    assert beat.silence() is None  # the run has just started: no round was due yet
    long_ago(active_run, 600)
    said = beat.silence()
    assert said is not None and "No beat has queued a stalled run again on this database" in said
    assert "celery -A config worker --beat" in said
    rounds_ended(30)
    assert beat.silence() is None
    rounds_ended(11 * 60)
    said = beat.silence()
    assert said is not None and re.search(r"\(11 min \d+ s ago\)", said)
    RunSummary.objects.filter(run_id=active_run).update(status="done")
    assert beat.silence() is None  # nothing active: nothing waits on the beat


def test_the_runs_list_and_the_api_say_a_silent_beat(active_run, as_owner):
    assert 'id="beat-silence"' not in as_owner.get("/").content.decode()
    assert as_owner.get("/api/runs").json()["beat_silence"] is None
    long_ago(active_run, 600)
    rounds_ended(3600)
    page = as_owner.get("/").content.decode()
    assert 'id="beat-silence"' in page and re.search(r"\(60 min \d+ s ago\)", page)
    said = as_owner.get("/api/runs").json()["beat_silence"]
    assert said.startswith("No beat has queued stalled runs again since") and re.search(
        r"\(60 min \d+ s ago\)", said
    )


def test_a_stalled_runs_page_says_when_the_beat_last_ran_or_that_it_has_not(
    active_run, as_owner, settings
):
    settings.STALL_SECONDS = 0  # the run is stalled: nobody has driven it since its step
    rounds_ended(5)
    page = as_owner.get(f"/runs/{active_run}/").content.decode()
    assert "no worker is driving this run" in page
    assert "It is queued again automatically (the beat's last round ended at" in page
    long_ago(active_run, 600)
    rounds_ended(600)
    page = as_owner.get(f"/runs/{active_run}/").content.decode()
    assert "No beat has queued stalled runs again since" in page and re.search(
        r"\(10 min \d+ s ago\)", page
    )
    assert "It is queued again automatically" not in page
