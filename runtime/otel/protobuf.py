"""OTLP/protobuf encoding of a run's trace: what collectors that refuse JSON accept (Phoenix
answers 415 to OTLP/JSON on /v1/traces), built with the official `opentelemetry-proto`
definitions from the same spans as the JSON encoding.

Ids are bytes here (16 for a trace, 8 for a span), where OTLP/JSON writes them as hex: parsing
the JSON with protobuf's own JSON mapping would read the hex as base64 and silently give ids of
the wrong length, which is why this encoder builds the message itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from runtime.journal import Recorded
from runtime.otel.encode import CHUNK_SPANS, folded, resource
from runtime.otel.options import TraceOptions
from runtime.otel.spans import SCOPE_NAME, SCOPE_VERSION, Link, Span
from runtime.otel.trace import Trace

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
    for link in span.links:
        linked = target.links.add()
        linked.trace_id = bytes.fromhex(link.trace_id)
        linked.span_id = bytes.fromhex(link.span_id)
        fill_attributes(linked.attributes, link.attributes)
    if span.error is None:
        target.status.code = Status.STATUS_CODE_UNSET
    else:
        target.status.code = Status.STATUS_CODE_ERROR
        target.status.message = span.error


def head(trace: Trace) -> tuple[ExportTraceServiceRequest, Any]:
    """A request holding the resource and scope of the trace, and its ScopeSpans to fill."""
    out = ExportTraceServiceRequest()
    return out, add_resource_spans(out, trace)


def add_resource_spans(out: ExportTraceServiceRequest, trace: Trace) -> Any:
    """A ResourceSpans added to the request, with the trace's resource and scope; its
    ScopeSpans, to fill with spans."""
    resource_spans = out.resource_spans.add()
    fill_attributes(resource_spans.resource.attributes, resource(trace.options))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = SCOPE_NAME
    scope_spans.scope.version = SCOPE_VERSION
    return scope_spans


def otlp_request(
    records: Iterable[Recorded], options: TraceOptions | None = None
) -> ExportTraceServiceRequest:
    """One run's journal as an OTLP ExportTraceServiceRequest message (see `otlp_trace`): its
    spans in ResourceSpans of CHUNK_SPANS spans each, all with the run's resource and scope
    (OTLP lets a request repeat them; a consumer files every span under its resource)."""
    out = ExportTraceServiceRequest()
    scope_spans: Any = None
    trace_id = b""
    for count, (trace, span) in enumerate(folded(records, options)):
        if count % CHUNK_SPANS == 0:
            scope_spans = add_resource_spans(out, trace)
            trace_id = bytes.fromhex(trace.trace_id)
        fill_span(scope_spans.spans.add(), span, trace_id)
    return out


# --- serialized as the spans come --------------------------------------------------------------
# Protobuf writes a message's fields in number order, each embedded message as its tag, its
# length and its bytes, and a repeated field as one such entry per element. So the request's
# bytes are, for each ResourceSpans: its tag, its length, its resource, then its ScopeSpans (tag,
# length, scope), then one (tag, length, bytes) per span; and a span's bytes are its own fields,
# then one entry per attribute, then its events and status. Every leaf (the span's own fields,
# a KeyValue, the status) is the official message's serialization; the lengths and tags
# around them are written here. A ResourceSpans holds CHUNK_SPANS spans, so its lengths are
# known once its last span is in: the request is written a chunk at a time, and a long run's
# trace streams in flat memory. Equal to serializing `otlp_request`'s message whole
# (tests/runtime/test_otel_protobuf.py holds the bytes equal, and the official parser reads
# them back).

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


RESOURCE_SPANS = tag(1)  # ExportTraceServiceRequest.resource_spans
RESOURCE = 1  # ResourceSpans.resource
SCOPE_SPANS = tag(2)  # ResourceSpans.scope_spans
SCOPE = 1  # ScopeSpans.scope
SPANS = tag(2)  # ScopeSpans.spans
TRACE_ID = 1  # Span.trace_id
ATTRIBUTES = 9  # Span.attributes; the fields before it are the span's own, after it its
# events (11) and status (15)
_PAIRS: dict[tuple[str, Any], bytes] = {}  # attributes as bytes: short strings and ints only
SHORT = 80
MAX_CACHED = 4_096


def attribute_bytes(key: str, value: Any) -> bytes:
    """One attribute as Span.attributes holds it: its field's tag, length and KeyValue bytes.
    Short string values repeat from span to span (run id, operation, agent and model names),
    and so do small numbers and short lists (finish reasons, an agent's tools): those are
    serialized once."""
    kind = type(value)
    if kind is list or kind is tuple:
        found = cached_list(key, value)
        if found is not None:
            return found
    short = (kind is str and len(value) <= SHORT) or kind is int  # not bool: True == 1
    if short:
        known = _PAIRS.get((key, value))
        if known is not None:
            return known
    kv = KeyValue(key=key)
    if kind is str:  # most values (a setter is quicker than an AnyValue built and copied in)
        kv.value.string_value = value
    else:
        fill(kv.value, value)
    out = framed(ATTRIBUTES, kv.SerializeToString(deterministic=True))
    if short:
        remember((key, value), out)
    return out


def remember(key: tuple[str, Any], out: bytes) -> None:
    if len(_PAIRS) >= MAX_CACHED:
        _PAIRS.clear()
    _PAIRS[key] = out


def cached_list(key: str, value: list[Any] | tuple[Any, ...]) -> bytes | None:
    """A short list of strings' attribute bytes, serialized once (None for other lists)."""
    if len(value) > 8 or not all(type(v) is str and len(v) <= SHORT for v in value):
        return None
    cache_key = (key, ("list", *value))  # never equal to a string's or an int's key
    known = _PAIRS.get(cache_key)
    if known is None:
        kv = KeyValue(key=key)
        fill(kv.value, value)
        known = framed(ATTRIBUTES, kv.SerializeToString(deterministic=True))
        remember(cache_key, known)
    return known


EVENTS = tag(11)  # Span.events
LINKS = 13  # Span.links
EVENT_ATTRIBUTES = 3  # Span.Event.attributes, after its time (1) and name (2)
_EVENT_PAIRS: dict[tuple[str, Any], bytes] = {}  # as _PAIRS, for events' attributes


def event_bytes(at: int, name: str, attributes: dict[str, Any]) -> bytes:
    """One entry of Span.events: the official Event's time and name, then its attributes one
    by one (short ones serialized once: a run's messages repeat their performatives, senders
    and recipients)."""
    parts = [SpanMessage.Event(time_unix_nano=at, name=name).SerializeToString(deterministic=True)]
    for key, value in attributes.items():
        if value is None:
            continue
        kind = type(value)
        short = (kind is str and len(value) <= SHORT) or kind is int
        known = _EVENT_PAIRS.get((key, value)) if short else None
        if known is None:
            kv = KeyValue(key=key)
            fill(kv.value, value)
            known = framed(EVENT_ATTRIBUTES, kv.SerializeToString(deterministic=True))
            if short:
                if len(_EVENT_PAIRS) >= MAX_CACHED:
                    _EVENT_PAIRS.clear()
                _EVENT_PAIRS[(key, value)] = known
        parts.append(known)
    body = b"".join(parts)
    return EVENTS + varint(len(body)) + body


def link_bytes(link: Link) -> bytes:
    """One entry of Span.links: the official Link's serialization, framed."""
    linked = SpanMessage.Link(
        trace_id=bytes.fromhex(link.trace_id), span_id=bytes.fromhex(link.span_id)
    )
    fill_attributes(linked.attributes, link.attributes)
    return framed(LINKS, linked.SerializeToString(deterministic=True))


def unset_status() -> bytes:
    rest = SpanMessage()
    rest.status.code = Status.STATUS_CODE_UNSET
    out: bytes = rest.SerializeToString(deterministic=True)
    return out


UNSET_STATUS = unset_status()


def span_parts(span: Span, trace_field: bytes, out: list[bytes]) -> int:
    """Append the span's bytes to `out` in parts, as `fill_span` then serializing would give
    them: the trace id's field (the same for every span: `trace_field`), the span's other own
    fields (2-8), its attributes one by one (9), its events and status (11, 15). Returns
    their length."""
    # Set field by field: quicker than the same as constructor arguments.
    own = SpanMessage()
    own.span_id = bytes.fromhex(span.span_id)
    own.name = span.name
    own.kind = SpanMessage.SpanKind.ValueType(span.kind)
    own.start_time_unix_nano = span.start
    own.end_time_unix_nano = span.start if span.end is None else span.end
    if span.parent_id is not None:
        own.parent_span_id = bytes.fromhex(span.parent_id)
    if span.error is None:
        tail = UNSET_STATUS  # most spans
    else:
        rest = SpanMessage()
        rest.status.code = Status.STATUS_CODE_ERROR
        rest.status.message = span.error
        tail = rest.SerializeToString(deterministic=True)
    if span.events or span.links:  # the run's span: its messages (11) and the run it was
        # forked from (13) come before its status (15)
        events = [event_bytes(*event) for event in span.events]
        tail = b"".join([*events, *(link_bytes(link) for link in span.links), tail])
    start = len(out)
    append = out.append
    append(trace_field)
    append(own.SerializeToString(deterministic=True))
    pairs = _PAIRS
    for k, v in span.attributes.items():
        if v is None:
            continue
        # The cache's hits looked up here, without a call: most of a span's attributes.
        kind = type(v)
        known = pairs.get((k, v)) if kind is int or (kind is str and len(v) <= SHORT) else None
        append(attribute_bytes(k, v) if known is None else known)
    append(tail)
    return sum(map(len, out[start:]))


def span_serialized(span: Span, trace_id: bytes) -> bytes:
    """The span's bytes, as `fill_span` then serializing would give."""
    parts: list[bytes] = []
    span_parts(span, framed(TRACE_ID, trace_id), parts)
    return b"".join(parts)


def otlp_protobuf(records: Iterable[Recorded], options: TraceOptions | None = None) -> bytes:
    """The same, serialized: the body of an OTLP/HTTP protobuf POST to /v1/traces.

    Deterministic: equal journals give equal bytes (protobuf writes fields in number order).
    """
    return serialized(folded(records, options))


def otlp_protobuf_chunks(
    records: Iterable[Recorded], options: TraceOptions | None = None
) -> Iterator[bytes]:
    """The same bytes a ResourceSpans (CHUNK_SPANS spans) at a time, written as the spans
    become final: memory stays flat however long the run (a download streams them)."""
    return serialized_chunks(folded(records, options))


def serialized(spans: Iterable[tuple[Trace, Span]]) -> bytes:
    """A request of these spans (all of one trace), serialized."""
    return b"".join(serialized_chunks(spans))


def serialized_chunks(spans: Iterable[tuple[Trace, Span]]) -> Iterator[bytes]:
    """A request of these spans, a ResourceSpans of up to CHUNK_SPANS spans at a time: the
    request's bytes are the chunks one after another (an empty request is no bytes)."""
    heads: tuple[bytes, bytes] | None = None
    trace_field = b""
    parts: list[bytes] = []
    size = count = 0
    for trace, span in spans:
        if heads is None:
            heads = chunk_heads(trace)
            trace_field = framed(TRACE_ID, bytes.fromhex(trace.trace_id))
        at = len(parts)
        parts.append(SPANS)
        parts.append(b"")  # the span's length, once its parts are in
        n = span_parts(span, trace_field, parts)
        length = varint(n)
        parts[at + 1] = length
        size += 1 + len(length) + n
        count += 1
        if count == CHUNK_SPANS:
            yield resource_spans(heads, parts, size)
            parts, size, count = [], 0, 0
    if count:
        assert heads is not None
        yield resource_spans(heads, parts, size)


def chunk_heads(trace: Trace) -> tuple[bytes, bytes]:
    """A ResourceSpans' resource field, and its ScopeSpans' scope field: the official
    messages of `head`, serialized once per request."""
    out, _ = head(trace)
    [resource_spans] = out.resource_spans
    [scope_spans] = resource_spans.scope_spans
    return (
        framed(RESOURCE, resource_spans.resource.SerializeToString(deterministic=True)),
        framed(SCOPE, scope_spans.scope.SerializeToString(deterministic=True)),
    )


def resource_spans(heads: tuple[bytes, bytes], spans: list[bytes], size: int) -> bytes:
    """One ResourceSpans entry of the request: `spans` (their parts, `size` bytes in all)
    under the resource and the scope."""
    resource, scope = heads
    scope_head = SCOPE_SPANS + varint(len(scope) + size) + scope
    resource_size = len(resource) + len(scope_head) + size
    spans[0:0] = (RESOURCE_SPANS, varint(resource_size), resource, scope_head)
    return b"".join(spans)
