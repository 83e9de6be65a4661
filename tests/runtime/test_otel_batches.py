"""The whole push's batches (runtime/otel/batches.py), without a database or a network: the
spans numbered as `folded` hands them out, cut into bodies within the bounds that the official
parser reads back, every span in exactly one; spans taken already passed over; a body refused
as too large sent again in halves."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.otel import TraceOptions, otlp_request
from runtime.otel.batches import Batch, Batches, Limits, Numbering, Taken, deliver
from runtime.otel.encode import folded
from runtime.otel.push import PushFailed, PushResult

RUNS = [("flaky-tool", "repo-fix"), ("broken-policy", "support-triage")]
OPTIONS = TraceOptions(project="batched")


@pytest.fixture(params=RUNS, ids=[s for s, _ in RUNS])
def run(request, fly_team):
    scenario, team = request.param
    flown = fly_team(scenario, team=team)
    return flown.run_id, flight.traced_records(JsonlJournal(flown.path), flown.run_id)


def official(records) -> list[bytes]:
    request = otlp_request(records, OPTIONS)
    return [
        s.SerializeToString(deterministic=True)
        for r in request.resource_spans
        for ss in r.scope_spans
        for s in ss.spans
    ]


def parsed(body: bytes) -> list[bytes]:
    request = ExportTraceServiceRequest.FromString(body)
    [resource_spans] = request.resource_spans  # one resource and scope a body
    attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert attributes["service.name"] == "batched"
    [scope_spans] = resource_spans.scope_spans
    return [s.SerializeToString(deterministic=True) for s in scope_spans.spans]


def test_the_numbering_is_the_order_folded_hands_the_spans_out_in(run):
    run_id, records = run
    numbering = Numbering(run_id, records, OPTIONS)
    numbered = list(numbering)
    assert [f.index for f in numbered] == list(range(len(numbered))) and numbering.total
    assert [f.span for f in numbered] == [span for _, span in folded(records, OPTIONS)]
    ats = [f.at for f in numbered]
    assert ats[-1] is None  # the run's own span: the fold's end makes it final
    made = [at for at in ats if at is not None]
    assert made == sorted(made) and all(at is None for at in ats[len(made) :])
    assert numbering.newest == max(r.position for r in numbering.traced(records))


@pytest.mark.parametrize(("spans", "size"), [(1, 1_048_576), (3, 1_048_576), (512, 8_000)])
def test_batches_are_within_bounds_and_hold_every_span_once(run, spans, size):
    run_id, records = run
    batches = list(Batches(Numbering(run_id, records, OPTIONS), Taken(), Limits(spans, size)))
    bodies = [batch.body() for batch in batches]
    assert [len(body) for body in bodies] == [batch.size() for batch in batches]
    for batch, body in zip(batches, bodies, strict=True):
        assert len(batch) <= spans
        assert len(body) <= size or len(batch) == 1  # a span larger than the bound goes alone
    assert [span for body in bodies for span in parsed(body)] == official(records)


def test_spans_taken_already_are_passed_over(run):
    run_id, records = run
    every = official(records)
    n = len(every)
    last = max(r.position for r in records)
    # Spans 0-1 went live; an earlier batch took 2-4 from a fold of the whole journal.
    taken = Taken(live=[(0, 2)], batches=[(2, 3, last)])
    sending = Batches(Numbering(run_id, records, OPTIONS), taken, Limits(4, 1_048_576))
    got = [span for batch in sending for span in parsed(batch.body())]
    assert got == every[5:]
    assert (sending.live, sending.resumed) == (2, 3)
    # A batch numbered by a fold that stopped short of the journal's end: only the spans that
    # records up to there made final are the ones it sent; the fold's end makes the others
    # anew (here the run's span, the last, is sent again).
    earlier = Taken(batches=[(0, n, last - 1)])
    again = Batches(Numbering(run_id, records, OPTIONS), earlier, Limits(4, 1_048_576))
    resent = [span for batch in again for span in parsed(batch.body())]
    assert resent and resent == every[n - len(resent) :]
    assert every[-1] in resent


def test_a_body_refused_as_too_large_goes_again_in_halves_down_to_one_span(run):
    run_id, records = run
    every = official(records)
    [batch] = Batches(Numbering(run_id, records, OPTIONS), Taken(), Limits(512, 1_048_576))
    limit = max(len(b) for b in every) * 3  # three of the largest spans at most
    took: list[tuple[Batch, int]] = []
    posts = []

    def send(body: bytes) -> PushResult:
        posts.append(len(body))
        if len(body) > limit:
            raise PushFailed("HTTP 413", 413, 1)
        return PushResult(200, 1)

    limits = Limits(512, 1_048_576)
    deliver(batch, send, lambda b, size, result: took.append((b, size)), limits)
    assert [span for b, _ in took for span in parsed(b.body())] == every
    assert all(size <= limit for _, size in took)
    assert limits.bytes <= posts[0] // 2  # the batches after it are built smaller

    def refuses_the_largest(body: bytes) -> PushResult:
        if len(body) >= max(len(b) for b in every):
            raise PushFailed("HTTP 413: too large", 413, 1)
        return PushResult(200, 1)

    with pytest.raises(PushFailed) as failed:
        deliver(batch, refuses_the_largest, lambda b, size, result: None, Limits(512, 1 << 20))
    assert failed.value.status == 413
    assert "alone, a body of " in str(failed.value) and "as too large" in str(failed.value)
