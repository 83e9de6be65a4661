"""The trace as OTLP protobuf: the official definitions parse it into the same request as the
JSON export, with ids as bytes of the right length, and equal journals give equal bytes."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.otel import TraceOptions, otlp_json, otlp_protobuf, otlp_trace

RUNS = [
    ("first-flight", "repo-fix"),
    ("flaky-tool", "repo-fix"),
    ("broken-policy", "support-triage"),
]


def records_of(flown):
    return flight.run_records(JsonlJournal(flown.path), flown.run_id)


def as_json_shape(parsed: ExportTraceServiceRequest) -> dict[str, Any]:
    """The parsed message in OTLP/JSON's shape: ids back to hex, an unset status written out."""
    doc = MessageToDict(parsed, use_integers_for_enums=True)
    for resource in doc["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
                span["status"].setdefault("code", 0)
    return doc


@pytest.mark.parametrize(("scenario", "team"), RUNS)
def test_the_official_definitions_read_the_same_trace_as_the_json_export(fly_team, scenario, team):
    records = records_of(fly_team(scenario, team=team))
    options = TraceOptions(project="interop")
    parsed = ExportTraceServiceRequest.FromString(otlp_protobuf(records, options))
    [resource] = parsed.resource_spans
    [scope] = resource.scope_spans
    assert len(scope.spans) > 10
    for span in scope.spans:
        assert len(span.trace_id) == 16 and len(span.span_id) == 8
        assert len(span.parent_span_id) in (0, 8)
    assert as_json_shape(parsed) == otlp_trace(records, options)


def test_equal_journals_give_equal_bytes_and_no_run_gives_an_empty_request(fly_team):
    flown = fly_team("flaky-tool")
    again = JsonlJournal(flown.path).read(f"run-{flown.run_id}")
    assert otlp_protobuf(flown.records) == otlp_protobuf(again)
    assert otlp_json(flown.records) == otlp_json(again)
    assert ExportTraceServiceRequest.FromString(otlp_protobuf([])) == ExportTraceServiceRequest()
