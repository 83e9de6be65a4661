"""The push at a run's end sends its trace in bounded batches, each journalled once the
collector took it, so a push that stops part way (a failure, a worker that died) is taken up
from the first batch not taken. A real OTLP/HTTP receiver on loopback decodes every body with
the official definitions; it can refuse bodies over a size with 413, as nginx in front of a
collector does."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict
from runtime.events import TraceBatchPushed, TracePushed
from runtime.otel import otlp_request
from services import review, runs, traces
from tasks import traces as trace_tasks
from tests.dashboard.conftest import drive, run_of
from tests.dashboard.test_trace_live_push import fly_live

pytestmark = pytest.mark.django_db(transaction=True)


class Collector:
    """Answers each POST with the next of `answers` (then 200), or 413 to a body over `limit`
    bytes; keeps the bodies it took, decoded, and the sizes of those it refused."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.answers: list[int] = []
        self.limit: int | None = None
        self.took: list[tuple[int, ExportTraceServiceRequest]] = []
        self.refused: list[int] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if collector.limit is not None and len(body) > collector.limit:
                    status = 413
                else:
                    status = collector.answers.pop(0) if collector.answers else 200
                if status == 200:
                    parsed = ExportTraceServiceRequest.FromString(body)
                    collector.took.append((len(body), parsed))
                else:
                    collector.refused.append(len(body))
                self.send_response(status)
                self.end_headers()
                said = b"request entity too large" if status == 413 else b"collector says no"
                self.wfile.write(b"" if status == 200 else said)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def bodies(self) -> list[list[Span]]:
        """The spans of each body taken, in order."""
        return [
            [s for r in req.resource_spans for ss in r.scope_spans for s in ss.spans]
            for _, req in self.took
        ]

    def spans(self) -> list[Span]:
        return [s for body in self.bodies() for s in body]


@pytest.fixture
def collector(settings) -> Iterator[Collector]:
    receiver = Collector()
    settings.OTLP_ENDPOINT = receiver.url
    settings.OTLP_HEADERS = {}
    settings.OTLP_BACKOFF_SECONDS = 0.01
    settings.OTLP_ATTEMPTS = 2
    settings.OTLP_BATCH_SPANS = 4  # a repo-fix run's 21 spans: six batches
    settings.OTLP_BATCH_BYTES = 1_048_576
    yield receiver
    receiver.httpd.shutdown()
    receiver.httpd.server_close()


def whole(run_id: str) -> dict[bytes, bytes]:
    """The run's trace, span for span, as the download gives it."""
    request = otlp_request(journal_traces.records(run_id), journal_traces.options())
    return {
        s.span_id: s.SerializeToString(deterministic=True)
        for r in request.resource_spans
        for ss in r.scope_spans
        for s in ss.spans
    }


def as_sent(spans: list[Span]) -> dict[bytes, bytes]:
    return {s.span_id: s.SerializeToString(deterministic=True) for s in spans}


def ids(spans: list[Span]) -> list[bytes]:
    return [s.span_id for s in spans]


def journalled(run_id: str) -> list:
    return [r.event for r in DjangoJournal().read(f"traces-{run_id}")]


def test_a_trace_goes_in_bounded_batches_each_span_once_and_each_batch_journalled(
    owner, settings, collector
):
    run_id = run_of("premature-done")
    assert trace_tasks.push(run_id) == "pushed"
    trace = whole(run_id)
    bodies = collector.bodies()
    assert len(bodies) == 6 and {len(b) for b in bodies} == {4, 1}
    sent = collector.spans()
    assert len(ids(sent)) == len(set(ids(sent)))  # no span twice
    assert as_sent(sent) == trace  # and the union is the trace, byte for byte
    events = journalled(run_id)
    batches = [e for e in events if isinstance(e, TraceBatchPushed)]
    assert [(b.spans, b.bytes) for b in batches] == [
        (len(body), size) for body, (size, _) in zip(bodies, collector.took, strict=True)
    ]
    assert [b.first for b in batches] == [0, 4, 8, 12, 16, 20]
    [done] = [e for e in events if isinstance(e, TracePushed)]
    assert (done.spans, done.bytes) == (len(trace), sum(b.bytes for b in batches))
    state = journal_traces.state(run_id)
    assert (state["state"], state["spans"]) == ("pushed", len(trace))

    # Bounded by bytes too: each body within the bound, however few spans it holds.
    settings.OTLP_BATCH_SPANS = 512
    settings.OTLP_BATCH_BYTES = 6_000
    collector.took.clear()
    assert traces.request_push(run_id, by="owner") == "queued"
    assert trace_tasks.push(run_id) == "pushed"  # a push asked for again sends it all again
    sizes = [size for size, _ in collector.took]
    assert len(sizes) > 1 and max(sizes) <= 6_000
    assert as_sent(collector.spans()) == trace and len(collector.spans()) == len(trace)


def test_a_push_that_failed_at_its_third_batch_sends_only_the_third_on_when_retried(
    owner, as_owner, collector
):
    run_id = run_of("premature-done")
    collector.answers = [200, 200, 401]
    assert trace_tasks.push(run_id) == "failed"
    first_two = collector.spans()
    assert len(first_two) == 8
    state = journal_traces.state(run_id)
    assert (state["state"], state["sent"]) == ("failed", 8)
    assert state["error"].startswith("HTTP 401: collector says no (8 spans reached")
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "8 spans reached the collector" in page

    assert as_owner.post(f"/runs/{run_id}/trace/push").status_code == 302
    assert journal_traces.state(run_id)["sent"] == 8  # queued again, 8 already there
    assert trace_tasks.push(run_id) == "pushed"
    sent = collector.spans()
    retried = sent[len(first_two) :]
    assert not set(ids(first_two)) & set(ids(retried))  # batches 1-2 not sent again
    assert len(ids(sent)) == len(set(ids(sent)))
    trace = whole(run_id)
    assert as_sent(sent) == trace
    state = journal_traces.state(run_id)
    assert (state["state"], state["spans"]) == ("pushed", len(trace))
    assert [b.first for b in journalled(run_id) if isinstance(b, TraceBatchPushed)] == [
        0,
        4,
        8,
        12,
        16,
        20,
    ]


class WorkerDied(Exception):
    """What a worker killed at that point would leave: the journal as it was, nothing more."""


def dies_after(monkeypatch, kind: str, nth: int) -> None:
    """The push's journal writes go through; right after the `nth` event of `kind` is
    written, the push stops, as a worker killed there would."""
    record = journal_traces.record
    seen = []

    def recorded(run_id: str, event) -> None:
        record(run_id, event)
        if event.kind == kind:
            seen.append(event)
            if len(seen) == nth:
                raise WorkerDied

    monkeypatch.setattr(journal_traces, "record", recorded)


def dies_before_it_ends(monkeypatch) -> None:
    """The push stops after its last batch is journalled, before its TracePushed is."""
    record = journal_traces.record

    def recorded(run_id: str, event) -> None:
        if event.kind == TracePushed.kind:
            raise WorkerDied
        record(run_id, event)

    monkeypatch.setattr(journal_traces, "record", recorded)


def test_a_push_whose_worker_died_between_batches_is_taken_up_from_the_next(
    owner, monkeypatch, collector
):
    run_id = run_of("premature-done")
    dies_after(monkeypatch, TraceBatchPushed.kind, 2)
    with pytest.raises(WorkerDied):
        trace_tasks.push(run_id)
    monkeypatch.undo()
    assert len(collector.took) == 2
    state = journal_traces.state(run_id)
    assert (state["state"], state["sent"]) == ("queued", 8)  # still waiting: redelivered
    assert trace_tasks.push(run_id) == "pushed"  # the message again, on another worker
    sent = collector.spans()
    assert len(collector.took) == 6  # four more bodies: batches 3 to 6
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)
    assert journal_traces.state(run_id)["spans"] == len(whole(run_id))


def test_a_push_that_sent_every_batch_and_died_sends_nothing_again(owner, monkeypatch, collector):
    run_id = run_of("premature-done")
    dies_before_it_ends(monkeypatch)
    with pytest.raises(WorkerDied):
        trace_tasks.push(run_id)
    monkeypatch.undo()
    assert len(collector.took) == 6
    assert trace_tasks.push(run_id) == "pushed"
    assert len(collector.took) == 6  # nothing was left to send
    state = journal_traces.state(run_id)
    assert (state["state"], state["spans"]) == ("pushed", len(whole(run_id)))


def test_a_decision_taken_before_the_push_is_taken_up_resends_what_the_fold_s_end_made(
    owner, monkeypatch, collector
):
    """A desk run ends with its conflict parked; its push dies after its last batch. A reviewer
    decides; the push taken up again sends the spans the decision changed (the wait, now
    decided, and the run's own span, which ends later), and not the others again."""
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "B-1"})
    assert drive(run_id) == "escalated"
    before = whole(run_id)
    dies_before_it_ends(monkeypatch)
    with pytest.raises(WorkerDied):
        trace_tasks.push(run_id)
    monkeypatch.undo()
    first = collector.spans()
    assert as_sent(first) == before
    [conflict] = Conflict.objects.filter(run_id=run_id)
    review.resolve(conflict.conflict_id, review.NONE, "rosa", "ask the customer")
    after = whole(run_id)
    changed = {span_id for span_id, span in after.items() if before.get(span_id) != span}
    assert changed  # the wait is decided now, and the run's span ends later

    assert trace_tasks.push(run_id) == "pushed"
    again = collector.spans()[len(first) :]
    assert set(ids(again)) == changed  # nothing else twice
    latest = {**as_sent(first), **as_sent(again)}
    assert latest == after  # a collector keeping the newest copy holds the trace as it is


def test_a_body_the_collector_finds_too_large_is_sent_again_in_halves(owner, settings, collector):
    settings.OTLP_BATCH_SPANS = 512  # the whole trace would go in one body
    collector.limit = 9_000
    run_id = run_of("premature-done")
    assert trace_tasks.push(run_id) == "pushed"
    assert collector.refused and collector.refused[0] > 9_000  # the whole trace, refused
    sizes = [size for size, _ in collector.took]
    assert len(sizes) > 2 and max(sizes) <= 9_000
    sent = collector.spans()
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)
    assert journal_traces.state(run_id)["state"] == "pushed"
    # The bound was lowered for the batches after the first refusal: not every one refused.
    assert len(collector.refused) < len(sizes)


def test_a_span_too_large_for_the_collector_alone_fails_the_push_saying_so(
    owner, settings, collector
):
    settings.OTLP_BATCH_SPANS = 512
    run_id = run_of("premature-done")
    largest = max(len(span) for span in whole(run_id).values())
    collector.limit = largest - 100  # the largest span cannot go, even alone
    assert trace_tasks.push(run_id) == "failed"
    state = journal_traces.state(run_id)
    error = state["error"]
    assert error.startswith("HTTP 413: request entity too large: the collector refused span ")
    refused_alone = collector.refused[-1]
    assert f"alone, a body of {refused_alone:,} bytes, as too large" in error
    assert "MINUTES_OTLP_CONTENT_CHARS" in error
    assert state["attempts"] == 1  # a 413 is not tried again as it was


def test_spans_that_went_live_are_left_out_of_every_batch(owner, settings, collector):
    settings.OTLP_LIVE = True
    settings.STEP_TURNS = 1
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    fly_live(run_id)
    live = collector.spans()
    assert live
    went_live = len(collector.took)
    assert trace_tasks.push(run_id) == "pushed"
    batched = [s for body in collector.bodies()[went_live:] for s in body]
    assert batched and all(len(body) <= 4 for body in collector.bodies()[went_live:])
    assert not set(ids(live)) & set(ids(batched))
    trace = whole(run_id)
    assert as_sent(live + batched) == trace
    state = journal_traces.state(run_id)
    assert (state["state"], state["spans"], state["live"]) == ("pushed", len(trace), len(live))


def test_a_push_past_its_window_leaves_the_rest_to_a_new_message(owner, collector):
    run_id = run_of("premature-done")
    outcomes = [traces.push(run_id, until=0.0)]  # past its window before it starts
    while outcomes[-1] == "continued":
        outcomes.append(traces.push(run_id, until=0.0))
    assert outcomes == ["continued"] * 5 + ["pushed"]  # a batch a message: it always goes on
    sent = collector.spans()
    assert len(ids(sent)) == len(set(ids(sent))) and as_sent(sent) == whole(run_id)
