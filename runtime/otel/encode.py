"""OTLP/JSON encoding of a run's trace (runtime/otel/trace.py builds the spans)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime.journal import Recorded
from runtime.otel.options import TraceOptions
from runtime.otel.text import trace_text
from runtime.otel.trace import (
    SCOPE_NAME,
    SCOPE_VERSION,
    STATUS_ERROR,
    STATUS_UNSET,
    Span,
    Trace,
)


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


def export(trace: Trace) -> dict[str, Any]:
    """The spans as one ExportTraceServiceRequest, in OTLP/JSON's shape."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": encode_attributes(resource(trace.options))},
                "scopeSpans": [
                    {
                        "scope": {"name": SCOPE_NAME, "version": SCOPE_VERSION},
                        "spans": [encode_span(s, trace.trace_id) for s in trace.spans],
                    }
                ],
            }
        ]
    }


def otlp_trace(records: Iterable[Recorded], options: TraceOptions | None = None) -> dict[str, Any]:
    """One run's journal as an OTLP/JSON ExportTraceServiceRequest.

    Only the run's own stream (`run-<id>`) and its specialists' (`worker-<id>-...`) are read:
    the lease, control and effect streams say
    how the run was driven, not what its agents did. The first run stream met names the run;
    records of any other run are ignored. No run stream at all gives a request with no spans.
    """
    trace = build(records, options)
    return {"resourceSpans": []} if trace is None else export(trace)


def build(records: Iterable[Recorded], options: TraceOptions | None = None) -> Trace | None:
    """The run's spans, folded from its records (None when no run stream is among them)."""
    trace: Trace | None = None
    for rec in records:
        if trace is None and rec.stream.startswith("run-"):
            trace = Trace(rec.stream.removeprefix("run-"), options)
        if trace is not None and (
            rec.stream == trace.stream or rec.stream.startswith(f"worker-{trace.run_id}-")
        ):
            trace.step(rec)  # the run's own stream, and its parallel specialists' streams
    if trace is not None:
        trace.finish()
    return trace


def otlp_json(records: Iterable[Recorded], options: TraceOptions | None = None) -> str:
    """The same as compact JSON text: equal journals give equal bytes. Written straight to text
    (runtime/otel/text.py), equal to `json.dumps` of `otlp_trace` with compact separators."""
    trace = build(records, options)
    if trace is None:
        return trace_text(None, {}, {})
    scope = {"name": SCOPE_NAME, "version": SCOPE_VERSION}
    return trace_text(trace, resource(trace.options), scope)
