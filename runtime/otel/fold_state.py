"""A live span fold's state as text, so that a live push folds only the events since the last.

A live push (services/traces.py) hands out the spans made final since the previous one. Folding
the run's journal from its start each time would cost the run's length at every step; instead
the fold's state is stored (journal_store/trace_fold.py) and the next push steps it with the new
events only. The state is what later events still need, and no more: the run's span (open until
the end; a live fold keeps none of its message events), the agents at work (their spans, the
model call and tool calls under way, the conversation a later input can show, the arguments
asked for), the specialists' spans waiting for their supervisor's report, the waits for a
person not yet decided and the escalations no dead letter followed yet, the run's settings and
the clock.
Spans already handed out are not in it. Its size is that of what is under way, not of the run.

`dump` and `load` are exact inverses on what the fold reads: a fold loaded from a dump hands out
the same spans as the fold that was dumped (tests/runtime/test_otel_fold_state.py, at every
prefix of a journal). A text this module cannot read as a state of this run and these options
raises FoldStateError: the caller folds the journal again from its start, never trusting it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from runtime import flat
from runtime.journal import Recorded
from runtime.otel.encode import runs_in
from runtime.otel.options import TraceOptions
from runtime.otel.spans import AgentRun, Link, Span, ToolCall
from runtime.otel.trace import Trace

# raise it when what the state holds changes: older states are then rebuilt (2: the waits for
# a person still open, and an escalation no dead letter followed yet; 3: a span's links, the
# run's to the run it was forked from; 4: every escalation no dead letter followed, by where
# it was written, where 2 held the last one's time only; 5: an agent's conversation with the
# loop's nudges, and an answer's calls that ran until its nudge: a state of 4 holds no nudge;
# 6: the conversation pruned to what a later input can show, with the widest input shown: a
# state of 5 holds the whole conversation, never pruned)
FORMAT = 6


class FoldStateError(ValueError):
    """The stored text is not a state of this fold: of another run, options or format, or
    corrupt."""


def _span(span: Span) -> list[Any]:
    return [
        span.span_id,
        span.parent_id,
        span.name,
        span.kind,
        span.start,
        span.end,
        span.attributes,
        span.error,
        [[at, name, attrs] for at, name, attrs in span.events],
        span.supervised,
        [[link.trace_id, link.span_id, link.attributes] for link in span.links],
    ]


def _span_of(data: list[Any]) -> Span:
    span_id, parent_id, name, kind, start, end, attributes, error, events, supervised, links = data
    if not (isinstance(attributes, dict) and isinstance(span_id, str) and isinstance(kind, int)):
        raise FoldStateError("a span's fields are not what a span holds")
    span = Span(span_id, parent_id, name, kind, start, end, attributes, error)
    span.events = [(at, n, attrs) for at, n, attrs in events]
    span.supervised = bool(supervised)
    span.links = [Link(trace, linked, dict(attrs)) for trace, linked, attrs in links]
    return span


def _record(rec: Recorded) -> list[Any]:
    return [rec.position, flat.dumps(rec.event, rec.stream, rec.version)]


def _record_of(data: list[Any]) -> Recorded:
    position, line = data
    parsed = flat.loads(line, 0)
    if parsed.stream is None or parsed.version is None:
        raise FoldStateError("a stored record has no place in the journal")
    return Recorded(parsed.stream, parsed.version, position, parsed.event)


def _agent(run: AgentRun) -> dict[str, Any]:
    return {
        "span": _span(run.span),
        "last": run.last,
        "model_call": None if run.model_call is None else _span(run.model_call),
        "tools": [
            [key, _record(call.dispatched), call.since, call.attempts]
            for key, call in run.tools.items()
        ],
        "history": run.history,
        "widest": run.widest,
        "ran": None if run.ran is None else list(run.ran),
        "asked": [[call_id, raw, cleaned] for call_id, (raw, cleaned) in run.asked.items()],
    }


def _agent_of(data: dict[str, Any]) -> AgentRun:
    run = AgentRun(_span_of(data["span"]), data["last"])
    if data["model_call"] is not None:
        run.model_call = _span_of(data["model_call"])
    for key, dispatched, since, attempts in data["tools"]:
        run.tools[key] = ToolCall(_record_of(dispatched), since, attempts)
    run.history = list(data["history"])
    run.widest = int(data["widest"])
    ran = data["ran"]
    run.ran = None if ran is None else (int(ran[0]), str(ran[1]))
    run.asked = {call_id: (raw, cleaned) for call_id, raw, cleaned in data["asked"]}
    return run


def _options(options: TraceOptions) -> list[Any]:
    return [options.project, options.content, options.content_chars]


def dump(trace: Trace) -> str:
    """The live fold's state as JSON text; its spans made final must have been taken."""
    if not trace.live or trace.ready or trace.keep:
        raise ValueError("only a live fold whose final spans were taken can be stored")
    state = {
        "format": FORMAT,
        "run_id": trace.run_id,
        "options": _options(trace.options),
        "now": trace.now,
        "paused": trace.paused,
        "degraded": trace.degraded,
        "config": trace.config,
        "root": None if trace.root is None else _span(trace.root),
        "agents": [[name, _agent(run)] for name, run in trace.agents.items()],
        "stopped": [[name, task, _span(span)] for (name, task), span in trace.stopped.items()],
        "waits": [[key, _span(span)] for key, span in trace.waits.open.items()],
        "escalated": [
            [stream, task, agent, reason, at]
            for (stream, task, agent), (reason, at) in trace.waits.escalated.pending.items()
        ],
    }
    # ASCII: a lone surrogate a tool printed survives the database's UTF-8.
    return json.dumps(state, separators=(",", ":"))


def load(text: str, run_id: str, options: TraceOptions) -> Trace:
    """The live fold `dump` stored, for this run and these options; FoldStateError when the
    text is not one."""
    try:
        state = json.loads(text)
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise FoldStateError("not a span fold's state of this format")
        if state["run_id"] != run_id:
            raise FoldStateError(f"the state is run {state['run_id']!r}'s, not {run_id!r}'s")
        if state["options"] != _options(options):
            raise FoldStateError("the state was folded with other trace options")
        trace = Trace(run_id, options, keep=False, live=True)
        trace.now = int(state["now"])
        trace.paused = state["paused"]
        trace.degraded = state["degraded"]
        trace.config = dict(state["config"])
        trace.root = None if state["root"] is None else _span_of(state["root"])
        trace.agents = {name: _agent_of(run) for name, run in state["agents"]}
        trace.stopped = {(name, task): _span_of(span) for name, task, span in state["stopped"]}
        trace.waits.open = {key: _span_of(span) for key, span in state["waits"]}
        trace.waits.escalated.pending = {
            (stream, task, agent): (reason, int(at))
            for stream, task, agent, reason, at in state["escalated"]
        }
    except FoldStateError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        # json's and the events' errors (ValueErrors), a field missing or of the wrong shape,
        # an unpacking of the wrong length
        raise FoldStateError(
            f"the stored state is unreadable: {type(exc).__name__}: {exc}"
        ) from None
    return trace


class LiveFold:
    """A live fold of one run and the spans it handed out so far; stepped with new records
    only, it hands out the spans a fold of the whole journal would hand out next."""

    def __init__(self, trace: Trace, spans: int = 0) -> None:
        self.trace = trace
        self.spans = spans  # how many spans it handed out since the journal's start

    @classmethod
    def start(cls, run_id: str, options: TraceOptions) -> LiveFold:
        return cls(Trace(run_id, options, keep=False, live=True))

    def step(self, records: Iterable[Recorded]) -> list[Span]:
        """Fold the records (any of the run's streams, in journal order) and give the spans
        they made final, in the order `encode.folded` gives them."""
        trace = self.trace
        out: list[Span] = []
        for rec in records:
            if not runs_in(trace, rec):
                continue
            if trace.root is None and rec.stream != trace.stream:
                continue  # as `folded`: the run's own first record opens the trace
            trace.step(rec)
            if trace.ready:
                out.extend(trace.take())
        self.spans += len(out)
        return out
