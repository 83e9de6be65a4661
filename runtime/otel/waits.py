"""Waits for a person, as spans: a parked claim conflict until its decision, a dead letter until
a person retried or discarded it.

The run page's trace tab draws these waits (runtime/trace_view.py, `marks`) in the run's lane,
from what parked the work to the decision; the export gives each the same place and time:

    wait for a person: claim conflict   ConflictParked .. ConflictResolved   (conflict-<id>)
    wait for a person: dead letter      DeadLettered .. DeadLetterRetried or DeadLetterDiscarded
                                        (the control stream's, and the harness's on the run's own)

each a child of the run's span. A dead letter that follows its escalation (TaskEscalated) waits
from the escalation, as the tab draws it (`Escalations`, which both use, says which escalation
is a letter's). A wait still undecided where the journal ends ends there, as the tab draws it,
with `minutes.wait.decided` false; it is final only then (a live push never sends it), so a
decision that comes later changes it while it is still open.

A conflict and the control stream's letters are on streams the trace reads nothing else of:
`waits_on` says which of their records a trace takes (the callers read them beside the run's
own streams: runtime/flight.py, journal_store/traces.py). Who decided and why are people's text,
and a letter's reason and error and a conflict's chosen value may quote agents or tools: all go
through runtime/otel/content.py, as the agents' text does; the reasons and the value only when
the trace carries content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from runtime import streams
from runtime.events import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    TaskEscalated,
)
from runtime.journal import Recorded
from runtime.otel import content
from runtime.otel.spans import KIND_INTERNAL, Span

if TYPE_CHECKING:
    from runtime.otel.trace import Trace

CONFLICT = "claim conflict"
LETTER = "dead letter"
CONFLICT_KINDS = frozenset({ConflictParked.kind, ConflictResolved.kind})
LETTER_KINDS = frozenset({DeadLettered.kind, DeadLetterRetried.kind, DeadLetterDiscarded.kind})


def waits_on(run_id: str, rec: Recorded) -> bool:
    """Whether the record opens or ends one of the run's waits on a stream of its own: a
    conflict the run parked (its stream names no run: the event does), or a dead letter of the
    run's control stream and its decision. Nothing else of those streams."""
    kind = rec.event.kind
    if kind in LETTER_KINDS:
        return rec.stream == streams.control(run_id)
    return (
        kind in CONFLICT_KINDS and rec.stream.startswith("conflict-") and rec.event.run_id == run_id
    )


def key_of(e: ConflictParked | ConflictResolved | DeadLettered | Any) -> str:
    """An open wait's key: the conflict's or the letter's id."""
    if isinstance(e, ConflictParked | ConflictResolved):
        return f"conflict:{e.conflict_id}"
    return f"letter:{e.letter_id}"


T = TypeVar("T")
Place = tuple[str, str | None, str | None]  # an escalation's stream, task and agent


class Escalations(Generic[T]):
    """The escalations no dead letter followed yet, and which one a dead letter belongs to.

    Where runs park, the harness escalates a task and dead-letters it at once, on the same
    stream, for the same task and agent, with the escalation's reason (teams/repo_fix/harness.py
    `escalate`, runtime/fanout/settle.py `resolve`): that letter waits from its escalation. An
    escalation where runs do not park has no letter, and a letter of the control stream (a step
    that kept dying) has no escalation: neither is the other's, however close they come.
    Each escalation is held with what the caller wants back (a time, a record).
    """

    def __init__(self) -> None:
        self.pending: dict[Place, tuple[str, T]] = {}  # the reason, and what was held

    def escalated(self, rec: Recorded, held: T) -> None:
        e = rec.event
        assert isinstance(e, TaskEscalated)
        self.pending[(rec.stream, e.task_id, e.agent)] = (e.reason, held)

    def lettered(self, rec: Recorded) -> T | None:
        """What was held with the letter's escalation, which is no longer pending; None when
        the letter has none."""
        e = rec.event
        assert isinstance(e, DeadLettered)
        place = (rec.stream, e.task_id, e.agent)
        found = self.pending.get(place)
        if found is None or found[0] != e.reason:
            return None
        del self.pending[place]
        return found[1]


class Waits:
    """The waits of one trace: opened, decided, and closed at the journal's end."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.open: dict[str, Span] = {}  # by key_of
        self.escalated: Escalations[int] = Escalations()  # held with their times

    def on_escalated(self, rec: Recorded) -> None:
        self.escalated.escalated(rec, self.trace.now)

    def on_parked(self, rec: Recorded, e: ConflictParked, root: Span) -> None:
        span = self.opened(rec, root, CONFLICT, self.trace.now)
        if span is None:
            return
        span.attributes.update(
            {
                "minutes.conflict.id": e.conflict_id,
                "minutes.conflict.subject": e.subject,
                "minutes.conflict.predicate": e.predicate,
                "minutes.conflict.type": e.conflict_type,
                "minutes.conflict.claims": len(e.claims),
            }
        )

    def on_lettered(self, rec: Recorded, e: DeadLettered, root: Span) -> None:
        since = self.escalated.lettered(rec)
        start = self.trace.now if since is None else since
        span = self.opened(rec, root, LETTER, start)
        if span is None:
            return
        where = "control" if rec.stream == streams.control(self.trace.run_id) else "run"
        span.attributes.update(
            {
                "minutes.dead_letter.id": e.letter_id,
                "minutes.dead_letter.stream": where,
                "minutes.dead_letter.attempts": e.attempts,
                "minutes.task_id": e.task_id,
            }
        )
        self.trace.put(span, "minutes.dead_letter.reason", e.reason)
        self.trace.put(span, "minutes.dead_letter.last_error", e.last_error or None)

    def opened(self, rec: Recorded, root: Span, what: str, start: int) -> Span | None:
        key = key_of(rec.event)
        if key in self.open:  # parked twice: the first wait stands until its decision
            return None
        span = self.trace.open(
            rec, "wait", root.span_id, f"wait for a person: {what}", KIND_INTERNAL, start
        )
        span.attributes["minutes.wait.for"] = what
        self.open[key] = span
        return span

    def on_decided(self, e: ConflictResolved | DeadLetterRetried | DeadLetterDiscarded) -> None:
        span = self.open.pop(key_of(e), None)
        if span is None:  # a decision on a wait this trace never saw open
            return
        a = span.attributes
        a["minutes.wait.decided"] = True
        if isinstance(e, ConflictResolved):
            a["minutes.decision"] = e.choice  # a claim's id, or "none"
            if e.choice != "none":
                self.trace.put(span, "minutes.conflict.value", e.value)
        else:
            a["minutes.decision"] = "retry" if isinstance(e, DeadLetterRetried) else "discard"
        # Who decided: a person's name, shipped as the run's starter's is, scrubbed and bounded
        # like any text a person typed; why: content, like the agents' words.
        a["minutes.decided_by"] = content.clean(e.by, self.trace.limit)
        self.trace.put(span, "minutes.decision.reason", e.reason or None)
        span.close(self.trace.now)
        self.trace.final(span)

    def finish(self) -> None:
        """Undecided waits end where the journal does: nobody had decided by then."""
        for span in self.open.values():
            span.attributes["minutes.wait.decided"] = False
            span.close(max(self.trace.now, span.start))
            self.trace.final(span)
        self.open.clear()
