"""A person cannot queue a push of a run's trace while its last push is queued and may still be
sending (the API's POST /api/runs/RUN/otlp/push and the run page's button): two pushes at once
send the same batches twice. Refused with 409 saying so, nothing journalled. A queued push not
heard of for longer than its task may run (its worker died, its message lost) can be asked for
again."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections
from django.test import Client

from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from runtime.events import TraceBatchPushed, TracePushQueued
from services import traces
from tasks import traces as trace_tasks
from tests.dashboard.conftest import run_of
from tests.dashboard.test_trace_push import collector, kinds  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver(collector):  # noqa: F811
    """The loopback collector of tests/dashboard/test_trace_push.py, configured."""
    return collector


@pytest.fixture
def api(token) -> Client:
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"  # a reviewer's: may steer any run
    return client


def stream(run_id: str) -> list:
    return [(r.version, r.event.id) for r in DjangoJournal().read(f"traces-{run_id}")]


def queued_long_ago(run_id: str, seconds: float) -> None:
    """The run's push, queued `seconds` ago and not heard of since (as a worker that died
    with it in hand leaves it)."""
    queued = TracePushQueued(endpoint="http://127.0.0.1:9", t=time.time() - seconds)
    journal_traces.record(run_id, queued)


def test_the_api_refuses_a_push_while_one_is_queued_and_writes_nothing(owner, api, receiver):
    run_id = run_of("premature-done")  # its end queued a push, no worker took it yet
    before = stream(run_id)
    refused = api.post(f"/api/runs/{run_id}/otlp/push")
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert detail.startswith("the trace's push is queued (asked for by the run's end at ")
    assert "may still be sending" in detail
    limit = traces.budget(live=False) + traces.HARD_AFTER_SOFT
    assert f"({traces.requeue_after()} s after it was last heard of: the push task's " in detail
    assert f"{limit} s time limit and {traces.REQUEUE_MARGIN} s more)" in detail
    assert detail.endswith("its worker has died and it can be asked for again")
    assert stream(run_id) == before  # nothing journalled
    assert trace_tasks.push(run_id) == "pushed"  # the push that was waiting goes on
    assert len(receiver.got) == 1
    asked = api.post(f"/api/runs/{run_id}/otlp/push")  # once it ended, it can be asked again
    assert (asked.status_code, asked.json()) == (202, {"detail": "queued"})
    assert kinds(run_id)[-1] == "TracePushQueued"


def test_the_page_hides_the_button_explains_and_refuses_a_post(owner, as_owner, receiver):
    run_id = run_of("premature-done")
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "Trace push queued. No other push can be asked for while it may still be" in page
    assert "its worker has died and it can be." in page
    assert 'id="head-pushtrace"' not in page
    before = stream(run_id)
    refused = as_owner.post(f"/runs/{run_id}/trace/push")  # a page loaded before it was queued
    assert refused.status_code == 409
    assert "the trace&#x27;s push is queued (asked for by the run&#x27;s end" in refused.text
    assert stream(run_id) == before


def test_a_push_queued_and_not_heard_of_past_its_time_limit_can_be_asked_for_again(
    owner, as_owner, api, receiver
):
    run_id = run_of("premature-done")
    queued_long_ago(run_id, traces.requeue_after() + 5)
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "longer than its task may run: its worker has died. It can be pushed again." in page
    assert 'id="head-pushtrace"' in page and "Push again" in page
    asked = api.post(f"/api/runs/{run_id}/otlp/push")
    assert (asked.status_code, asked.json()) == (202, {"detail": "queued"})
    last = DjangoJournal().read(f"traces-{run_id}")[-1].event
    assert isinstance(last, TracePushQueued) and last.by == "reviewer"
    assert trace_tasks.push(run_id) == "pushed" and len(receiver.got) == 1
    # Just queued again: refused again, as any push that may still be sending.
    assert traces.request_push(run_id, by="owner") == "queued"
    refused = as_owner.post(f"/runs/{run_id}/trace/push")
    assert refused.status_code == 409


def test_a_push_still_sending_batches_is_not_given_up_however_long_ago_it_was_queued(
    owner, api, receiver
):
    run_id = run_of("premature-done")
    queued_long_ago(run_id, traces.requeue_after() * 3)
    batch = TraceBatchPushed(
        endpoint=receiver.url, first=0, count=4, spans=4, bytes=900, attempts=1, upto=1
    )
    journal_traces.record(run_id, batch)  # the collector took a batch of it a moment ago
    refused = api.post(f"/api/runs/{run_id}/otlp/push")
    assert refused.status_code == 409
    assert "4 spans reached the collector so far" in refused.json()["detail"]
    assert kinds(run_id)[-1] == "TraceBatchPushed"


def test_two_people_asking_at_once_queue_one_push(owner, receiver):
    run_id = run_of("premature-done")
    queued_long_ago(run_id, traces.requeue_after() + 5)
    barrier, outcomes = threading.Barrier(2), []

    def ask(by: str) -> None:
        barrier.wait()
        try:
            outcomes.append(traces.ask_for_push(run_id, by=by))
        except traces.PushWaiting:
            outcomes.append("waiting")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask, args=(by,)) for by in ("owner", "reviewer")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == ["queued", "waiting"]
    assert kinds(run_id) == ["TracePushQueued", "TracePushQueued", "TracePushQueued"]


def test_a_second_end_of_the_run_queues_no_second_push(owner, receiver):
    run_id = run_of("premature-done")  # its end queued a push, no worker took it yet
    before = stream(run_id)
    assert traces.run_ended(run_id) == "queued"  # the step delivered twice, say
    assert stream(run_id) == before
    assert kinds(run_id) == ["TracePushQueued"]


def test_two_ends_and_a_person_at_once_queue_one_push(owner, receiver, monkeypatch):
    """Each reads the traces stream before any of them appends (a barrier after its first
    read): the one whose append lands first queues the push, the others' appends at the same
    version are refused, and read again they find it queued."""
    run_id = run_of("premature-done")
    queued_long_ago(run_id, traces.requeue_after() + 5)  # given up: any of them may queue
    read = journal_traces.whole_ledger
    barrier, outcomes, first = threading.Barrier(3), [], threading.local()

    def read_then_wait(run: str) -> journal_traces.Ledger:
        book = read(run)
        if not getattr(first, "done", False):
            first.done = True
            barrier.wait(30)
        return book

    monkeypatch.setattr(journal_traces, "whole_ledger", read_then_wait)

    def end() -> None:
        try:
            outcomes.append(traces.run_ended(run_id))
        finally:
            connections.close_all()

    def ask() -> None:
        try:
            outcomes.append(traces.ask_for_push(run_id, by="owner"))
        except traces.PushWaiting:
            outcomes.append("waiting")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=f) for f in (end, end, ask)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(outcomes) == 3 and set(outcomes) <= {"queued", "waiting"}
    # The end's push, the one queued long ago, and one more.
    assert kinds(run_id) == ["TracePushQueued", "TracePushQueued", "TracePushQueued"]
