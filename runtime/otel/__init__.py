"""A run's minutes as an OpenTelemetry trace, named by the GenAI semantic conventions.

trace.py    the fold: a run's journal (its own stream and its specialists') to spans
waits.py    the waits for a person in it (parked conflicts, dead letters), and which records
            of the conflict and control streams the fold takes
encode.py   the OTLP/JSON encoding and the entry points, `otlp_trace`, `otlp_json` and
            `otlp_json_chunks` (streamed), and `folded` (the spans as they become final)
protobuf.py the OTLP/protobuf encoding (official definitions), `otlp_protobuf`, `otlp_request`
            and `otlp_protobuf_chunks` (streamed)
push.py     the push of a protobuf trace to an OTLP/HTTP collector, with retries (the network)
batches.py  the whole trace's push in bounded bodies, encoded as the spans come, passing over
            what the collector has (live pushes, an earlier try's batches)
options.py  what a deployment chooses: the project, and whether (and how much) content goes in

Plain Python like the rest of the runtime: no Django; no clock and no network but in push.py.
"""

from runtime.otel.encode import UNTIMED, otlp_json, otlp_json_chunks, otlp_trace, untimed
from runtime.otel.options import DEFAULT_CONTENT_CHARS, DEFAULT_PROJECT, TraceOptions
from runtime.otel.protobuf import (
    PROTOBUF_TYPE,
    otlp_protobuf,
    otlp_protobuf_chunks,
    otlp_request,
)
from runtime.otel.spans import STATUS_ERROR, STATUS_UNSET, nanos

__all__ = [
    "DEFAULT_CONTENT_CHARS",
    "DEFAULT_PROJECT",
    "PROTOBUF_TYPE",
    "STATUS_ERROR",
    "STATUS_UNSET",
    "UNTIMED",
    "TraceOptions",
    "nanos",
    "otlp_json",
    "otlp_json_chunks",
    "otlp_protobuf",
    "otlp_protobuf_chunks",
    "otlp_request",
    "otlp_trace",
    "untimed",
]
