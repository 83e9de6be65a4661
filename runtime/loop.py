"""The agent loop: assemble the window, ask the model, dispatch its calls, journal every step.

A run stops for one of five reasons, each with its own event: the done tool (AgentFinished),
the budget at a turn boundary (BudgetExhausted: a breach ends the run before any further model
call or effect, a breaching turn's done included; runtime/overspent.py), the turn cap
(TurnCapReached), two replies in a row without a tool call (RunInconclusive, after one nudge),
or an operator's stop at a turn boundary (RunInterrupted, raised as `Interrupted`; such a run
resumes where it stood). A run
that answers a request with a deadline (`deadline`, see runtime/coordination/deadlines.py) also
stops when it is overdue (ReplyOverdue). With `Agent.repeats` set, the loop breaker stops an
agent that makes the same tool call (same tool, same arguments) that many times in a row (the
repeat is not run), or meets the same failure that many times in a row: BreakerTripped says
which, and the run ends "looping". With `admit` (a work registry's, see
runtime/coordination/registry.py), a call refused before it starts is not dispatched: the
agent reads the refusal as the call's outcome and goes on. A turn runs at most MAX_CALLS of its
reply's calls; the agent is told of the rest (AgentNudged).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast, runtime_checkable

from runtime import errors, overspent, session_snapshots
from runtime.backoff import Backoff
from runtime.budget import Budget
from runtime.context import (
    DEFAULT_LIMIT,
    History,
    Step,
    counted,
    head,
    tools_digest,
    window_digest,
    window_size,
)
from runtime.coordination import statuses
from runtime.events import (
    AgentFinished,
    AgentNudged,
    BreakerTripped,
    BudgetDebited,
    Event,
    ModelCalled,
    ModelFailed,
    ModelResponded,
    RunInconclusive,
    RunStarted,
    ToolDispatched,
    ToolRetryScheduled,
    ToolReturned,
    TurnCapReached,
)
from runtime.fanout.breakers import LoopBreaker
from runtime.model import ChatMessage, EndpointDown, ModelClient, ModelError, ToolCall
from runtime.session import Session
from runtime.tools import Outcome, Tool, Toolbox, ToolFailure, failure
from runtime.turn_boundary import boundary

DONE = "done"


def done_tool(properties: dict[str, Any] | None = None, required: Sequence[str] = ()) -> Tool:
    """The loop's own verb. Its schema is the agent's report contract, checked like any call."""
    props = properties or {"summary": {"type": "string", "description": "what you did and found"}}
    params = {"type": "object", "properties": props, "required": list(required)}
    return Tool(
        DONE, "Finish your work. Your arguments are your report.", params, dict, timeout=None
    )


DONE_TOOL = done_tool()
# Steps between prunes of a loop's history (runtime/context.py `History.prune`): a prune walks
# back over the steps the window holds, so it is done now and then, not every turn.
PRUNE_EVERY = 32
NUDGE = "Reply with a tool call; call done when you are finished."
# Calls run from one reply. Ceilings, the budget and an operator's stop are looked at between
# turns, never mid-turn, so a reply's calls are all run before any of them can stop the run: a
# reply of 10,000 calls (under the reply's size limit) ran for half a minute past a 3 s ceiling,
# and would run a test suite 10,000 times. Models make a handful of calls at a time.
MAX_CALLS = 32

Status = Literal["done", "halted", "out_of_turns", "inconclusive", "overdue", "looping"]
Ending = Literal["done", "halted", "out_of_turns", "inconclusive"]


def ending(status: Status) -> Ending:
    """An agent's stop as a run's verdict: overdue is out of the turns (or time) it had, and
    one going round in circles came to no conclusion."""
    if status == "overdue":
        return "out_of_turns"
    if status == "looping":
        return "inconclusive"
    return status


@dataclass
class Agent:
    """One construction for every role: a client, a toolbox, a system prompt, and limits."""

    name: str
    client: ModelClient
    toolbox: Toolbox
    system: str
    max_turns: int = 12
    retries: int = 0
    window: int = DEFAULT_LIMIT
    done: Tool = DONE_TOOL
    repeats: int | None = None  # the loop breaker: this many identical calls in a row (None: off)
    backoff: Backoff = field(default_factory=Backoff)  # the waits between a call's retries


@dataclass(frozen=True)
class AgentResult:
    status: Status
    turns: int
    report: dict[str, Any] | None = None


Mail = Callable[[], Sequence[ChatMessage]]
# Checked at the top of each turn with its number: the event that ends an overdue run, or None.
Overdue = Callable[[int], Event | None]
# Asked before a tool call runs, with the call and its envelope: None to let it run, or the
# refusal (already journalled by the caller) the agent reads as the call's outcome
# (runtime/coordination/registry.py: work another agent already did).
Admit = Callable[[ToolCall, dict[str, Any]], Outcome | None]


@runtime_checkable
class Kept(Protocol):
    """A callback (mail, deadline, admit) whose state a loop snapshot can carry. A loop keeps
    snapshots only when every callback it was given is one: a plain function keeps state the
    snapshot would not hold, and its loop resumes by replaying its turns."""

    def keep(self) -> Any:
        """Its state as of this turn boundary, as JSON; None when it cannot be kept here (the
        loop then skips this snapshot)."""
        ...

    def fits(self, state: Any) -> bool:
        """Whether `state`, kept by a loop with the same settings, can be taken up now; asked
        of every callback before anything moves, so a snapshot is taken up whole or not."""
        ...

    def take(self, state: Any) -> None:
        """Take up `state`: the turns it stands after are not replayed."""
        ...


def run(
    agent: Agent,
    task: str,
    session: Session,
    budget: Budget,
    *,
    task_id: str | None = None,
    mail: Mail | None = None,
    deadline: Overdue | None = None,
    admit: Admit | None = None,
) -> AgentResult:
    """Drive one agent until it stops, and journal its last word as a structured status
    (runtime/coordination/statuses.py). Raises `Interrupted` on an operator's stop."""
    try:
        return turns(agent, task, session, budget, task_id, mail, deadline, admit)
    except BaseException:
        # Whatever raised, what the turn did (a tool's result held for the next batch) is
        # written: the tool ran, and its outcome must not be lost with the exception. A
        # journal that refuses it (a lease taken over) refuses it; the exception goes on.
        with contextlib.suppress(Exception):
            session.flush()
        raise


def turns(
    agent: Agent,
    task: str,
    session: Session,
    budget: Budget,
    task_id: str | None,
    mail: Mail | None,
    deadline: Overdue | None,
    admit: Admit | None,
) -> AgentResult:
    client = session.client(agent.name, agent.client)
    specs = [*agent.toolbox.specs(), agent.done.spec()]
    offered = tools_digest(specs)
    envelope: dict[str, Any] = {"agent": agent.name, "task_id": task_id}
    session.emit(
        session.new(
            RunStarted,
            **envelope,
            task=task,
            tools=[s["name"] for s in specs],
            max_turns=session.turn_cap(agent.max_turns),
        )
    )
    history = History()
    fresh: list[ChatMessage] = []
    nudged = False
    breaker = LoopBreaker(agent.repeats) if agent.repeats is not None else None
    turn = 0
    debited = 0  # what this run of the agent debited from its budget
    # Snapshots of the loop's state (runtime/snapshots.py) are kept for a loop whose state is
    # its own, or whose callbacks (mail, a deadline, a registry) keep theirs in it (`Kept`).
    callbacks = {
        name: hook
        for name, hook in (("mail", mail), ("deadline", deadline), ("admit", admit))
        if hook is not None
    }
    keeps = session.snapshots is not None and all(isinstance(h, Kept) for h in callbacks.values())
    start = session.position  # the stream version of this RunStarted
    started = (start, session.record.stored(start).id) if keeps else (start, "")  # as journalled
    settings = fingerprint(agent, task, task_id, specs, budget, sorted(callbacks)) if keeps else ""
    taken = (
        session_snapshots.restore(
            session, agent.name, settings, accept=lambda state: fitting(callbacks, state)
        )
        if keeps
        else None
    )
    if taken is not None:  # go on from the snapshot: the turns before it are not replayed
        for name, hook in callbacks.items():
            cast(Kept, hook).take(taken["callbacks"][name])
        turn, nudged, debited = taken["turn"], taken["nudged"], taken["debited"]
        history = thaw_history(taken["steps"], taken["history"])
        fresh = [ChatMessage.model_validate(m) for m in taken["fresh"]]
        if breaker is not None:
            breaker.take(taken["breaker"])
        budget.debit(debited)
    resumed_at = turn
    # The most any window of this loop holds of its history (the window less the system prompt
    # and the task): what a snapshot keeps and a prune leaves are the steps within it.
    room = agent.window - window_size(head(agent.system, task))
    # The cap is asked for each turn: a fork may change it from its point on (runtime/limits.py).
    while turn < (cap := session.turn_cap(agent.max_turns)):
        # Taken live only: a turn replayed from the record is already in a snapshot, or not.
        if keeps and turn != resumed_at and turn % session.snapshot_every == 0 and session.live:
            hooks = {name: cast(Kept, hook).keep() for name, hook in callbacks.items()}
            state = {
                "callbacks": hooks,
                "turn": turn,
                "nudged": nudged,
                "debited": debited,
                "steps": len(history),
                "history": [[m.data for m in step] for step in kept_steps(history, room)],
                "fresh": [m.data for m in fresh],
                "breaker": breaker.state() if breaker is not None else None,
            }
            if all(kept is not None for kept in hooks.values()):
                session_snapshots.checkpoint(session, agent.name, started, settings, state)
        boundary(session)
        session.resize(budget)
        at = {**envelope, "turn": turn}
        if overspent.halts(session, budget):  # spent before this turn: no call is made
            exhausted = overspent.exhausted(session, budget, at)
            return stop(session, agent, AgentResult("halted", turn), task_id, exhausted)
        if deadline is not None or mail is not None:
            session.flush()  # the harness's callbacks may write elsewhere: this turn goes first
        if deadline is not None and deadline(turn) is not None:
            return stop(session, agent, AgentResult("overdue", turn), task_id)
        if mail is not None:
            fresh.extend(mail())
        for note in session.injected(agent.name):  # a person's word, where a fork began
            fresh.append(ChatMessage(role="user", content=f"Message from {note.by}: {note.text}"))
        window, chars = counted(agent.system, task, history, fresh, agent.window)
        digest = window_digest(window, offered)
        session.emit(
            session.new(
                ModelCalled, **at, messages=len(window), window_chars=chars, window_digest=digest
            )
        )
        try:
            response = session.ask(client, window, specs)
        except ModelError as exc:
            failed = session.new(ModelFailed, **at, error=errors.describe(exc), usage=exc.usage)
            if exc.usage is None:
                session.emit(failed)
                raise
            # An answer that could not be used was written, and paid for: billed and debited
            # like one that could (ModelError.usage), in one batch with the failure.
            session.emit(failed, session.new(BudgetDebited, **at, amount=exc.usage.total))
            budget.debit(exc.usage.total)
            if overspent.halts(session, budget):  # the ceiling before the failure: its turn ended
                exhausted = overspent.exhausted(session, budget, at)
                return stop(session, agent, AgentResult("halted", turn + 1), task_id, exhausted)
            raise
        except EndpointDown as exc:
            if exc.usage is None:
                raise  # nothing was paid: the journal stops at the ModelCalled, asked again
            # Down after part of the call was answered and paid for (the pick of a pick then
            # force): journalled and debited as a paid failure is. Live, the outage goes up
            # (the step is tried again); read back by that retry, the turn asks again.
            down = session.live
            failed = session.new(ModelFailed, **at, error=errors.describe(exc), usage=exc.usage)
            session.emit(failed, session.new(BudgetDebited, **at, amount=exc.usage.total))
            budget.debit(exc.usage.total)
            debited += exc.usage.total
            if overspent.halts(session, budget):
                exhausted = overspent.exhausted(session, budget, at)
                return stop(session, agent, AgentResult("halted", turn + 1), task_id, exhausted)
            if down:
                raise
            continue
        session.hold(  # written with what comes next (its first call's dispatch): one commit
            session.new(
                ModelResponded,
                **at,
                text=response.text,
                tool_calls=response.tool_calls,
                usage=response.usage,
                served=response.served,
            ),
            session.new(BudgetDebited, **at, amount=response.usage.total),
        )
        budget.debit(response.usage.total)
        debited += response.usage.total
        calls = response.tool_calls
        answers: list[ChatMessage] = []
        for index, call in enumerate(response.tool_calls):
            # A journal written before the cap goes on with its record there: it ran them all.
            if index == MAX_CALLS and (session.live or isinstance(session.peek(), AgentNudged)):
                calls = calls[:MAX_CALLS]
                break
            if admit is not None:
                session.flush()  # the harness's admit may write elsewhere: this turn goes first
            if call.name == DONE:  # finishing is an explicit, typed act
                refused = check_report(agent, call, session, at)
                if refused is None and overspent.halts(session, budget, finishing=True):
                    # The turn that spent the allowance: its report is not acted on (no merge,
                    # no verdict sent, no next agent), as runtime/overspent.py argues.
                    exhausted = overspent.exhausted(session, budget, at)
                    return stop(session, agent, AgentResult("halted", turn + 1), task_id, exhausted)
                if refused is None:
                    finished = session.new(AgentFinished, **at, result=call.args)
                    return stop(
                        session, agent, AgentResult("done", turn + 1, call.args), task_id, finished
                    )
                outcome = refused
            elif admit is not None and (refused := admit(call, at)) is not None:
                outcome = refused  # refused before it started: no dispatch, nothing ran
            elif breaker is not None and (loop := breaker.before(call.name, call.args)):
                tripped = trip(agent, session, at, loop, breaker.repeats)
                return stop(session, agent, AgentResult("looping", turn + 1), task_id, tripped)
            else:
                outcome = dispatch(agent, call, session, at)
                if breaker is not None and (loop := breaker.after(call.name, outcome)):
                    tripped = trip(agent, session, at, loop, breaker.repeats)
                    return stop(session, agent, AgentResult("looping", turn + 1), task_id, tripped)
            answers.append(
                ChatMessage(
                    role="tool", content=json.dumps(outcome.observation()), tool_call_id=call.id
                )
            )
        # The window holds the calls that were run, each with its answer, as the protocol wants.
        step = [ChatMessage(role="assistant", content=response.text, tool_calls=calls), *answers]
        if len(calls) < len(response.tool_calls):
            left = too_many(len(response.tool_calls))
            session.emit(session.new(AgentNudged, **at, text=left))
            step.append(ChatMessage(role="user", content=left))
        drifted = not response.tool_calls
        if drifted and not nudged:
            session.emit(session.new(AgentNudged, **at, text=NUDGE))
            step.append(ChatMessage(role="user", content=NUDGE))
        if fresh:
            history.append(fresh)
            if len(history) % PRUNE_EVERY == 0:
                history.prune(room)
        fresh = step
        session.resize(budget)  # a fork made just before this check gives its allowance first
        if budget.exhausted():  # wind down at the turn boundary, never mid-turn
            exhausted = overspent.exhausted(session, budget, at)
            return stop(session, agent, AgentResult("halted", turn + 1), task_id, exhausted)
        if drifted and nudged:
            drifting = session.new(
                RunInconclusive, **at, reason="two replies in a row without a tool call"
            )
            return stop(session, agent, AgentResult("inconclusive", turn + 1), task_id, drifting)
        nudged = drifted
        turn += 1
    capped = session.new(TurnCapReached, **envelope, max_turns=cap)
    return stop(session, agent, AgentResult("out_of_turns", cap), task_id, capped)


def fitting(callbacks: dict[str, Any], state: dict[str, Any]) -> bool:
    """Whether every callback takes up what it kept in a loop snapshot's `state`."""
    if not callbacks:
        return True
    kept = state.get("callbacks")
    if not isinstance(kept, dict) or set(kept) != set(callbacks):
        return False
    return all(cast(Kept, hook).fits(kept[name]) for name, hook in callbacks.items())


def fingerprint(
    agent: Agent,
    task: str,
    task_id: str | None,
    specs: Sequence[Any],
    budget: Budget,
    callbacks: Sequence[str] = (),
) -> str:
    """The settings a loop snapshot was taken under: a loop with others is another loop."""
    settings: dict[str, Any] = {
        "agent": agent.name,
        "system": agent.system,
        "task": task,
        "task_id": task_id,
        "window": agent.window,
        "max_turns": agent.max_turns,
        "retries": agent.retries,
        "repeats": agent.repeats,
        "tools": list(specs),
        "budget": [type(budget).__name__, budget.name, budget.allowance, budget.reserve],
        "spent": budget.spent,  # before this run of the agent: the same on every resume
    }
    if callbacks:  # (absent otherwise: the snapshots of loops without kept before stay good)
        settings["callbacks"] = list(callbacks)
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def kept_steps(history: History, room: int) -> list[Step]:
    """The newest steps any later window can still show, and the one before them.

    A window keeps the newest whole steps that fit its room (runtime/context.py), and its room
    is never more than `room` (the window less the system prompt and the task). History only
    grows at its end, so a step that does not fit behind the newer ones now never will: those
    before it can be left out of a snapshot, provided it is kept to stop `assemble` there."""
    kept: list[Step] = []
    used = 0
    for step, size in history.newest():
        kept.append(step)
        used += size
        if used > room:
            break
    kept.reverse()
    return kept


def thaw_history(steps: int, kept: list[list[dict[str, Any]]]) -> History:
    """A snapshot's history: its kept steps, behind empty places for those no window shows
    again (counted in the window's "dropped" marker, never measured: see kept_steps)."""
    tail: list[Step] = [[ChatMessage.model_validate(m) for m in step] for step in kept]
    return History.behind(steps - len(tail), tail)


def stop(
    session: Session,
    agent: Agent,
    result: AgentResult,
    task_id: str | None,
    *events: Event,
) -> AgentResult:
    """Journal why the run stopped and the agent's last word as a structured status
    (runtime/coordination/statuses.py) in one batch: a stream never ends between the two, so
    whoever reads it sees a stop with its status, or no stop yet."""
    word = statuses.closing(
        session, len(events), agent.name, result.status, result.report, task_id=task_id
    )
    if events or word:
        session.emit(*events, *word)
    return result


def too_many(asked: int) -> str:
    """What the agent is told of the calls of its reply that were not run."""
    return (
        f"Your reply asked for {asked:,} tool calls; only the first {MAX_CALLS} were run, and "
        f"the other {asked - MAX_CALLS:,} were not. Ask for at most {MAX_CALLS} at a time."
    )


def trip(agent: Agent, session: Session, at: dict[str, Any], why: str, repeats: int) -> Event:
    """The loop breaker's trip: the agent's run ends here."""
    return session.new(
        BreakerTripped,
        **at,
        breaker=f"loop:{agent.name}",
        reason=why,
        rates={"repeats": float(repeats)},
    )


def check_report(
    agent: Agent, call: ToolCall, session: Session, at: dict[str, Any]
) -> Outcome | None:
    """None when the done call's report meets the agent's contract; else the refusal, journalled
    as a dispatch that came back with an error (the agent must report properly to finish)."""
    try:
        agent.done.validate(call.args)
    except ToolFailure as exc:
        ids = {"tool": call.name, "call_id": call.id}
        outcome = failure(call.name, exc)
        session.emit(
            session.new(ToolDispatched, **at, **ids, args=call.args),
            session.new(ToolReturned, **at, **ids, error=outcome.error),
        )
        return outcome
    return None


def dispatch(agent: Agent, call: ToolCall, session: Session, at: dict[str, Any]) -> Outcome:
    """Run one tool call, retrying a failed execution up to `agent.retries` times, each after
    a backoff with jitter (see `wait`).

    Every attempt is journalled. Refusals (not allowed, bad arguments) are not retried: the
    same call would be refused again. Tools that are not retry-safe are not retried either.
    """
    ids = {"tool": call.name, "call_id": call.id}
    session.emit(session.new(ToolDispatched, **at, **ids, args=call.args))
    try:
        tool = agent.toolbox.check(call, agent.name)
    except ToolFailure as exc:
        outcome = failure(call.name, exc)
        session.hold(session.new(ToolReturned, **at, **ids, error=outcome.error))
        return outcome
    attempts = 1 + (agent.retries if tool.retry_safe else 0)
    for attempt in range(1, attempts + 1):
        if attempt > 1:
            wait(agent, session, {**at, **ids}, attempt)
        outcome = session.run_tool(tool, call.args)
        # Held for the next batch (the next model call's, as a rule): the session writes it
        # before anything else runs or the step ends.
        session.hold(
            session.new(
                ToolReturned,
                **at,
                **ids,
                attempt=attempt,
                result=outcome.result,  # as the journal holds it (tools.answered)
                error=outcome.error,
            )
        )
        if not outcome.failed:
            break
    return outcome


def wait(agent: Agent, session: Session, at: dict[str, Any], attempt: int) -> None:
    """Back off before `attempt`: live, draw the delay, journal it, then sleep it; resumed or
    replayed, read the recorded delay and do not sleep again (the wait is over). A journal
    written before backoff existed records none at this place, and none is made up."""
    recorded = session.peek()
    if isinstance(recorded, ToolRetryScheduled):
        session.emit(recorded)
        return
    if not session.live:
        return
    delay = agent.backoff.delay(attempt - 1)
    session.emit(session.new(ToolRetryScheduled, **at, attempt=attempt, delay=delay))
    agent.backoff.sleep(delay)
