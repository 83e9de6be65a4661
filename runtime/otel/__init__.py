"""A run's minutes as an OpenTelemetry trace, named by the GenAI semantic conventions.

trace.py    the fold: a run's journal (its own stream and its specialists') to spans
encode.py   the OTLP/JSON encoding and the entry points, `otlp_trace` and `otlp_json`
options.py  what a deployment chooses: the project, and whether (and how much) content goes in

Plain Python like the rest of the runtime: no Django, no clock, no network.
"""

from runtime.otel.encode import otlp_json, otlp_trace
from runtime.otel.options import TraceOptions
from runtime.otel.trace import STATUS_ERROR, STATUS_UNSET, nanos

__all__ = ["STATUS_ERROR", "STATUS_UNSET", "TraceOptions", "nanos", "otlp_json", "otlp_trace"]
