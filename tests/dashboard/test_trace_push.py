"""A run that ends pushes its trace to the configured OTLP collector, from a worker, as protobuf:
a real HTTP receiver in a thread takes it. A collector that fails then recovers gets it on a
later attempt; one that refuses it leaves a journalled failure the run page shows with a retry
button; past the queue's bound a push is refused and recorded, never dropped silently."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from journal_store import traces as journal_traces
from journal_store.journal import DjangoJournal
from runtime import flight
from runtime.events import TracePushQueued
from runtime.otel import otlp_protobuf
from services import runs, traces
from tasks import traces as trace_tasks
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver:
    """A collector on loopback: answers each POST with the next of `answers` (then 200), and
    keeps what it was sent, decoded with the official definitions."""

    def __init__(self) -> None:
        self.answers: list[int] = []
        self.got: list[tuple[str, dict[str, str], ExportTraceServiceRequest]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = receiver.answers.pop(0) if receiver.answers else 200
                if status == 200:
                    parsed = ExportTraceServiceRequest.FromString(body)
                    receiver.got.append((self.path, dict(self.headers), parsed))
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()
                self.wfile.write(b"" if status == 200 else b"collector says no")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def collector(settings) -> Iterator[Receiver]:
    receiver = Receiver()
    settings.OTLP_ENDPOINT = receiver.url
    settings.OTLP_HEADERS = {"authorization": "Bearer team-secret"}
    settings.OTLP_BACKOFF_SECONDS = 0.01
    settings.OTLP_ATTEMPTS = 4
    settings.OTLP_PROJECT = "pushed-runs"
    yield receiver
    receiver.httpd.shutdown()
    receiver.httpd.server_close()


def kinds(run_id: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(f"traces-{run_id}")]


def test_a_run_that_ends_queues_a_push_and_the_worker_sends_it_as_protobuf(owner, collector):
    run_id = run_of("premature-done")
    assert kinds(run_id) == ["TracePushQueued"]  # the step only queued it
    assert collector.got == []
    assert trace_tasks.push(run_id) == "pushed"  # what the worker runs
    [(path, headers, parsed)] = collector.got
    assert path == "/v1/traces"
    assert headers["Content-Type"] == "application/x-protobuf"
    assert headers["Authorization"] == "Bearer team-secret"
    records = flight.run_records(DjangoJournal(), run_id)
    assert parsed.SerializeToString(deterministic=True) == otlp_protobuf(
        records, journal_traces.options()
    )
    spans = parsed.resource_spans[0].scope_spans[0].spans
    assert {len(s.trace_id) for s in spans} == {16}
    assert parsed.resource_spans[0].resource.attributes[0].value.string_value == "pushed-runs"
    assert kinds(run_id) == ["TracePushQueued", "TraceBatchPushed", "TracePushed"]  # one batch
    state = journal_traces.state(run_id)
    assert state is not None and (state["state"], state["spans"]) == ("pushed", len(spans))
    assert trace_tasks.push(run_id) == "skipped"  # a second delivery sends nothing
    assert len(collector.got) == 1


def test_a_collector_that_fails_then_recovers_gets_the_trace_on_a_later_attempt(owner, collector):
    run_id = run_of("premature-done")
    collector.answers = [503, 502]
    assert trace_tasks.push(run_id) == "pushed"
    assert len(collector.got) == 1
    assert journal_traces.state(run_id)["attempts"] == 3


def test_a_refused_push_is_shown_on_the_run_page_and_retried_from_it(
    owner, outsider, as_owner, as_outsider, collector
):
    run_id = run_of("premature-done")
    collector.answers = [401]  # not retried: credentials do not fix themselves
    assert trace_tasks.push(run_id) == "failed"
    state = journal_traces.state(run_id)
    assert state["state"] == "failed" and state["attempts"] == 1
    assert state["error"] == "HTTP 401: collector says no"
    assert collector.got == []
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "Trace push failed after 1 attempt: HTTP 401: collector says no" in page
    assert "Retry push" in page and f"/runs/{run_id}/trace/push" in page

    refused = as_outsider.post(f"/runs/{run_id}/trace/push")
    assert refused.status_code == 403
    assert "Only who started this run, or a reviewer, may push its trace." in refused.text
    assert kinds(run_id) == ["TracePushQueued", "TracePushFailed"]
    assert as_owner.post(f"/runs/{run_id}/trace/push").status_code == 302
    assert kinds(run_id)[-1] == "TracePushQueued"
    assert DjangoJournal().read(f"traces-{run_id}")[-1].event.by == "owner"
    assert trace_tasks.push(run_id) == "pushed"
    assert len(collector.got) == 1
    assert "Trace pushed (" in as_owner.get(f"/runs/{run_id}/").content.decode()


def test_an_unreachable_collector_is_retried_then_recorded(owner, settings, collector):
    run_id = run_of("premature-done")
    collector.httpd.shutdown()
    collector.httpd.server_close()
    assert trace_tasks.push(run_id) == "failed"
    state = journal_traces.state(run_id)
    assert state["attempts"] == 4 and "could not reach the collector" in state["error"]


def test_past_the_queue_s_bound_a_push_is_refused_and_recorded(owner, settings, collector):
    settings.OTLP_QUEUE = 1
    journal_traces.record("r-elsewhere", TracePushQueued(endpoint=collector.url))
    run_id = run_of("premature-done")  # its end finds the queue full
    assert kinds(run_id) == ["TracePushFailed"]
    state = journal_traces.state(run_id)
    assert state["attempts"] == 0 and "1 pushes are already waiting" in state["error"]
    assert trace_tasks.push(run_id) == "skipped" and collector.got == []


def test_the_api_asks_for_a_push_and_says_why_it_cannot(owner, token, settings, collector):
    run_id = run_of("premature-done")
    assert trace_tasks.push(run_id) == "pushed"
    api = Client()
    api.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"  # a reviewer's: may steer any run
    asked = api.post(f"/api/runs/{run_id}/otlp/push")
    assert (asked.status_code, asked.json()) == (202, {"detail": "queued"})
    assert trace_tasks.push(run_id) == "pushed" and len(collector.got) == 2
    running = run_of("premature-done", steps=1)
    refused = api.post(f"/api/runs/{running}/otlp/push")
    assert refused.status_code == 409 and "pushed once it has ended" in refused.json()["detail"]
    settings.OTLP_ENDPOINT = ""
    off = api.post(f"/api/runs/{run_id}/otlp/push")
    assert off.status_code == 409 and "MINUTES_OTLP_ENDPOINT" in off.json()["detail"]
    assert kinds(running) == [] and len(collector.got) == 2


def test_without_a_collector_nothing_is_queued(owner, settings):
    settings.OTLP_ENDPOINT = ""
    run_id = run_of("premature-done")
    assert kinds(run_id) == []
    assert traces.request_push(run_id) == "off"


def test_a_run_ended_by_a_discarded_dead_letter_is_pushed_without_a_person_asking(
    owner, settings, monkeypatch, collector
):
    """A step that kept failing is dead-lettered; a person discards the letter, which ends the
    run with no step to end it: the discard itself queues the push."""
    from services import letters, steps
    from services.control import Control

    run_id = runs.start_run("repo-fix", "first-flight", by="owner")

    def broken(*args, **kwargs):
        raise RuntimeError("the harness hit a bug")

    monkeypatch.setattr(flight, "drive", broken)
    for _ in range(settings.MAX_STEP_ATTEMPTS):
        assert steps.drive_step(run_id, "test") == "failed-step"
    assert steps.drive_step(run_id, "test") == "dead-lettered"
    assert kinds(run_id) == []  # not over: a person may still retry it
    letter = Control(run_id).open_letter()
    letters.decide_letter(letter.letter_id, "discard", "owner", "not worth another try")
    assert runs.status_of(run_id) in ("escalated", "discarded")
    assert kinds(run_id) == ["TracePushQueued"]
    assert trace_tasks.push(run_id) == "pushed"
    [(_path, _headers, parsed)] = collector.got
    [root] = [s for s in parsed.resource_spans[0].scope_spans[0].spans if not s.parent_span_id]
    assert root.status.message.startswith("discarded by owner: not worth another try")
