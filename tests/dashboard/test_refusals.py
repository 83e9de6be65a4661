"""Refusals are typed where they are found and answered by type: the same status on a page and
in the API, whatever the message says, and nothing is written."""

from __future__ import annotations

import pytest

from journal_store.models import StoredEvent
from services import conflict_errors, letters, review, runs

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def test_a_conflict_nobody_parked_is_not_found_on_the_page_and_nothing_is_written(as_reviewer):
    with pytest.raises(conflict_errors.ConflictNotFound):
        review.resolve("c-nope", "k1", "reviewer", "x")
    response = as_reviewer.post("/review/conflicts/c-nope/resolve", {"choice": "k1", "reason": "x"})
    assert response.status_code == 404 and b"no parked conflict c-nope" in response.content
    assert StoredEvent.objects.count() == 0


def test_a_dead_letter_nobody_wrote_is_not_found_on_the_page_and_nothing_is_written(
    as_reviewer, done_run
):
    before = StoredEvent.objects.count()
    with pytest.raises(letters.LetterNotFound):
        letters.decide_letter(f"{done_run}:9", "retry", "reviewer", "x")
    response = as_reviewer.post(f"/review/dead-letters/{done_run}:9/retry", {"reason": "x"})
    assert response.status_code == 404 and b"no dead letter" in response.content
    assert StoredEvent.objects.count() == before


def test_steering_a_finished_run_is_refused_as_finished_on_the_page(as_owner, done_run):
    before = StoredEvent.objects.count()
    with pytest.raises(runs.RunFinished):
        runs.resume(done_run, "owner")
    response = as_owner.post(f"/runs/{done_run}/resume", {"reason": "again"})
    assert response.status_code == 409 and b"already finished (done)" in response.content
    assert StoredEvent.objects.count() == before
