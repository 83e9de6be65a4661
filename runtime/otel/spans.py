"""The pieces of a trace: its vocabulary (span kinds, statuses, providers, a model's
attributes), spans as they are built, ids derived from the journal, and the small readings of
events the span fold (runtime/otel/trace.py) and the run page's trace share."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from runtime import streams
from runtime.events import Event, ModelResponded, ToolDispatched, ToolReturned, Usage
from runtime.journal import Recorded
from runtime.openai_client import GENAI_PROVIDER, OLD_BACKEND_NAMES


def nanos(t: float) -> int:
    """Seconds since the epoch as integer nanoseconds. Goes through the float's shortest decimal
    form, because multiplying the float by 1e9 smears its last digits. 0 means "not recorded"."""
    if not math.isfinite(t) or t <= 0:
        return 0
    text = repr(t)
    whole, dot, fraction = text.partition(".")
    if dot and len(fraction) <= 9 and "e" not in fraction:
        # The decimal form's digits, shifted: what Decimal gives, at a fraction of its cost
        # (a long run's trace reads one time per event).
        return int(whole) * 1_000_000_000 + int(fraction.ljust(9, "0"))
    return int(Decimal(text) * 1_000_000_000)


def hex_id(text: str, chars: int) -> str:
    """A deterministic id of `chars` hex digits. OTLP reads an all-zero id as "no id"."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:chars]
    return digest if int(digest, 16) else digest[:-1] + "1"


# --- the trace's vocabulary -------------------------------------------------------------------

SCOPE_NAME = "minutes.runtime.otel"
SCOPE_VERSION = "1"

# OTLP's enums travel as integers in its JSON encoding.
KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_UNSET = 0
STATUS_ERROR = 2

# The error.type of a span whose closing event the journal does not hold.
UNFINISHED = "unfinished"
# The error.type of a run that answered, but with an answer that says what it lacks.
DEGRADED = "degraded"


# Provider names as the GenAI conventions spell them, by backend; and the model a backend uses
# when the settings name none.
PROVIDERS = {"scripted": "minutes", "endpoint": GENAI_PROVIDER, "local": GENAI_PROVIDER}
DEFAULT_MODELS = {"scripted": "scripted", "local": "local"}


# --- the spans being built ---------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A span of another trace that a span follows from (OTLP's Span.Link): its ids, hex."""

    trace_id: str
    span_id: str
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Span:
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start: int
    end: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # the status message; None leaves the status unset
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)  # spans of other traces it follows from
    supervised: bool = False  # a specialist's run: final only once its supervisor has spoken

    def fail(self, error_type: str, message: str) -> None:
        self.attributes["error.type"] = error_type
        self.error = message

    def close(self, at: int, error_type: str | None = None, message: str = "") -> None:
        if error_type is not None:
            self.fail(error_type, message)
        self.end = at


@dataclass
class ToolCall:
    """A dispatched tool call, waiting for its attempts to come back."""

    dispatched: Recorded
    since: int  # where the next attempt starts: the dispatch, then each failed attempt's return
    attempts: int = 0


@dataclass
class AgentRun:
    """One agent's run that has not stopped yet, and its calls that are under way."""

    span: Span
    last: int  # when the agent last did anything: where a model call without ModelCalled starts
    model_call: Span | None = None
    tools: dict[str, ToolCall] = field(default_factory=dict)
    # The conversation as the journal holds it (content only): the task, then each answer,
    # each tool's response and each nudge, each message as its JSON text (encoded once,
    # however many windows it is in). A model call's input is its newest part that fit the
    # window; what no later window can show is pruned (runtime/otel/conversation.py).
    history: list[str] = field(default_factory=list)
    widest: int = 0  # the most messages after the task a model call's input showed
    # The last answer, where it asked for more calls than a turn runs: its place in the
    # history and the message with the calls that would run, until the loop's nudge says so.
    ran: tuple[int, str] | None = None
    # Tool calls' arguments as the model gave them, and cleaned, by call id (content only).
    asked: dict[str, tuple[Any, str]] = field(default_factory=dict)


def span_id_of(run_id: str, rec: Recorded, role: str) -> str:
    """The span the event `rec` opens in `role` ("chat", "tool", "agent", ...): derived from
    where the event sits, so every export of a run (and the run page's trace) names it alike."""
    return hex_id(f"{run_id}/{rec.stream}#{rec.version}/{role}", 16)


def trace_id_of(run_id: str) -> str:
    """The run's trace id: from its id alone, so any run's trace is named without reading it."""
    return hex_id(f"minutes/{run_id}", 32)


def run_span_id(run_id: str) -> str:
    """The id of the run's own span, without reading its journal: the span is opened by the
    first event of the run's stream, and every store numbers a stream's events from 1."""
    return hex_id(f"{run_id}/{streams.journal(run_id)}#1/run", 16)


def agent_name(event: Event) -> str:
    return event.agent or "?"  # as the bill names events of no agent


def usage_attributes(usage: Usage) -> dict[str, Any]:
    """What a model call cost, as its span says it: an answer's, or a failure's that was paid
    for (a reply that could not be used, a pick before an outage), as the bill counts both.
    The split is known when the vendor (or the script) reports it; the total always is.
    Journals from before scripts split their totals have none."""
    return {
        "gen_ai.usage.input_tokens": usage.prompt,
        "gen_ai.usage.output_tokens": usage.completion,
        "minutes.usage.total_tokens": usage.total,
    }


def finish_reasons(e: ModelResponded) -> list[str] | None:
    """Why the model stopped: what the vendor said, else what the answer shows (calls or not);
    unknown for a v1 response, which recorded no answer."""
    if e.served is not None and e.served.finish_reason:
        return [e.served.finish_reason]
    if e.tool_calls is None:
        return None
    return ["tool_calls" if e.tool_calls else "stop"]


def reported_failure(report: Any) -> tuple[str, str] | None:
    """The error type of a specialist's report that says it failed, and what the report says
    of why (its words: the trace quotes them as content, `Trace.status_text`), else None.

    Reports are typed (runtime/fanout/contracts.py): status "failed" with a reason code, and
    in `degraded` what is missing. Results of other agents are free-form: only that shape counts.
    """
    if not isinstance(report, dict) or report.get("status") != "failed":
        return None
    reason = report.get("reason")
    why = report.get("degraded") or reason or "no reason given"
    return (str(reason or "failed"), str(why))


def agent_id(run_id: str, agent: str) -> str:
    """An agent's id in the conventions' sense: its role, within this run."""
    return f"{run_id}/{agent}"


def call_key(event: ToolDispatched | ToolReturned) -> str:
    # Reference journals carry no call ids: there, a return belongs to the last dispatch of
    # the same tool.
    return event.call_id or f"tool:{event.tool}"


def model_attributes(config: dict[str, Any], agent: str) -> dict[str, Any]:
    """What a run's recorded settings say of the agent's model.

    The provider is named as the GenAI conventions name them, not by our backend's name: an
    endpoint or a local server speaks the OpenAI-compatible protocol (whoever serves it), and
    the client module names that protocol's provider; a script is Minutes' own. The backend
    stays in `minutes.model.backend`. The model's name is the one the settings recorded,
    "scripted" for a script, "local" for the local server.
    """
    models = config.get("models") or {}
    backend = models.get(agent) or config.get("model")
    if backend is None:
        return {}
    backend = OLD_BACKEND_NAMES.get(backend, backend)  # its name in older journals
    provider = PROVIDERS.get(backend, backend)
    names = config.get("model_names") or {}
    named = (
        None
        if backend == "scripted"
        else (names.get(agent) if backend == "endpoint" else None) or config.get("model_name")
    )
    return {
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,  # the attribute's older name, still read by many tools
        "gen_ai.request.model": named or DEFAULT_MODELS.get(backend),
        "minutes.model.backend": backend,
    }
