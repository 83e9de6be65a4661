"""A row of a run's letters or their decisions (DeadLettered, DeadLetterRetried,
DeadLetterDiscarded) rewritten in the table so no event model reads it: a person's decision on
a letter of that stream read the row and raised, a server error on the queue's page, and a
decision on several stopped at it. The decision is refused (409) naming the row, and nothing
is written; the step parks such a run in a letter naming the row, once, and the sweep passes
over it."""

from __future__ import annotations

import json
import time

import pytest
from django.urls import reverse

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import streams
from services import letters, steps
from services.control import Control
from tests.dashboard.test_a_step_that_cannot_start_its_run import letter_of, with_bad_settings

pytestmark = pytest.mark.django_db


def spoil(run_id: str, kind: str) -> StoredEvent:
    row = StoredEvent.objects.filter(stream=streams.control(run_id), kind=kind).first()
    row.data = json.dumps({**json.loads(row.data), "by": {"<b>x</b>": 1}, "reason": {"y": 2}})
    row.save()
    return row


def parked() -> tuple[str, str]:
    """A run parked on a letter (its settings do not validate): its id and the letter's."""
    run_id = with_bad_settings()
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    return run_id, letter_of(run_id)["letter_id"]


def refused_everywhere(letter_id: str, row: StoredEvent, as_reviewer, api) -> None:
    """Every way to decide the letter answers 409 naming the row, and writes nothing."""
    journal = DjangoJournal()
    before = journal.last_position()
    with pytest.raises(letters.LetterUnreadable) as refused:
        letters.decide_letter(letter_id, "retry", "ann", "again")
    said = str(refused.value)
    assert letter_id in said and f"position {row.position}" in said and row.kind in said
    answer = api.post(
        f"/api/review/dead-letters/{letter_id}/retry",
        {"reason": "again"},
        content_type="application/json",
    )
    assert answer.status_code == 409 and answer.json()["detail"] == said
    page = as_reviewer.post(reverse("decide_letter", args=[letter_id, "discard"]), {"reason": "x"})
    assert page.status_code == 409 and f"position {row.position}" in page.content.decode()
    assert "<b>x</b>" not in page.content.decode()
    several = api.post(
        "/api/review/dead-letters/decide",
        {"letters": [letter_id], "decision": "discard", "reason": "again"},
        content_type="application/json",
    )
    assert several.status_code == 200
    assert several.json()["refused"] == [{"letter_id": letter_id, "detail": said}]
    assert journal.last_position() == before


def test_a_letter_that_does_not_read_parks_the_run_and_refuses_decisions(
    as_reviewer, api, settings
):
    run_id, first = parked()
    row = spoil(run_id, "DeadLettered")
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    second = Control(run_id).open_letter()
    assert second is not None and second.letter_id != first
    assert f"position {row.position}" in second.reason and "DeadLettered" in second.reason
    after = DjangoJournal().last_position()
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert steps.revive_stalled() == []
    assert DjangoJournal().last_position() == after
    for letter_id in (first, second.letter_id):
        refused_everywhere(letter_id, row, as_reviewer, api)


def test_a_retry_that_does_not_read_parks_the_run_and_refuses_decisions(as_reviewer, api, settings):
    run_id, first = parked()
    letters.decide_letter(first, "retry", "owner", "try again")
    row = spoil(run_id, "DeadLetterRetried")
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    second = Control(run_id).open_letter()
    reasons = [
        json.loads(r.data)["reason"]
        for r in StoredEvent.objects.filter(stream=streams.control(run_id), kind="DeadLettered")
    ]
    assert len(reasons) == 2 and f"position {row.position}" in reasons[-1]
    assert "DeadLetterRetried" in reasons[-1]
    after = DjangoJournal().last_position()
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert steps.revive_stalled() == []
    assert DjangoJournal().last_position() == after
    assert second is not None
    refused_everywhere(letter_of(run_id)["letter_id"], row, as_reviewer, api)


def test_a_discard_that_does_not_read_refuses_decisions(as_reviewer, api):
    run_id, first = parked()
    letters.decide_letter(first, "discard", "owner", "give up")
    row = spoil(run_id, "DeadLetterDiscarded")
    assert steps.drive_step(run_id, "test") == "escalated"
    refused_everywhere(first, row, as_reviewer, api)
