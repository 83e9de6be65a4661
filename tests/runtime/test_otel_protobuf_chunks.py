"""The protobuf trace is written a ResourceSpans of CHUNK_SPANS spans at a time, its framing
written here around the official messages' bytes: the chunks, one after another, are the
bytes of the official serialization of the whole request, which the official parser reads
back, span for span the JSON export's."""

from __future__ import annotations

import math

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.otel import TraceOptions, otlp_protobuf, otlp_request, otlp_trace, protobuf
from runtime.otel.protobuf import otlp_protobuf_chunks

RUNS = [("flaky-tool", "repo-fix"), ("broken-policy", "support-triage")]


@pytest.fixture(params=RUNS, ids=[s for s, _ in RUNS])
def records(request, fly_team):
    scenario, team = request.param
    flown = fly_team(scenario, team=team)
    return flight.run_records(JsonlJournal(flown.path), flown.run_id)


@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_the_chunks_are_the_official_serialization_of_the_whole_request(
    records, monkeypatch, chunk
):
    monkeypatch.setattr(protobuf, "CHUNK_SPANS", chunk)
    options = TraceOptions(project="chunked")
    request = otlp_request(records, options)
    official = request.SerializeToString(deterministic=True)
    chunks = list(otlp_protobuf_chunks(records, options))
    assert b"".join(chunks) == official == otlp_protobuf(records, options)
    assert request.SerializeToString() == official  # the default serialization too
    spans = otlp_trace(records, options)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(chunks) == len(request.resource_spans) == math.ceil(len(spans) / chunk)
    parsed = ExportTraceServiceRequest()
    parsed.ParseFromString(official)
    assert parsed == request
    for resource_spans in parsed.resource_spans:  # each chunk names the project and scope
        [scope_spans] = resource_spans.scope_spans
        assert scope_spans.scope.name == "minutes.runtime.otel"
        attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
        assert attributes["service.name"] == "chunked"
        assert 0 < len(scope_spans.spans) <= chunk
    got = [s for r in parsed.resource_spans for s in r.scope_spans[0].spans]
    assert [(s.span_id.hex(), s.name) for s in got] == [(s["spanId"], s["name"]) for s in spans]
    for one in chunks:  # each chunk alone is a request of its spans
        assert len(ExportTraceServiceRequest.FromString(one).resource_spans) == 1
