"""OTLP/JSON encoding of a run's trace (runtime/otel/trace.py builds the spans)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from runtime.journal import Recorded
from runtime.otel.options import TraceOptions
from runtime.otel.spans import (
    SCOPE_NAME,
    SCOPE_VERSION,
    STATUS_ERROR,
    STATUS_UNSET,
    Span,
    nanos,
)
from runtime.otel.text import EMPTY, SCOPE, TAIL, span_text, trace_head
from runtime.otel.trace import Trace
from runtime.otel.waits import waits_on

CHUNK_SPANS = 256  # spans a streamed export gives at a time (about 0.5 MB of JSON)


def encode_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 travels as a string in OTLP/JSON
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [encode_value(v) for v in value]}}
    return {"stringValue": str(value)}


def encode_attributes(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    """Attributes in the order they were set; unknown ones (None) are left out, not faked."""
    return [{"key": k, "value": encode_value(v)} for k, v in attributes.items() if v is not None]


def encode_span(span: Span, trace_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": trace_id, "spanId": span.span_id}
    if span.parent_id is not None:
        out["parentSpanId"] = span.parent_id
    out.update(
        {
            "name": span.name,
            "kind": span.kind,
            "startTimeUnixNano": str(span.start),
            "endTimeUnixNano": str(span.start if span.end is None else span.end),
            "attributes": encode_attributes(span.attributes),
        }
    )
    if span.events:
        out["events"] = [
            {"timeUnixNano": str(at), "name": name, "attributes": encode_attributes(attrs)}
            for at, name, attrs in span.events
        ]
    if span.links:
        out["links"] = [
            {
                "traceId": link.trace_id,
                "spanId": link.span_id,
                "attributes": encode_attributes(link.attributes),
            }
            for link in span.links
        ]
    if span.error is None:
        out["status"] = {"code": STATUS_UNSET}
    else:
        out["status"] = {"code": STATUS_ERROR, "message": span.error}
    return out


# --- the entry points --------------------------------------------------------------------------


def resource(options: TraceOptions) -> dict[str, Any]:
    """Who sent the spans: the project a consumer files them under (Phoenix reads the
    OpenInference attribute, most others `service.name`)."""
    return {"service.name": options.project, "openinference.project.name": options.project}


def export(trace: Trace, spans: Iterable[Span]) -> dict[str, Any]:
    """The spans as one ExportTraceServiceRequest, in OTLP/JSON's shape."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": encode_attributes(resource(trace.options))},
                "scopeSpans": [
                    {
                        "scope": {"name": SCOPE_NAME, "version": SCOPE_VERSION},
                        "spans": [encode_span(s, trace.trace_id) for s in spans],
                    }
                ],
            }
        ]
    }


def otlp_trace(records: Iterable[Recorded], options: TraceOptions | None = None) -> dict[str, Any]:
    """One run's journal as an OTLP/JSON ExportTraceServiceRequest.

    Only the run's own stream (`run-<id>`) and its specialists' (`worker-<id>-...`) are read,
    and of its control stream and the conflicts it parked only what opens or ends a wait for a
    person (runtime/otel/waits.py): the lease and effect streams, and the rest of the control
    stream, say how the run was driven, not what its agents did. The first run stream met
    names the run; records of any other run are ignored. No run stream at all gives a request
    with no spans. Spans come in the order they became final (trace.py): children before
    their parents.
    """
    trace: Trace | None = None
    spans: list[Span] = []
    for found, span in folded(records, options):
        trace = found
        spans.append(span)
    return {"resourceSpans": []} if trace is None else export(trace, spans)


# What the entry points (the command line, the dashboard's download and push) say of a journal
# that records no time at all, rather than export it: a span is placed in time, and each would
# start and end at 0, which every consumer shows as 1 January 1970.
UNTIMED = (
    'the journal records no times: none of the run\'s events has a time ("t"), as the lines '
    "of the reference runtime's abridged journals have none; a trace's spans would all start "
    "and end at 0 (1 January 1970), so no trace is made of it"
)


def untimed(records: Iterable[Recorded]) -> bool:
    """Whether the records (some) hold no time at all (`nanos` reads 0 as "not recorded").
    Stops at the first time it finds: a journal written by a runtime has one at its first
    event. Events without a time among timed ones take the time before them, as the fold does."""
    found = False
    for rec in records:
        if nanos(rec.event.t) > 0:
            return False
        found = True
    return found


def runs_in(trace: Trace, rec: Recorded) -> bool:
    """Whether the record is the run's: its own stream, a parallel specialist's, or a wait for
    a person on a conflict's or the control stream."""
    return (
        rec.stream == trace.stream
        or rec.stream.startswith(f"worker-{trace.run_id}-")
        or waits_on(trace.run_id, rec)
    )


def build(records: Iterable[Recorded], options: TraceOptions | None = None) -> Trace | None:
    """The run's spans, every one kept in the order opened (None when no run stream is among
    the records): for readers that want the whole tree at once, such as the run page."""
    trace: Trace | None = None
    for rec in records:
        if trace is None and rec.stream.startswith("run-"):
            trace = Trace(rec.stream.removeprefix("run-"), options)
        if trace is not None and runs_in(trace, rec):
            trace.step(rec)
    if trace is not None:
        trace.finish()
    return trace


def folded(
    records: Iterable[Recorded], options: TraceOptions | None = None, finish: bool = True
) -> Iterator[tuple[Trace, Span]]:
    """The run's spans as they become final, each with its trace, holding none of them.

    With `finish` False, the spans the journal leaves open (the run's own, agents still at
    work) are not closed and not given: what a live push may send while the run goes on.
    """
    trace: Trace | None = None
    for rec in records:
        if trace is None and rec.stream.startswith("run-"):
            trace = Trace(rec.stream.removeprefix("run-"), options, keep=False, live=not finish)
        if trace is not None and runs_in(trace, rec):
            trace.step(rec)
            if trace.ready:
                for span in trace.take():
                    yield trace, span
    if trace is not None and finish:
        trace.finish()
        for span in trace.take():
            yield trace, span


def otlp_json_chunks(
    records: Iterable[Recorded], options: TraceOptions | None = None
) -> Iterator[str]:
    """The compact OTLP/JSON text in pieces of CHUNK_SPANS spans, written as the spans
    become final: memory stays flat however long the run (a download streams them)."""
    trace: Trace | None = None
    parts: list[str] = []
    size = 0
    for trace, span in folded(records, options):
        # The head once the run is known (its first span), then a comma before each span.
        parts.append(trace_head(resource(trace.options), SCOPE) if size == 0 else ",")
        text = span_text(span, trace.trace_id)
        parts.append(text)
        size += len(text)
        if len(parts) >= CHUNK_SPANS:
            yield "".join(parts)
            parts = []
    if trace is None:
        yield EMPTY
        return
    parts.append(TAIL)
    yield "".join(parts)


def otlp_json(records: Iterable[Recorded], options: TraceOptions | None = None) -> str:
    """The same as one compact JSON text: equal journals give equal bytes. Written straight to
    text (runtime/otel/text.py), equal to `json.dumps` of `otlp_trace` with compact separators."""
    return "".join(otlp_json_chunks(records, options))
