"""With live pushes on, a run's spans reach the collector as they end, step after step, from
the workers; the push at the run's end completes the trace. A real OTLP/HTTP receiver on
loopback decodes every request with the official definitions: no span arrives twice, and the
union is the run's whole trace, span for span."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.events import TraceSpansClaimed
from runtime.otel import otlp_request
from runtime.otel.encode import folded
from services import runs
from services.steps import drive_step
from tasks import traces as trace_tasks
from tests.dashboard.test_trace_push import collector, kinds  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def live(settings, collector):  # noqa: F811
    settings.OTLP_LIVE = True
    settings.STEP_TURNS = 1  # a turn a step: the run goes on over many steps
    return collector


def received(receiver) -> list[Span]:
    return [s for _, _, req in receiver.got for s in req.resource_spans[0].scope_spans[0].spans]


def whole_trace(run_id: str) -> dict[bytes, bytes]:
    records = flight.run_records(DjangoJournal(), run_id)
    spans = otlp_request(records, journal_traces.options()).resource_spans[0].scope_spans[0].spans
    return {s.span_id: s.SerializeToString(deterministic=True) for s in spans}


def fly_live(run_id: str) -> list[str]:
    """Drive the run a step at a time; after each, run the live push its step queued, as a
    worker would. The outcomes of the live pushes."""
    pushes = []
    for _ in range(300):
        outcome = drive_step(run_id, "test")
        if outcome not in ("stepped", "waiting"):
            return pushes
        pushes.append(trace_tasks.push_live(run_id))
    raise AssertionError("the run never settled")


def test_spans_go_live_as_the_run_goes_on_and_the_end_push_completes_the_trace(
    owner, as_owner, live
):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    assert drive_step(run_id, "test") == "stepped"
    assert trace_tasks.push_live(run_id) == "pushed"
    going = received(live)
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert f"{len(going)} span{'s' if len(going) > 1 else ''} pushed live" in page
    pushes = fly_live(run_id)
    assert pushes.count("pushed") >= 3  # spans went out while the run was still going
    before_end = received(live)
    assert before_end and all(s.parent_span_id for s in before_end)  # the run's span waits
    assert trace_tasks.push(run_id) == "pushed"
    got = received(live)
    ids = [s.span_id for s in got]
    assert len(ids) == len(set(ids))  # no span sent twice
    whole = whole_trace(run_id)
    assert {s.span_id: s.SerializeToString(deterministic=True) for s in got} == whole
    [(_, _, last)] = live.got[-1:]
    assert len(last.resource_spans[0].scope_spans[0].spans) == len(whole) - len(before_end)
    assert {len(s.trace_id) for s in got} == {16}
    state = journal_traces.state(run_id)
    assert (state["state"], state["spans"], state["live"]) == (
        "pushed",
        len(whole),
        len(before_end),
    )
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert f"Trace pushed ({len(whole)} spans, {len(before_end)} of them live" in page
    assert trace_tasks.push_live(run_id) == "ended"  # a late live push sends nothing
    assert len(received(live)) == len(whole)


def test_a_step_only_queues_the_live_push_and_sends_nothing_itself(owner, live):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    for _ in range(4):
        assert drive_step(run_id, "test") == "stepped"
    assert live.got == [] and kinds(run_id) == []  # no POST, no claim: the step did not wait
    assert trace_tasks.push_live(run_id) == "pushed"
    assert trace_tasks.push_live(run_id) == "nothing"  # nothing ended since
    assert kinds(run_id) == ["TraceSpansClaimed", "TraceSpansPushed"]


def test_live_pushes_are_off_unless_asked(owner, settings, collector):  # noqa: F811
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    assert drive_step(run_id, "test") == "stepped"
    assert trace_tasks.push_live(run_id) == "off"
    assert collector.got == [] and kinds(run_id) == []


def test_a_failed_live_push_is_tried_once_recorded_and_its_spans_go_with_the_end_push(owner, live):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    for _ in range(3):
        drive_step(run_id, "test")
    live.answers = [503, 503]  # the end push would retry this; a live push tries once
    assert trace_tasks.push_live(run_id) == "failed"
    assert live.answers == [503]  # one POST: no backoff holds the worker
    [failed] = [r.event for r in DjangoJournal().read(f"traces-{run_id}")][-1:]
    assert failed.kind == "TraceSpansPushFailed" and "HTTP 503" in failed.error
    assert failed.attempts == 1
    live.answers = []
    fly_live(run_id)  # the next live pushes go on from after the failed spans
    assert trace_tasks.push(run_id) == "pushed"
    ids = [s.span_id for s in received(live)]
    assert len(ids) == len(set(ids)) and set(ids) == set(whole_trace(run_id))


def test_two_live_pushes_at_once_send_each_span_once(owner, live):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    for _ in range(5):
        drive_step(run_id, "test")
    barrier, outcomes = threading.Barrier(2), []

    def push() -> None:
        barrier.wait()
        try:
            outcomes.append(trace_tasks.push_live(run_id))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=push) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) in (["busy", "pushed"], ["nothing", "pushed"])
    assert kinds(run_id) == ["TraceSpansClaimed", "TraceSpansPushed"]
    ids = [s.span_id for s in received(live)]
    assert ids and len(ids) == len(set(ids))


def test_the_end_push_waits_for_a_live_push_in_flight(owner, live):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    drive_step(run_id, "test")
    # A live push that has claimed its spans and not yet heard from the collector.
    claim = TraceSpansClaimed(endpoint=live.url, first=0, count=1, t=time.time())
    journal_traces.claim(run_id, claim, 0)
    while drive_step(run_id, "test") == "stepped":
        pass
    assert kinds(run_id) == ["TraceSpansClaimed", "TracePushQueued"]
    assert trace_tasks.push(run_id) == "later"  # sent again in a moment, nothing sent now
    assert live.got == []


def test_a_fan_out_run_s_specialists_go_live_once_their_reports_are_in(owner, live, monkeypatch):
    """Specialists work on streams of their own; each one's span may still be marked failed by
    its supervisor's report, so it goes live after that report, and still only once."""
    from services import specialists

    sent: list[tuple[str, str, dict]] = []
    monkeypatch.setattr(
        specialists, "dispatch", lambda run, sub, handoff: sent.append((run, sub, handoff))
    )
    run_id = runs.start_run("support-triage", "broken-policy", by="owner")
    outcome = "stepped"
    for _ in range(100):
        outcome = drive_step(run_id, "test")
        trace_tasks.push_live(run_id)
        if outcome not in ("stepped", "waiting"):
            break
        while sent:
            run, sub, _handoff = sent.pop(0)
            specialists.run_specialist(run, sub, "test-worker")
    assert outcome == "done"
    live_spans = received(live)
    assert any(s.name == "invoke_agent policy-worker" for s in live_spans)
    assert trace_tasks.push(run_id) == "pushed"
    got = received(live)
    ids = [s.span_id for s in got]
    assert len(ids) == len(set(ids))
    whole = whole_trace(run_id)
    assert {s.span_id: s.SerializeToString(deterministic=True) for s in got} == whole
    [policy] = [s for s in got if s.name == "invoke_agent policy-worker"]
    assert policy.status.code == policy.status.STATUS_CODE_ERROR  # as its supervisor said


def test_a_claim_whose_worker_died_is_taken_as_failed_and_its_spans_go_with_the_end_push(
    owner, live
):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    for _ in range(4):
        drive_step(run_id, "test")
    # Claimed long ago, no outcome since: its worker died with the spans in hand.
    claim = TraceSpansClaimed(endpoint=live.url, first=0, count=2, t=time.time() - 3600)
    journal_traces.claim(run_id, claim, 0)
    assert trace_tasks.push_live(run_id) == "pushed"  # not held up: from the third span on
    while drive_step(run_id, "test") == "stepped":
        pass
    assert trace_tasks.push(run_id) == "pushed"
    ids = [s.span_id for s in received(live)]
    assert len(ids) == len(set(ids)) and set(ids) == set(whole_trace(run_id))
    records = flight.run_records(DjangoJournal(), run_id)
    claimed = [bytes.fromhex(s.span_id) for _, s in folded(records)][:2]
    last = live.got[-1][2].resource_spans[0].scope_spans[0].spans
    assert set(claimed) <= {s.span_id for s in last}  # the end push sent them
