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
from runtime.otel.encode import folded, resource
from runtime.otel.options import TraceOptions
from runtime.otel.spans import Span
from runtime.otel.trace import SCOPE_NAME, SCOPE_VERSION, Trace

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
    add = target.add
    for key, value in attributes.items():
        if value is None:
            continue
        kv: KeyValue = add(key=key)
        if type(value) is str:  # most values: a quick way past fill's checks
            kv.value.string_value = value
        else:
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


def head(trace: Trace) -> tuple[ExportTraceServiceRequest, Any]:
    """A request holding the resource and scope of the trace, and its ScopeSpans to fill."""
    out = ExportTraceServiceRequest()
    resource_spans = out.resource_spans.add()
    fill_attributes(resource_spans.resource.attributes, resource(trace.options))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = SCOPE_NAME
    scope_spans.scope.version = SCOPE_VERSION
    return out, scope_spans


def otlp_request(
    records: Iterable[Recorded], options: TraceOptions | None = None
) -> ExportTraceServiceRequest:
    """One run's journal as an OTLP ExportTraceServiceRequest message (see `otlp_trace`)."""
    out: ExportTraceServiceRequest | None = None
    scope_spans: Any = None
    trace_id = b""
    for trace, span in folded(records, options):
        if out is None:
            out, scope_spans = head(trace)
            trace_id = bytes.fromhex(trace.trace_id)
        fill_span(scope_spans.spans.add(), span, trace_id)
    return out or ExportTraceServiceRequest()


# --- serialized as the spans come --------------------------------------------------------------
# Protobuf writes a message's fields in number order, each embedded message as its tag, its
# length and its bytes. So the request's bytes are those of its resource and scope, then one
# (tag, length, bytes) per span: each span is serialized alone as it becomes final, and only
# the outer lengths wait for the last one. Equal to serializing the whole message at once
# (tests/runtime/test_otel_protobuf.py holds them equal), without holding the message.

LEN = 2  # the wire type of a length-delimited field


def tag(field: int) -> bytes:
    return bytes([field << 3 | LEN])


def varint(n: int) -> bytes:
    if n < SMALL:
        return _VARINTS[n]
    return varint_of(n)


def varint_of(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


SMALL = 1 << 14  # lengths below this (two bytes of varint) are looked up, not computed
_VARINTS = [varint_of(n) for n in range(SMALL)]


def framed(field: int, body: bytes) -> bytes:
    return tag(field) + varint(len(body)) + body


SPANS = 2  # ScopeSpans.spans
SCOPE_SPANS = 2  # ResourceSpans.scope_spans
RESOURCE_SPANS = 1  # ExportTraceServiceRequest.resource_spans


ATTRIBUTES = 9  # Span.attributes; the fields before it are the span's own, after it its
# events (11) and status (15)
_PAIRS: dict[tuple[str, Any], bytes] = {}  # attributes as bytes: short strings and ints only
SHORT = 80
MAX_CACHED = 4_096


def attribute_bytes(key: str, value: Any) -> bytes:
    """One attribute as Span.attributes holds it: its field's tag, length and KeyValue bytes.
    Short string values repeat from span to span (run id, operation, agent and model names),
    and so do small numbers: those are serialized once."""
    kind = type(value)
    short = (kind is str and len(value) <= SHORT) or kind is int  # not bool: True == 1
    if short:
        known = _PAIRS.get((key, value))
        if known is not None:
            return known
    kv = KeyValue(key=key)
    fill(kv.value, value)
    out = framed(ATTRIBUTES, kv.SerializeToString(deterministic=True))
    if short:
        if len(_PAIRS) >= MAX_CACHED:
            _PAIRS.clear()
        _PAIRS[(key, value)] = out
    return out


def unset_status() -> bytes:
    rest = SpanMessage()
    rest.status.code = Status.STATUS_CODE_UNSET
    out: bytes = rest.SerializeToString(deterministic=True)
    return out


UNSET_STATUS = unset_status()


def span_serialized(span: Span, trace_id: bytes) -> bytes:
    """The span's bytes, as `fill_span` then serializing would give: its own fields (1-8),
    then its attributes one by one (9), then its events and status (11, 15), each part an
    official message's serialization, joined in field order as protobuf writes them."""
    own = SpanMessage(
        trace_id=trace_id,
        span_id=bytes.fromhex(span.span_id),
        name=span.name,
        kind=SpanMessage.SpanKind.ValueType(span.kind),
        start_time_unix_nano=span.start,
        end_time_unix_nano=span.start if span.end is None else span.end,
    )
    if span.parent_id is not None:
        own.parent_span_id = bytes.fromhex(span.parent_id)
    if span.events or span.error is not None:
        rest = SpanMessage()
        for at, name, attrs in span.events:
            event = rest.events.add(time_unix_nano=at, name=name)
            fill_attributes(event.attributes, attrs)
        if span.error is None:
            rest.status.code = Status.STATUS_CODE_UNSET
        else:
            rest.status.code = Status.STATUS_CODE_ERROR
            rest.status.message = span.error
        tail = rest.SerializeToString(deterministic=True)
    else:
        tail = UNSET_STATUS  # most spans: no events, status unset
    attributes = []
    for k, v in span.attributes.items():
        if v is None:
            continue
        # The cache's hits looked up here, without a call: most of a span's attributes.
        kind = type(v)
        short = kind is int or (kind is str and len(v) <= SHORT)
        known = _PAIRS.get((k, v)) if short else None
        attributes.append(attribute_bytes(k, v) if known is None else known)
    return b"".join(
        (
            own.SerializeToString(deterministic=True),
            *attributes,
            tail,
        )
    )


def otlp_protobuf(records: Iterable[Recorded], options: TraceOptions | None = None) -> bytes:
    """The same, serialized: the body of an OTLP/HTTP protobuf POST to /v1/traces.

    Deterministic: equal journals give equal bytes (protobuf writes fields in number order).
    """
    return serialized(folded(records, options))


def serialized(spans: Iterable[tuple[Trace, Span]]) -> bytes:
    """A request of these spans (all of one trace), serialized one span at a time."""
    parts: list[bytes] = []
    first: Trace | None = None
    trace_id = b""
    for trace, span in spans:
        if first is None:
            first, trace_id = trace, bytes.fromhex(trace.trace_id)
        body = span_serialized(span, trace_id)
        parts.append(tag(SPANS) + varint(len(body)) + body)
    if first is None:
        return b""  # an empty request serializes to nothing
    out, _ = head(first)
    [resource_spans] = out.resource_spans
    [scope_spans] = resource_spans.scope_spans
    scope = framed(1, scope_spans.scope.SerializeToString(deterministic=True))
    spans_size = sum(len(p) for p in parts)
    scope_size = len(scope) + spans_size
    resource = framed(1, resource_spans.resource.SerializeToString(deterministic=True))
    scope_head = tag(SCOPE_SPANS) + varint(scope_size) + scope
    resource_size = len(resource) + len(scope_head) + spans_size
    head_bytes = tag(RESOURCE_SPANS) + varint(resource_size) + resource + scope_head
    parts.insert(0, head_bytes)
    return b"".join(parts)
