"""A resume asked while another is on its way is refused (409) naming who asked and when, and
nothing is recorded or sent: the run reads interrupted until the step the first resume sent
writes its RunResumed, and two resumes back to back each recorded a ResumeRequested and sent a
step. Read from the control stream, and appended at the version read: two at once record one.
A stop asked while a stop is pending is refused the same way; a stop asked while a resume is
on its way is recorded, and cancels it, as a resume cancels a stop the run has not reached."""

from __future__ import annotations

import threading

import pytest
from django.db import connections
from django.test import Client

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from services import runs
from services.steps import drive_step
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db(transaction=True)


def requests(run_id: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(f"control-{run_id}")]


def post(api, run_id: str, what: str, reason: str = "go"):
    return api.post(f"/api/runs/{run_id}/{what}", {"reason": reason}, "application/json")


def interrupted(steps: int = 1) -> str:
    run_id = run_of("first-flight", by="rosa", steps=steps)
    runs.interrupt(run_id, "ann", "wrong repository")
    assert drive_step(run_id, "test") == "interrupted"
    assert runs.status_of(run_id) == "interrupted"
    return run_id


def test_a_second_resume_while_the_first_is_on_its_way_is_a_409_recording_nothing(api, sent):
    run_id = interrupted()
    assert post(api, run_id, "resume").status_code == 202
    assert runs.status_of(run_id) == "interrupted"  # until a step writes RunResumed
    before, sent_before = StoredEvent.objects.count(), len(sent)
    again = post(api, run_id, "resume", "go on")
    assert again.status_code == 409
    detail = again.json()["detail"]
    assert detail.startswith(f"run {run_id} has a resume on its way already, asked by reviewer at ")
    assert detail.endswith(" UTC (go): nothing was changed")
    assert (StoredEvent.objects.count(), len(sent)) == (before, sent_before)
    assert requests(run_id) == ["StopRequested", "ResumeRequested"]
    assert drive_step(run_id, "test") == "stepped"  # the first resume's step takes it up
    assert runs.status_of(run_id) == "running"
    later = post(api, run_id, "resume")
    assert later.status_code == 409 and "is already running" in later.json()["detail"]


def test_two_resumes_at_once_record_one(token, sent):
    run_id = interrupted()
    sent_before = len(sent)
    barrier, codes = threading.Barrier(2), []

    def resume() -> None:
        try:
            barrier.wait()
            codes.append(post(Client(HTTP_AUTHORIZATION=f"Bearer {token}"), run_id, "resume"))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=resume) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(a.status_code for a in codes) == [202, 409]
    assert requests(run_id) == ["StopRequested", "ResumeRequested"]
    assert sent[sent_before:] == [run_id]


def test_a_resume_whose_step_never_came_may_be_asked_again(api, sent, settings):
    run_id = interrupted()
    assert post(api, run_id, "resume").status_code == 202
    settings.STALL_SECONDS = 0  # nothing took the run up since: its step is taken as lost
    assert post(api, run_id, "resume").status_code == 202
    assert requests(run_id) == ["StopRequested", "ResumeRequested", "ResumeRequested"]


def test_a_stalled_run_resumed_twice_back_to_back_is_sent_once(api, sent, settings):
    run_id = run_of("first-flight", steps=1)
    settings.STALL_SECONDS = 0  # the lease was given back at the step's end: nobody took it
    assert runs.is_stalled(run_id)
    assert post(api, run_id, "resume").status_code == 202
    settings.STALL_SECONDS = 60  # the resume was just asked: its step is on its way
    again = post(api, run_id, "resume")
    assert again.status_code == 409 and "resume on its way already" in again.json()["detail"]
    assert requests(run_id) == ["ResumeRequested"]


def test_a_stop_while_a_resume_is_on_its_way_cancels_it(api, sent):
    run_id = interrupted()
    assert post(api, run_id, "resume").status_code == 202
    stop = post(api, run_id, "interrupt", "not yet")
    assert stop.status_code == 202, stop.content
    assert requests(run_id) == ["StopRequested", "ResumeRequested", "StopRequested"]
    assert drive_step(run_id, "test") == "interrupted"  # the resume's step finds the stop
    assert runs.status_of(run_id) == "interrupted"
    assert post(api, run_id, "resume").status_code == 202  # a stop to lift again


def test_a_second_stop_is_a_409_naming_who_asked_and_two_at_once_record_one(token, sent):
    run_id = run_of("first-flight", steps=1)
    barrier, answers = threading.Barrier(2), []

    def stop() -> None:
        try:
            barrier.wait()
            api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
            answers.append(post(api, run_id, "interrupt", "wrong repository"))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=stop) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(a.status_code for a in answers) == [202, 409]
    [refused] = [a.json()["detail"] for a in answers if a.status_code == 409]
    assert f"run {run_id} was asked to stop already, by reviewer at " in refused
    assert refused.endswith(" UTC (wrong repository): nothing was changed")
    assert requests(run_id) == ["StopRequested"]
