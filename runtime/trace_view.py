"""A run's trace for people: lanes, bars, arrows and waits, folded by the OTLP export's fold.

The bars are the spans `runtime.otel.trace.Trace` builds for the export: the same class steps
through the same records, so the run page and the OTLP file cannot disagree about when a call
started, how long it took or whether it failed. Around them this module reads what a person
needs and a trace consumer does not: the messages as arrows from the sender's lane to the
recipient's (sent, then delivered), the specialists' hand-offs and reports, the deadlines that
passed and the waits for a person.

A long run is shown a window at a time (dashboard/trace.py reads one). The records given are
the window and a margin either side: before, so a tool call whose dispatch came just before the
window still starts where it started; after, so a call opened near the window's end is closed by
its answer. Each call belongs to the window that holds the event that opened its span (the
export's span ids say which), so windows side by side show every call once. A call still open
where the records end is drawn as going on, unless the run ends there, where the export's
verdict (unfinished) stands.

Plain Python, no Django, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from runtime.events import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    DeadlinePassed,
    Event,
    MessageDelivered,
    MessageSent,
    ReplyOverdue,
    RunForked,
    RunInterrupted,
    RunResumed,
    TaskEscalated,
    TeamStarted,
    WorkerHandedOff,
    WorkerReported,
    WorkerTimedOut,
)
from runtime.journal import Recorded
from runtime.otel.options import TraceOptions
from runtime.otel.spans import Span, nanos, span_id_of
from runtime.otel.trace import Trace
from runtime.otel.waits import Escalations

RUN_LANE = "run"  # what no agent did: the harness, the supervisor, and the people


@dataclass(frozen=True)
class Bar:
    """One model call or one attempt of a tool call: a span of the export."""

    span_id: str
    kind: str  # "chat" or "tool"
    lane: str
    name: str
    start: int  # nanoseconds since the epoch, as the span's
    end: int
    position: int  # the event that opened the span: the call's address on the page
    error: str | None
    going_on: bool  # not closed by the last record read, and the run goes on after it
    turn: int | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class Band:
    """An agent's run in its lane (its invoke_agent span), cut to the window."""

    lane: str
    start: int
    end: int
    outcome: str | None
    error: str | None


@dataclass(frozen=True)
class Arrow:
    """A message, a hand-off or a report: from the sender's lane when sent to the recipient's
    when delivered (at once when no delivery was recorded)."""

    sender: str
    recipient: str
    sent: int
    arrived: int
    label: str
    message_id: str | None = None


@dataclass(frozen=True)
class Mark:
    """A deadline that passed, or a wait (for a reply, for a person): from `since` (None: an
    instant) to `at`, in a lane."""

    lane: str
    at: int
    kind: str  # "deadline", "person", "escalated" (nobody is asked), or "fork" (the gap
    # before a fork went on)
    label: str
    since: int | None = None


@dataclass
class TraceView:
    """What the trace tab draws for one window of a run."""

    lanes: list[str]
    bars: list[Bar] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    run_start: int = 0  # the run's first event (TeamStarted), nanoseconds
    first: int = 0  # the window's first and last instants
    last: int = 0


# Waits for a person: what opens one, and what ends it (by the item's id field). An escalation
# opens its dead letter's wait, when one follows it (runtime/otel/waits.py, `Escalations`).
PERSON_OPENS: dict[type[Event], str] = {
    ConflictParked: "conflict_id",
    DeadLettered: "letter_id",
    RunInterrupted: "",
}
PERSON_ENDS: dict[type[Event], str] = {
    ConflictResolved: "conflict_id",
    DeadLetterRetried: "letter_id",
    DeadLetterDiscarded: "letter_id",
    RunResumed: "",
}


def fold(
    run_id: str,
    records: Sequence[Recorded],
    inside: tuple[int, int],
    lanes: Iterable[str] = (),
    goes_on: bool = False,
    options: TraceOptions | None = None,
    waits: Sequence[Recorded] = (),
) -> TraceView:
    """The window of positions `inside` (first, last) drawn from `records` (the window and
    its margins, in journal order, of the run's own and specialists' streams only).

    `waits`: the run's records on other streams that open or end a wait for a person in the
    window (a conflict parked on `conflict-<id>` and its decision, a dead letter of the
    control stream and its retry or discard): drawn as marks only, never folded as calls.

    `goes_on`: records follow the last one given (or the run is still active), so what is open
    at the end is going on, not unfinished. `lanes`: the run's agents, so that every window
    shows the same lanes in the same order.
    """
    low, high = inside
    # The drawing shows no content but the errors, as the export words them with content on
    # (scrubbed and bounded): the bars and bands say why a call or an agent failed.
    trace = Trace(run_id, options or TraceOptions(content=False), quote=True)
    for rec in records:
        trace.step(rec)
    open_before = {s.span_id for s in trace.spans if s.end is None}
    made = len(trace.spans)
    trace.finish()
    going = (open_before | {s.span_id for s in trace.spans[made:]}) if goes_on else set()

    window = [r for r in records if low <= r.position <= high]
    opened = {span_id_of(run_id, r, role): r.position for r in window for role in ("chat", "tool")}
    view = TraceView(lanes=list(dict.fromkeys([RUN_LANE, *lanes])))
    started = next((r.event for r in records if isinstance(r.event, TeamStarted)), None)
    view.run_start = nanos(started.t) if started else (trace.root.start if trace.root else 0)
    view.first = nanos(window[0].event.t) if window else view.run_start
    view.last = max([view.first, *(nanos(r.event.t) for r in window)])

    for span in trace.spans:
        bar = as_bar(span, opened, span.span_id in going)
        if bar is not None:
            view.bars.append(bar)
            view.last = max(view.last, bar.end)
    view.first = min([view.first, *(b.start for b in view.bars)])
    for span in trace.spans:
        band = as_band(span, view.first, view.last, span.span_id in going)
        if band is not None:
            view.bands.append(band)
    view.arrows = arrows(trace, records, window)
    seen = sorted([*window, *waits], key=lambda r: r.position)
    view.marks = marks(records, seen, view.last, goes_on)
    # A decision can come long after the run's last call (a conflict decided the next day):
    # the axis runs on to it, so the wait is drawn for as long as it lasted.
    view.last = max([view.last, *(m.at for m in view.marks)])
    for lane in (
        *(b.lane for b in view.bars),
        *(a.sender for a in view.arrows),
        *(a.recipient for a in view.arrows),
        *(m.lane for m in view.marks),
    ):
        if lane not in view.lanes:
            view.lanes.append(lane)
    return view


def as_bar(span: Span, opened: dict[str, int], going_on: bool) -> Bar | None:
    """The span as a bar, when it is a call opened inside the window."""
    position = opened.get(span.span_id)
    operation = span.attributes.get("gen_ai.operation.name")
    if position is None or operation not in ("chat", "execute_tool"):
        return None
    a = span.attributes
    return Bar(
        span_id=span.span_id,
        kind="chat" if operation == "chat" else "tool",
        lane=str(a.get("gen_ai.agent.name") or RUN_LANE),
        name=span.name,
        start=span.start,
        end=span.start if span.end is None else span.end,
        position=position,
        error=None if going_on else span.error,
        going_on=going_on,
        turn=a.get("minutes.turn"),
        tokens=a.get("minutes.usage.total_tokens"),
    )


def as_band(span: Span, first: int, last: int, going_on: bool) -> Band | None:
    """An agent's span, cut to the window; None for other spans and those outside it."""
    if span.parent_id is None or span.attributes.get("gen_ai.operation.name") != "invoke_agent":
        return None
    end = span.start if span.end is None else span.end
    if end < first or span.start > last:
        return None
    return Band(
        lane=str(span.attributes.get("gen_ai.agent.name") or RUN_LANE),
        start=max(span.start, first),
        end=min(end, last),
        outcome=None if going_on else span.attributes.get("minutes.agent.outcome"),
        error=None if going_on else span.error,
    )


def arrows(trace: Trace, records: Sequence[Recorded], window: list[Recorded]) -> list[Arrow]:
    """The window's messages, as the export's run span notes them, each to its delivery; and
    the specialists' hand-offs and reports, which travel as events rather than messages."""
    sent_here = {r.event.message_id for r in window if isinstance(r.event, MessageSent)}
    delivered: dict[tuple[str | None, str], int] = {}
    for rec in records:
        e = rec.event
        if isinstance(e, MessageDelivered) and not e.duplicate:
            delivered.setdefault((e.message_id, e.recipient), nanos(e.t))
    found: list[Arrow] = []
    notes = trace.root.events if trace.root is not None else []
    for at, name, what in notes:
        message_id = what.get("minutes.message_id")
        if name != "minutes.message" or message_id not in sent_here:
            continue
        recipient = str(what["minutes.recipient"])
        found.append(
            Arrow(
                sender=str(what["minutes.sender"]),
                recipient=recipient,
                sent=at,
                arrived=max(at, delivered.get((message_id, recipient), at)),
                label=str(what["minutes.performative"]),
                message_id=message_id,
            )
        )
    for rec in window:
        e = rec.event
        if isinstance(e, WorkerHandedOff):
            worker = str(e.handoff.get("worker_id") or "?")
            found.append(Arrow(RUN_LANE, worker, nanos(e.t), nanos(e.t), "HAND-OFF"))
        elif isinstance(e, WorkerReported):
            worker = str(e.report.get("worker_id") or "?")
            status = str(e.report.get("status") or "report").upper()
            found.append(Arrow(worker, RUN_LANE, nanos(e.t), nanos(e.t), f"REPORT {status}"))
    return found


def marks(
    records: Sequence[Recorded], window: list[Recorded], last: int, goes_on: bool
) -> list[Mark]:
    """Deadlines that passed in the window, with the wait they ended; waits for a person, from
    what parked the work to the decision (or to the window's end while none came); and
    escalations no dead letter followed, which nobody waits on (runtime/team.py, `park`): the
    export has no wait for them either."""
    asked = {
        r.event.message_id: nanos(r.event.t)
        for r in records
        if isinstance(r.event, MessageSent) and r.event.message_id
    }
    # Each dead letter's escalation, as the export finds it (runtime/otel/waits.py), read from
    # the margins too: a letter just inside the window waits from its escalation just outside.
    escalations: Escalations[Recorded] = Escalations()
    theirs: dict[int, Recorded] = {}  # by the letter's position
    for rec in records:
        if isinstance(rec.event, TaskEscalated):
            escalations.escalated(rec, rec)
        elif isinstance(rec.event, DeadLettered):
            escalation = escalations.lettered(rec)
            if escalation is not None:
                theirs[rec.position] = escalation
    lettered = {escalation.position for escalation in theirs.values()}
    found: list[Mark] = []
    waiting: dict[str, tuple[int, str]] = {}  # open waits for a person, by the item's id
    before: int | None = None  # the time of the window's record before this one
    for rec in window:
        e, at = rec.event, nanos(rec.event.t)
        if isinstance(e, RunForked):
            # A fork's copied events keep the parent's times: the gap up to the fork is the
            # time between the parent's event and the person's fork, when nobody worked.
            label = (
                f"forked from {e.parent} after its event #{e.number}: what comes before is the "
                "parent's, at the parent's times"
            )
            found.append(Mark(RUN_LANE, at, "fork", label, before))
        before = at
        if isinstance(e, DeadlinePassed):
            label = f"deadline passed: no reply from {e.awaited} to {e.request} ({e.reason})"
            found.append(Mark(e.awaited, at, "deadline", label, asked.get(e.request)))
        elif isinstance(e, ReplyOverdue):
            waited = f"{e.elapsed:.1f} s" if e.max_seconds else f"{e.turns} turns"
            label = f"reply overdue: {e.awaited} owed a reply to {e.request} after {waited}"
            found.append(Mark(e.awaited, at, "deadline", label, asked.get(e.request)))
        elif isinstance(e, WorkerTimedOut):
            label = f"no report from {e.worker_id} within {e.deadline_seconds:g} s"
            since = at - int(e.elapsed * 1_000_000_000)
            found.append(Mark(e.worker_id, at, "deadline", label, since))
        opens = PERSON_OPENS.get(type(e))
        if isinstance(e, TaskEscalated):
            if rec.position not in lettered:  # else its letter opens the wait, from here
                label = f"escalated, nobody is asked to decide (no dead letter follows): {e.reason}"
                found.append(Mark(RUN_LANE, at, "escalated", label))
        elif opens is not None:
            key = str(getattr(e, opens, "")) if opens else type(e).__name__
            # A letter's escalation: one wait, for one decision on the letter, from it.
            escalation = theirs.get(rec.position)
            begun = rec if escalation is None else escalation
            waiting[key] = (nanos(begun.event.t), person_reason(begun.event))
        ends = PERSON_ENDS.get(type(e))
        if ends is not None:
            key = str(getattr(e, ends, "")) if ends else RunInterrupted.__name__
            ended = waiting.pop(key, None)
            if ended is not None:
                found.append(Mark(RUN_LANE, at, "person", ended[1], ended[0]))
    for since, reason in waiting.values():
        still = "" if goes_on else " (no decision in the journal)"
        found.append(Mark(RUN_LANE, max(last, since), "person", reason + still, since))
    return found


def person_reason(e: Event) -> str:
    if isinstance(e, ConflictParked):
        return f"waiting for a person: conflict {e.conflict_id} on {e.subject}"
    if isinstance(e, DeadLettered):
        return f"waiting for a person: dead letter ({e.reason})"
    if isinstance(e, RunInterrupted):
        return f"stopped by {e.by}, waiting for a person to resume it"
    if isinstance(e, TaskEscalated):
        return f"escalated, waiting for a person: {e.reason}"
    return "waiting for a person"


# --- one call, as a chat ---------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One part of a message: text, a tool call (name, arguments) or a tool's response."""

    kind: str
    text: str
    name: str = ""


@dataclass(frozen=True)
class Said:
    role: str
    parts: list[Part]


@dataclass
class Call:
    """A model call or a tool call as the export's span holds it, ready to read."""

    kind: str  # "chat" or "tool"
    name: str
    agent: str
    position: int
    start: int
    end: int
    error: str | None
    attributes: dict[str, Any]
    prompt: list[Said] = field(default_factory=list)
    answer: list[Said] = field(default_factory=list)
    arguments: str = ""
    result: str = ""

    @property
    def latency_ms(self) -> float:
        return (self.end - self.start) / 1_000_000

    def facts(self) -> list[tuple[str, str]]:
        """What the span says of the call besides its content, as (label, value) to show."""
        a = self.attributes
        named = [
            ("task", "minutes.task_id"),
            ("turn", "minutes.turn"),
            ("model", "gen_ai.request.model"),
            ("answered by", "gen_ai.response.model"),
            ("tokens in", "gen_ai.usage.input_tokens"),
            ("tokens out", "gen_ai.usage.output_tokens"),
            ("tokens", "minutes.usage.total_tokens"),
            ("tool calls asked", "minutes.tool_calls"),
            ("stopped because", "gen_ai.response.finish_reasons"),
            ("window", "minutes.window.messages"),
            ("attempt", "minutes.tool.attempt"),
            ("call id", "gen_ai.tool.call.id"),
        ]
        found = []
        for label, key in named:
            value = a.get(key)
            if value is None:
                continue
            if isinstance(value, list):
                value = ", ".join(str(v) for v in value)
            if key == "minutes.window.messages":
                value = f"{value} messages, {a.get('minutes.window.chars')} characters"
            found.append((label, str(value)))
        return found


def pretty(text: Any) -> str:
    """JSON text indented to read (anything else as it is): tool arguments and results."""
    if not isinstance(text, str):
        return json.dumps(text, indent=2, ensure_ascii=False, default=str)
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def messages(text: Any) -> list[Said]:
    """The conventions' messages JSON (runtime/otel/content.py) as roles and parts."""
    if not isinstance(text, str):
        return []
    said = []
    for message in json.loads(text):
        parts = []
        for part in message.get("parts", []):
            kind = part.get("type", "text")
            if kind == "tool_call":
                parts.append(Part(kind, pretty(part.get("arguments", "")), part.get("name", "")))
            elif kind == "tool_call_response":
                parts.append(Part(kind, pretty(part.get("response", "")), part.get("id") or ""))
            else:
                parts.append(Part("text", str(part.get("content", ""))))
        said.append(Said(str(message.get("role", "?")), parts))
    return said


def call(
    run_id: str, records: Sequence[Recorded], at: Recorded, options: TraceOptions
) -> Call | None:
    """The call whose span `at` opened (a ModelCalled, a ModelResponded without one, a
    ToolReturned or a dispatch that never returned), folded from `records` by the export's fold
    with content on; None when `at` opens no call."""
    trace = Trace(run_id, options)
    for rec in records:
        trace.step(rec)
    trace.finish()
    wanted = {span_id_of(run_id, at, role) for role in ("chat", "tool")}
    span = next((s for s in trace.spans if s.span_id in wanted), None)
    if span is None:
        return None
    a = span.attributes
    chat = a.get("gen_ai.operation.name") == "chat"
    return Call(
        kind="chat" if chat else "tool",
        name=span.name,
        agent=str(a.get("gen_ai.agent.name") or RUN_LANE),
        position=at.position,
        start=span.start,
        end=span.start if span.end is None else span.end,
        error=span.error,
        attributes=a,
        prompt=messages(a.get("gen_ai.input.messages")),
        answer=messages(a.get("gen_ai.output.messages")),
        arguments=pretty(a.get("gen_ai.tool.call.arguments", "")),
        result=pretty(a.get("gen_ai.tool.call.result", "")),
    )
