"""Resuming a run that is already running, with no stop to lift, is refused (409) on the API, on
the page and by resume_run, and nothing is written or sent; it used to answer 202 and write a
ResumeRequested that changed nothing. A pending stop, or a stall, is still something to resume."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from services import runs
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def resume(api, run_id: str):
    return api.post(f"/api/runs/{run_id}/resume", {"reason": "go"}, content_type="application/json")


def test_the_api_refuses_to_resume_a_running_run_and_writes_nothing(api, sent):
    run_id = run_of("first-flight", steps=1)
    before, sent_before = StoredEvent.objects.count(), len(sent)
    answer = resume(api, run_id)
    assert answer.status_code == 409
    assert answer.json() == {"detail": f"run {run_id} is already running: nothing was changed"}
    assert StoredEvent.objects.count() == before
    assert DjangoJournal().version(f"control-{run_id}") == 0
    assert len(sent) == sent_before
    assert runs.status_of(run_id) == "running"


def test_the_page_answers_the_refusal_in_place(as_owner, sent):
    run_id = run_of("first-flight", steps=1)
    before, sent_before = StoredEvent.objects.count(), len(sent)
    answer = as_owner.post(f"/runs/{run_id}/resume", {"reason": "go"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 409  # swapped into the header's result slot (base.html)
    assert b"is already running: nothing was changed" in answer.content
    assert "HX-Refresh" not in answer
    assert StoredEvent.objects.count() == before and len(sent) == sent_before


def test_resume_run_refuses_a_running_run_and_writes_nothing(owner, sent):
    run_id = run_of("first-flight", steps=1)
    before, sent_before = StoredEvent.objects.count(), len(sent)
    with pytest.raises(CommandError, match="is already running: nothing was changed"):
        call_command("resume_run", run_id, by="ann", stdout=io.StringIO())
    assert StoredEvent.objects.count() == before and len(sent) == sent_before


def test_a_running_run_with_a_stop_pending_is_resumed_which_cancels_the_stop(api, sent):
    run_id = run_of("first-flight", steps=1)
    runs.interrupt(run_id, "ann", "wrong repository")
    assert runs.status_of(run_id) == "running"  # the stop waits for the next turn boundary
    answer = resume(api, run_id)
    assert answer.status_code == 202, answer.content
    kinds = [r.event.kind for r in DjangoJournal().read(f"control-{run_id}")]
    assert kinds == ["StopRequested", "ResumeRequested"]
    assert sent[-1] == run_id


def test_a_stalled_run_is_resumed_which_queues_it_again(api, sent, settings):
    run_id = run_of("first-flight", steps=1)
    settings.STALL_SECONDS = 0  # its lease was given back: nobody has taken it since
    assert runs.is_stalled(run_id)
    answer = resume(api, run_id)
    assert answer.status_code == 202, answer.content
    kinds = [r.event.kind for r in DjangoJournal().read(f"control-{run_id}")]
    assert kinds == ["ResumeRequested"]
    assert sent[-1] == run_id


def test_a_dead_lettered_run_is_not_resumed_but_sent_to_its_letter(api, sent):
    from journal_store import projection
    from runtime.events import DeadLettered

    run_id = run_of("first-flight", steps=1)
    stream = f"run-{run_id}"
    letter = DeadLettered(run_id=run_id, letter_id=f"{run_id}:1", reason="no reply", attempts=3)
    DjangoJournal().append(stream, [letter], DjangoJournal().version(stream))
    projection.catch_up()
    assert runs.status_of(run_id) == "dead-lettered"
    before, sent_before = StoredEvent.objects.count(), len(sent)
    answer = resume(api, run_id)
    assert answer.status_code == 409
    assert "retry or discard it in the dead-letter queue" in answer.json()["detail"]
    assert (StoredEvent.objects.count(), len(sent)) == (before, sent_before)
