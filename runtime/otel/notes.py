"""What a run's span carries beside its agents' spans: the run it was forked from, and the
messages and a person's stops and resumes that explain the gaps between agent spans. Steps of
`Trace` (runtime/otel/trace.py), kept apart from its agents' and calls' spans."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runtime.events import MessageSent, RunForked, RunInterrupted, RunResumed
from runtime.otel import content
from runtime.otel.spans import Link, Span, run_span_id, trace_id_of

if TYPE_CHECKING:
    from runtime.otel.trace import Trace


def forked(trace: Trace, root: Span, e: RunForked) -> None:
    """The run began as a copy of another's journal: its span names the parent and the fork
    point, and links to the parent's run span. A fork of a fork holds its parent's RunForked
    in its copied prefix, then its own: the last one is this run's."""
    root.attributes.update(
        {
            "minutes.fork.parent_run_id": e.parent,
            "minutes.fork.at": e.at,  # the parent's event's position in the journal
            "minutes.fork.number": e.number,  # and its number in the parent's run
            # who forked: a person's name, as the waits' deciders are
            "minutes.fork.by": content.clean(e.by, trace.limit),
            "minutes.fork.changed": sorted(e.changes) or None,  # what, by name only
        }
    )
    # The changes themselves: a person's message, a tool result, model names: content.
    root.attributes.pop("minutes.fork.changes", None)  # a fork of a fork: the parent's
    trace.put(root, "minutes.fork.changes", e.changes or None)
    parent = Link(trace_id_of(e.parent), run_span_id(e.parent), {"minutes.link": "forked from"})
    root.links = [parent]


def note(trace: Trace, root: Span, e: MessageSent | RunInterrupted | RunResumed) -> None:
    """Messages and a person's stop and resume, as events on the run's span: they explain
    the gaps between agent spans (waiting for mail, or for a person)."""
    if isinstance(e, MessageSent):
        what = {
            "minutes.performative": e.performative.upper(),
            "minutes.sender": e.sender,
            "minutes.recipient": e.recipient,
            "minutes.task_id": e.task_id,
            "minutes.message_id": e.message_id,
        }
        if not trace.live:
            root.events.append((trace.now, "minutes.message", what))
        return
    # Who: a person's name, shipped as the waits' deciders are (runtime/otel/waits.py),
    # scrubbed and bounded; why: text a person typed, content like the agents' words, so
    # neither the event nor the agents' status messages carry it without content.
    interrupted = isinstance(e, RunInterrupted)
    name = "minutes.interrupted" if interrupted else "minutes.resumed"
    by = content.clean(e.by, trace.limit)
    reason = content.clean(e.reason, trace.limit) if trace.options.content else ""
    if not trace.live:
        root.events.append((trace.now, name, {"minutes.by": by, "minutes.reason": reason or None}))
    because = f": {reason}" if reason else ""
    trace.paused = f"the run was interrupted by {by}{because}" if interrupted else None
