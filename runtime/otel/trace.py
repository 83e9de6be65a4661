"""A run's minutes as an OpenTelemetry trace: OTLP/JSON, named by the GenAI semantic conventions.

The journal already says who did what, when, and for how many tokens. This module re-reads it in
the shape trace viewers and collectors understand (anything that accepts OTLP/JSON):

    invoke_agent <team>        the run: its first event .. TeamFinished (or its last event)
      invoke_agent <agent>     one agent's run: RunStarted .. the event that stopped it
        chat <model>           one model call: ModelCalled .. ModelResponded or ModelFailed
        execute_tool <tool>    one execution of a tool call: ToolDispatched .. ToolReturned
      wait for a person: ...   a parked claim conflict or a dead letter .. its decision
                               (runtime/otel/waits.py)

A fork's run span names its parent and the fork point (RunForked) and links to the parent's
run span, whose ids follow from the parent's run id alone (`trace_id_of`, `run_span_id`).

A tool call the loop retried is one span per attempt (the second attempt runs from the first
one's ToolReturned to its own), so a transient failure stays visible as a red span beside the
green one. A span whose closing event never came (the run crashed, or is still going) ends at the
journal's last event with an error status saying so; an undecided wait for a person ends there
too, without one (the run waits: nothing failed).

Spans are handed out as they become final, so a long run's trace is written (or pushed, live)
without holding it: a model call's or a tool call's span is final when it closes; an agent's when
it stops, except a specialist's, which the supervisor's report (WorkerReported, WorkerTimedOut)
may still mark failed, so it waits for that report; a wait for a person's at its decision (or
at the journal's end, undecided); the run's own span at the journal's end.
Children come before their parents, which OTLP allows. The order is the fold's, so the spans
final after a journal's first N records are the first spans of the whole journal's: a live push
that sent the first K spans of a prefix has sent the first K of any longer journal.

It is a pure fold, like the views: no clock, no randomness, no Django. Ids are hashes of the run
id and of the opening event's place in its stream (stream and version, which every store keeps,
unlike event ids that a reference journal may lack), so the same journal always exports the same
bytes, and exporting twice gives a trace a collector will merge rather than duplicate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime import streams
from runtime.events import (
    AgentFinished,
    AgentNudged,
    AnswerComposed,
    BreakerTripped,
    BudgetExhausted,
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    Event,
    MessageSent,
    ModelCalled,
    ModelFailed,
    ModelResponded,
    ReplyOverdue,
    RunForked,
    RunInconclusive,
    RunInterrupted,
    RunResumed,
    RunStarted,
    TaskEscalated,
    TeamFinished,
    TeamStarted,
    ToolDispatched,
    ToolReturned,
    TurnCapReached,
    WorkerReported,
    WorkerTimedOut,
)
from runtime.journal import Recorded
from runtime.otel import content, notes
from runtime.otel.calls import Calls
from runtime.otel.options import TraceOptions
from runtime.otel.spans import (
    DEGRADED,
    KIND_INTERNAL,
    UNFINISHED,
    AgentRun,
    Span,
    agent_id,
    agent_name,
    model_attributes,
    nanos,
    reported_failure,
    span_id_of,
    trace_id_of,
)
from runtime.otel.waits import Waits

CUT_SHORT = "the journal ends here: the run crashed, or was still going when exported"


class Trace:
    """The fold: steps through one run's records and builds its spans."""

    def __init__(
        self,
        run_id: str,
        options: TraceOptions | None = None,
        keep: bool = True,
        live: bool = False,
        quote: bool | None = None,
    ) -> None:
        self.run_id = run_id
        self.options = options or TraceOptions()
        # quote: whether status messages quote what an error or a reason said (`status_text`);
        # as content goes, unless the caller says otherwise (the run page's tab shows the
        # errors, scrubbed and bounded, without folding the rest of the content).
        self.quote = self.options.content if quote is None else quote
        self.stream = streams.journal(run_id)
        self.trace_id = trace_id_of(run_id)
        # keep: every span, in the order opened, final or not (the run page's views read them);
        # else `ready` holds the spans made final since the caller last took them, and
        # nothing else is kept (the encoders stream them).
        self.keep = keep
        # live: the journal is not at its end, and the fold will not be finished (a live push
        # hands out only the spans final so far): the run's own span is never handed out, so
        # its message events are not kept, and the fold's state stays the size of what is
        # under way, not of the run (runtime/otel/fold_state.py stores it between pushes).
        self.live = live
        self.spans: list[Span] = []
        self.ready: list[Span] = []
        self.root: Span | None = None
        self.agents: dict[str, AgentRun] = {}
        self.config: dict[str, Any] = {}
        self.now = 0
        self.paused: str | None = None  # who stopped the run and why, until it is resumed
        self.degraded: str | None = None  # what the run's answer says it lacks
        # Specialists' runs that ended, by agent and task, until their supervisor reports.
        self.stopped: dict[tuple[str, str | None], Span] = {}
        self.models: dict[str, dict[str, Any]] = {}  # model_attributes, by agent
        self.waits = Waits(self)  # waits for a person, open until decided
        self.calls = Calls(self)  # the model calls and tool calls of its agents
        # What each kind of event does to the spans, by kind: one lookup an event.
        stopped = lambda rec, e, root: self.on_agent_stopped(e)  # noqa: E731
        noted = lambda rec, e, root: notes.note(self, root, e)  # noqa: E731
        reported = lambda rec, e, root: self.on_worker_failed(e)  # noqa: E731
        self.handlers: dict[str, Callable[[Recorded, Any, Span], None]] = {
            TeamStarted.kind: lambda rec, e, root: self.on_team_started(root, e),
            TeamFinished.kind: lambda rec, e, root: self.on_team_finished(root, e),
            RunForked.kind: lambda rec, e, root: notes.forked(self, root, e),
            RunStarted.kind: lambda rec, e, root: self.on_run_started(rec, e),
            ModelCalled.kind: lambda rec, e, root: self.calls.on_model_called(rec, e),
            ModelResponded.kind: lambda rec, e, root: self.calls.on_model_responded(rec, e),
            ModelFailed.kind: lambda rec, e, root: self.calls.on_model_failed(rec, e),
            AgentNudged.kind: lambda rec, e, root: self.calls.on_nudged(e),
            ToolDispatched.kind: lambda rec, e, root: self.calls.on_tool_dispatched(rec, e),
            ToolReturned.kind: lambda rec, e, root: self.calls.on_tool_returned(rec, e),
            AgentFinished.kind: stopped,
            BudgetExhausted.kind: stopped,
            TurnCapReached.kind: stopped,
            RunInconclusive.kind: stopped,
            ReplyOverdue.kind: stopped,
            BreakerTripped.kind: lambda rec, e, root: self.on_breaker_tripped(e),
            MessageSent.kind: noted,
            RunInterrupted.kind: noted,
            RunResumed.kind: noted,
            WorkerReported.kind: reported,
            WorkerTimedOut.kind: reported,
            AnswerComposed.kind: lambda rec, e, root: self.on_answer_composed(root, e),
            TaskEscalated.kind: lambda rec, e, root: self.waits.on_escalated(rec),
            ConflictParked.kind: self.waits.on_parked,
            DeadLettered.kind: self.waits.on_lettered,
            ConflictResolved.kind: lambda rec, e, root: self.waits.on_decided(e),
            DeadLetterRetried.kind: lambda rec, e, root: self.waits.on_decided(e),
            DeadLetterDiscarded.kind: lambda rec, e, root: self.waits.on_decided(e),
        }

    # --- stepping ------------------------------------------------------------------------------

    def step(self, rec: Recorded) -> None:
        e = rec.event
        # The journal's order is the truth; timestamps come from whichever worker wrote them,
        # and clocks differ. Never letting time go backwards keeps every span's end after its
        # start and every child inside its parent.
        at = nanos(e.t)
        if at > self.now:
            self.now = at
        root = self.root or self.open_root(rec)
        handler = self.handlers.get(e.kind)
        if handler is not None:  # most events (debits, deliveries, claims) shape no span
            handler(rec, e, root)
        run = self.agents.get(e.agent or "?")  # agent_name, inline: once an event
        if run is not None:
            run.last = self.now

    def on_answer_composed(self, root: Span, e: AnswerComposed) -> None:
        self.degraded = e.degraded or None
        self.put(root, "output.value", e.text)

    def finish(self) -> None:
        """Close whatever the journal left open, at its last event: every span is final."""
        if self.live:
            raise RuntimeError("a live fold is never finished: it does not keep the run's span")
        for name in list(self.agents):
            self.close_agent(name, self.now, UNFINISHED, self.paused or CUT_SHORT)
        for span in self.stopped.values():
            self.final(span)
        self.stopped.clear()
        self.waits.finish()
        if self.root is not None:
            self.root.end = self.now
            self.final(self.root)

    def take(self) -> list[Span]:
        """The spans made final since the last take, in the order they became so."""
        ready, self.ready = self.ready, []
        return ready

    def final(self, span: Span) -> None:
        """Nothing will change the span any more: it may be written."""
        if not self.keep:
            self.ready.append(span)

    # --- the run -------------------------------------------------------------------------------

    def open_root(self, rec: Recorded) -> Span:
        self.root = self.open(rec, "run", None, "invoke_agent", KIND_INTERNAL)
        self.root.attributes.update({"gen_ai.operation.name": "invoke_agent"})
        return self.root

    def on_team_started(self, root: Span, e: TeamStarted) -> None:
        self.config = e.config
        self.models.clear()
        root.name = f"invoke_agent {e.team}"
        # who started it: a person's name, as the waits' deciders are (runtime/otel/waits.py)
        by = e.config.get("started_by")
        root.attributes.update(
            {
                "gen_ai.agent.name": e.team,
                "minutes.team": e.team,
                "minutes.scenario": e.scenario,
                "minutes.started_by": None if by is None else content.clean(by, self.limit),
            }
        )
        self.put(root, "minutes.task", e.task)  # the task is content, like the prompts
        self.put(root, "input.value", e.task)

    def on_team_finished(self, root: Span, e: TeamFinished) -> None:
        for name in list(self.agents):
            self.close_agent(
                name, self.now, UNFINISHED, f"the run finished ({e.status}) before the agent did"
            )
        root.attributes["minutes.status"] = e.status
        if "output.value" not in root.attributes:
            self.put(root, "output.value", e.reason or e.status)
        if e.status != "done":
            # The reason may be a person's words ("discarded by rosa: <why>"): content.
            root.fail(e.status, self.status_text(e.reason, e.status) if e.reason else e.status)
        elif self.degraded is not None:
            # Answered, but short of what was asked: a consumer lists it with the failures.
            if e.reason:
                root.fail(DEGRADED, self.status_text(e.reason, DEGRADED))
            else:
                lead = "the answer is degraded: "
                root.fail(DEGRADED, self.status_text(self.degraded, DEGRADED, lead))
        root.end = self.now

    # --- agents --------------------------------------------------------------------------------

    def open_agent(self, rec: Recorded, e: Event) -> AgentRun:
        name = agent_name(e)
        if name in self.agents:  # a second start with no stop between: the first was abandoned
            old = self.agents[name]
            self.close_agent(name, old.last, UNFINISHED, "the agent started again before stopping")
        assert self.root is not None
        span = self.open(rec, "agent", self.root.span_id, f"invoke_agent {name}", KIND_INTERNAL)
        span.supervised = rec.stream != self.stream  # a specialist, on a stream of its own
        span.attributes.update(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": name,
                "gen_ai.agent.id": agent_id(self.run_id, name),
                **self.model_attributes(name),
                "minutes.task_id": e.task_id,
            }
        )
        run = AgentRun(span, self.now)
        if isinstance(e, RunStarted):
            span.attributes["minutes.agent.max_turns"] = e.max_turns
            span.attributes["minutes.agent.tools"] = e.tools
            if self.options.content:
                task = content.clean(e.task, self.limit)  # once, for the span and the history
                if e.task is not None:
                    span.attributes["input.value"] = task
                run.history.append(content.message_json(content.text_part_message("user", task)))
        self.agents[name] = run
        return run

    def on_run_started(self, rec: Recorded, e: RunStarted) -> None:
        self.open_agent(rec, e)

    def agent_of(self, rec: Recorded) -> AgentRun:
        """The event's agent's open run; reference journals have no RunStarted, so the first
        event of an agent opens one."""
        return self.agents.get(agent_name(rec.event)) or self.open_agent(rec, rec.event)

    def on_agent_stopped(
        self, e: AgentFinished | BudgetExhausted | TurnCapReached | RunInconclusive | ReplyOverdue
    ) -> None:
        name = agent_name(e)
        if name not in self.agents:
            return
        if isinstance(e, AgentFinished):
            if e.result is not None:
                self.put(self.agents[name].span, "output.value", e.result)
            failed = self.failure_status(reported_failure(e.result))
            if failed is None:
                self.close_agent(name, self.now, outcome="done")
            else:
                self.close_agent(name, self.now, *failed, outcome="failed")
        elif isinstance(e, BudgetExhausted):
            spent = f": spent {e.spent} of {e.allowance} tokens" if e.spent is not None else ""
            self.close_agent(name, self.now, "halted", f"budget exhausted{spent}")
        elif isinstance(e, TurnCapReached):
            self.close_agent(name, self.now, "out_of_turns", f"turn cap {e.max_turns} reached")
        elif isinstance(e, ReplyOverdue):
            # The loop stops the agent here (its verdict "overdue"); the harness may start it
            # again to re-ask, which is a new run of the agent and a new span.
            self.close_agent(name, self.now, "overdue", self.status_text(e.reason, "overdue"))
        else:
            why = self.status_text(e.reason, "inconclusive")
            self.close_agent(name, self.now, "inconclusive", why)

    def on_breaker_tripped(self, e: BreakerTripped) -> None:
        """The loop breaker stops the agent that kept repeating itself (its verdict "looping").
        Other breakers guard a service, not an agent's run: the agent goes on, refused."""
        name = agent_name(e)
        if e.breaker == f"loop:{name}" and name in self.agents:
            self.close_agent(name, self.now, "looping", f"the loop breaker stopped it: {e.reason}")

    def close_agent(
        self,
        name: str,
        at: int,
        error_type: str | None = None,
        message: str = "",
        outcome: str | None = None,
    ) -> None:
        run = self.agents.pop(name)
        why = message or "the agent stopped first"
        if run.model_call is not None:
            run.model_call.close(at, UNFINISHED, f"no answer from the model was recorded: {why}")
            self.final(run.model_call)
        for call in run.tools.values():
            if call.attempts == 0:
                self.calls.dangling_tool(run, call, at, why)
        run.span.attributes["minutes.agent.outcome"] = outcome or error_type
        run.span.close(at, error_type, message)
        if run.span.supervised:
            self.stopped[(name, run.span.attributes.get("minutes.task_id"))] = run.span
        else:
            self.final(run.span)

    def on_worker_failed(self, e: WorkerReported | WorkerTimedOut) -> None:
        """The supervisor's word on a specialist: when it says the specialist failed, its span
        is red, even when the specialist itself finished quietly (a report it got wrong, a
        deadline it missed). A stopped specialist's span is final after it, either way."""
        if isinstance(e, WorkerTimedOut):
            worker: Any = e.worker_id
            failed: tuple[str, str] | None = (
                "timeout",
                f"no report within {e.deadline_seconds:g} s (waited {e.elapsed:.1f} s)",
            )
        else:
            worker = e.report.get("worker_id")
            failed = self.failure_status(reported_failure(e.report))
        if not isinstance(worker, str):
            return
        run = self.agents.get(worker)
        # The report is the last word on a run that stopped: its span is final after it.
        span = run.span if run is not None else self.stopped.pop((worker, e.task_id), None)
        if span is not None and failed is not None and span.error is None:
            span.fail(*failed)
            span.attributes["minutes.agent.outcome"] = "failed"
        if span is not None and run is None:
            self.final(span)

    def model_attributes(self, agent: str) -> dict[str, Any]:
        """What the recorded settings say of the agent's model (read once per agent)."""
        cached = self.models.get(agent)
        if cached is None:
            cached = self.models[agent] = model_attributes(self.config, agent)
        return cached

    # --- content ---------------------------------------------------------------------------------

    @property
    def limit(self) -> int:
        return self.options.content_chars

    def status_text(self, said: str, kind: str, lead: str = "") -> str:
        """A status message that quotes what an error, an agent or a person said: after its
        fixed `lead`, the words scrubbed and bounded as content is; with content off, the
        kind of error only, since the words are content (a tool's error may print a request's
        headers, a person's reason a customer's details) and a status is shipped with every
        span, whatever the content setting."""
        if self.quote:
            return lead + content.clean(said, self.limit)
        return f"{lead}{kind} (what it said is content, left out)"

    def failure_status(self, failed: tuple[str, str] | None) -> tuple[str, str] | None:
        """A specialist's report of failure (`reported_failure`) as its span's error."""
        if failed is None:
            return None
        kind, why = failed
        return kind, self.status_text(why, kind, "the agent reported failure: ")

    def put(self, span: Span, key: str, value: Any) -> None:
        """One piece of content on a span, scrubbed and bounded; nothing when content is off."""
        if self.options.content and value is not None:
            span.attributes[key] = content.clean(value, self.limit)

    # --- building spans ------------------------------------------------------------------------

    def open(
        self,
        rec: Recorded,
        role: str,
        parent_id: str | None,
        name: str,
        kind: int,
        start: int | None = None,
    ) -> Span:
        span_id = span_id_of(self.run_id, rec, role)
        span = Span(span_id, parent_id, name, kind, self.now if start is None else start)
        span.attributes["minutes.run_id"] = self.run_id
        # Groups the run's spans as one conversation: the conventions' name, and OpenInference's
        # (Phoenix lists sessions by it).
        span.attributes["gen_ai.conversation.id"] = self.run_id
        span.attributes["session.id"] = self.run_id
        if self.keep:
            self.spans.append(span)
        return span
