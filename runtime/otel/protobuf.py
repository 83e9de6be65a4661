"""OTLP/protobuf encoding of a run's trace: what collectors that refuse JSON accept (Phoenix
answers 415 to OTLP/JSON on /v1/traces), built with the official `opentelemetry-proto`
definitions from the same spans as the JSON encoding.

Ids are bytes here (16 for a trace, 8 for a span), where OTLP/JSON writes them as hex: parsing
the JSON with protobuf's own JSON mapping would read the hex as base64 and silently give ids of
the wrong length, which is why this encoder builds the message itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from runtime.journal import Recorded
from runtime.otel.encode import build, resource
from runtime.otel.options import TraceOptions
from runtime.otel.trace import SCOPE_NAME, SCOPE_VERSION, Span, Trace

PROTOBUF_TYPE = "application/x-protobuf"


def fill(target: AnyValue, value: Any) -> None:
    if isinstance(value, bool):  # before int: a bool is an int to Python
        target.bool_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, list | tuple):
        for item in value:
            fill(target.array_value.values.add(), item)
    else:
        target.string_value = str(value)


def fill_attributes(target: Any, attributes: dict[str, Any]) -> None:
    """Attributes in the order they were set; unknown ones (None) are left out, as in JSON."""
    for key, value in attributes.items():
        if value is not None:
            kv: KeyValue = target.add()
            kv.key = key
            fill(kv.value, value)


def fill_span(target: SpanMessage, span: Span, trace_id: bytes) -> None:
    target.trace_id = trace_id
    target.span_id = bytes.fromhex(span.span_id)
    if span.parent_id is not None:
        target.parent_span_id = bytes.fromhex(span.parent_id)
    target.name = span.name
    target.kind = SpanMessage.SpanKind.ValueType(span.kind)
    target.start_time_unix_nano = span.start
    target.end_time_unix_nano = span.start if span.end is None else span.end
    fill_attributes(target.attributes, span.attributes)
    for at, name, attrs in span.events:
        event = target.events.add()
        event.time_unix_nano = at
        event.name = name
        fill_attributes(event.attributes, attrs)
    if span.error is None:
        target.status.code = Status.STATUS_CODE_UNSET
    else:
        target.status.code = Status.STATUS_CODE_ERROR
        target.status.message = span.error


def request(trace: Trace | None) -> ExportTraceServiceRequest:
    """The spans as one ExportTraceServiceRequest message."""
    out = ExportTraceServiceRequest()
    if trace is None:
        return out
    resource_spans = out.resource_spans.add()
    fill_attributes(resource_spans.resource.attributes, resource(trace.options))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = SCOPE_NAME
    scope_spans.scope.version = SCOPE_VERSION
    trace_id = bytes.fromhex(trace.trace_id)
    for span in trace.spans:
        fill_span(scope_spans.spans.add(), span, trace_id)
    return out


def otlp_request(
    records: Iterable[Recorded], options: TraceOptions | None = None
) -> ExportTraceServiceRequest:
    """One run's journal as an OTLP ExportTraceServiceRequest message (see `otlp_trace`)."""
    return request(build(records, options))


def otlp_protobuf(records: Iterable[Recorded], options: TraceOptions | None = None) -> bytes:
    """The same, serialized: the body of an OTLP/HTTP protobuf POST to /v1/traces.

    Deterministic: equal journals give equal bytes (protobuf writes fields in number order).
    """
    body: bytes = request(build(records, options)).SerializeToString(deterministic=True)
    return body
