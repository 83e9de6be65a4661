"""The session: how a run writes its minutes, resumes from them, and replays them.

A run is plain sequential code (the agent loop, the team harness) that emits events through a
Session. The session holds what the journal already recorded for the run and a cursor into it:

- while the cursor is inside the record, each emitted event must be the recorded one (equal but
  for id and timestamp) and is not written again; model responses, tool results and harness
  outcomes are served from the record instead of being asked for, so a tool call that already
  returned never runs twice;
- once the cursor reaches the end of the record, the run is live: events are appended with the
  expected version, models are asked and tools run.

Resuming after a crash is therefore re-running the same code over the journal; replaying is the
same with nothing live allowed, into a fresh journal. A difference between what the code emits
and what the journal holds stops the run with ReplayDivergence naming both events.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from runtime import errors, session_snapshots, streams
from runtime.budget import Budget, SubBudget
from runtime.events import (
    BudgetAllocated,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    Event,
    MessageInjected,
    ModelFailed,
    RunForked,
    TeamStarted,
    ToolReturned,
)
from runtime.faults import Faults
from runtime.fenced import check_standing
from runtime.fork_gaps import fork_gaps
from runtime.journal import Journal
from runtime.limits import Limits
from runtime.model import (
    ChatMessage,
    EndpointDown,
    ModelClient,
    ModelError,
    ModelResponse,
    ReplayClient,
    ToolSpec,
)
from runtime.record import Record
from runtime.served import ReplayedModelError, replayed_outcome
from runtime.session_snapshots import read_record
from runtime.snapshots import EVERY, LoopSnapshot, Snapshots
from runtime.step_start import StepStart
from runtime.stops import (
    Ceilings,
    Parked,
    ReplayDivergence,
    ReplayEnded,
    StopRequest,
)
from runtime.tools import Call, Outcome, Tool, execute

E = TypeVar("E", bound=Event)

# Events a flight parked between steps keeps in memory (`Session.trim`): the newest, which a
# harness's backward look (an agent's last test run, the overdue that stopped it) reads; the
# rest are read back from the journal if anything asks. About 2 MB at 2 KB an event.
KEEP = 1_000


class Session:
    """One driver's handle on a run's stream. See the module docstring."""

    def __init__(
        self,
        journal: Journal,
        run_id: str,
        *,
        recorded: Sequence[Event] | None = None,
        replay: bool = False,
        stop: Callable[[], StopRequest | None] | None = None,
        resumed_by: str = "operator",
        faults: Faults | None = None,
        steps: int | None = None,
        until: float | None = None,
        ceilings: Ceilings | None = None,
        stream: str | None = None,
        source: Journal | None = None,
        snapshots: Snapshots | None = None,
        snapshot_every: int = EVERY,
    ) -> None:
        self.journal = journal
        self.run_id = run_id
        self.stream = stream or streams.journal(run_id)
        # Where the record came from: the journal itself, except in a replay, which writes
        # into a fresh journal and must still find the record of the run's other streams.
        self.source = source or journal
        self.replay = replay
        # Loop snapshots (runtime/snapshots.py): a replay neither reads nor takes them, it
        # re-runs every turn against the record.
        self.snapshots = None if replay else snapshots
        self.snapshot_every = snapshot_every
        # Found when reading, not yet taken up; and taken, kept once what it covers is written
        # (runtime/session_snapshots.py).
        self.snapshot_found: LoopSnapshot | None = None
        self.snapshot_due: LoopSnapshot | None = None
        # The record and what this session emitted (runtime/record.py), with the places a
        # snapshot lets it skip, or a parked flight let go of, read back when looked at.
        if recorded is None:
            found, gap, self.snapshot_found = read_record(self.journal, self.stream, self.snapshots)
        else:
            found, gap = list[Event | None](recorded), None
        self.record = Record(self.source, self.stream, found, gap, on_fill=self._filled)
        self.skipped = 0  # events a snapshot let this session neither read nor replay
        self.cursor = 0
        # Resuming writes after the record; a replay writes everything into a fresh journal.
        self.version = 0 if replay else len(self.record.recorded)
        self.stop = stop
        self.resumed_by = resumed_by
        # Passed in by the host that read them; a session never reads the environment.
        self.faults = faults if faults is not None else Faults()
        self.counts: Counter[str] = Counter()
        self.executions: Counter[str] = Counter()  # live executions per tool, for fault points
        # Emitted, not yet written (`hold`): they go with the next batch. Their crash-test
        # seams fire once they are written.
        self._held: list[Event] = []
        self._held_faults: list[tuple[Event, int, int]] = []
        self.clients: dict[str, ReplayClient] = {}
        self.steps = steps  # live turns this session may start; None: as many as it takes
        # After this time.monotonic() value no further live turn starts (one always does): a
        # worker keeps a run's session warm for a slice of time, not for the whole run.
        self.until = until
        self.live_turns = 0
        self.start = StepStart()  # when this step began, and what is done before its live work
        # Set by a warm flight: called where the step ends, it returns when the next step
        # begins (steps, until and live_turns set anew), or raises to unwind the flight.
        self.pause: Callable[[], None] | None = None
        self.ceilings = ceilings or Ceilings()
        first = self.record.recorded[0] if self.record.recorded else None
        # The wall clock the ceiling counts: from the run's first event, less the time between
        # a parent's event and a fork made from it (its copied events keep the parent's
        # times), as a reply's deadline does (runtime/coordination/deadlines.py), where a fork
        # made an hour after its parent's start was halted at its first turn.
        gaps = fork_gaps(self.record.recorded)
        self.started = first.t + gaps if first is not None else time.time()
        # People's messages put in where the run was forked, per agent, not yet read.
        self.inbox: dict[str, list[MessageInjected]] = {}
        # A fork's turn cap and allowance, in force once the cursor passes its RunForked.
        self.limits = Limits()

    # --- the record --------------------------------------------------------------------------

    @property
    def recorded(self) -> list[Event]:
        """What the journal recorded for the stream when the session began (all of it: the
        events a snapshot let the session skip are read when somebody looks here)."""
        return self.record.whole_record()

    @property
    def emitted(self) -> list[Event]:
        """Every event the run emitted in this session, one per stream version: the recorded
        ones it went through first (those a snapshot skipped, read back as recorded)."""
        return self.record.whole_emitted()

    @property
    def record_length(self) -> int:
        """How many events the record holds (read or not)."""
        return len(self.record.recorded)

    @property
    def held(self) -> int:
        """How many events are held for the next batch (`hold`)."""
        return len(self._held)

    @property
    def position(self) -> int:
        """The stream version of the last event emitted (or gone through)."""
        return len(self.record.emitted)

    def ahead(self, places: int) -> Event | None:
        """The recorded event `places` past the cursor, or None past the record's end."""
        at = self.cursor + places
        return self.record.at(at) if at < len(self.record.recorded) else None

    def _filled(self) -> None:
        """The record was read back whole: a snapshot not taken up by now never will be, and
        the replay clients given a record with a gap get the whole of it."""
        self.snapshot_found = None
        for client in self.clients.values():
            client.refill(self.record.whole_record())

    def trim(self) -> None:
        """Let go of all but the newest `KEEP` events, where a flight parks between steps.

        A warm flight keeps its session, and a session kept every event the run emitted (and
        the whole record it replayed): 2 KB an event, 40-60 MB for a parked run of 20,000. The
        events let go of are in the journal; they join the record's gap and are read back, in
        one ranged read, if anything looks at them (a harness's scan of the whole run)."""
        if self.replay or not self.live or self._held:
            return
        self.record.trim(KEEP)

    # --- where we are ----------------------------------------------------------------------

    @property
    def live(self) -> bool:
        self._absorb()
        return self.cursor >= len(self.record.recorded)

    def peek(self) -> Event | None:
        return None if self.live else self.record.at(self.cursor)

    def _absorb(self) -> None:
        """Take what a person put where a fork began (RunForked, and MessageInjected into its
        agent's inbox) when the cursor reaches it: nobody's code emits these, and the cursor
        reaches them at the same place on every resume and replay."""
        while self.cursor < len(self.record.recorded):
            event = self.record.at(self.cursor)
            if not isinstance(event, MessageInjected | RunForked):
                return
            self.cursor += 1
            if isinstance(event, MessageInjected):
                self.inbox.setdefault(event.agent or "", []).append(event)
            else:
                first = self.record.at(0)
                config = first.config if isinstance(first, TeamStarted) else {}
                self.limits.take(event.changes, config.get("max_turns"))
            self.record.emitted.append(event)
            self.counts[event.kind] += 1
            if self.replay:
                self.flush()  # what was held comes first
                self.journal.append(self.stream, [event], self.version)
                self.version += 1

    def turn_cap(self, cap: int) -> int:
        """An agent's turn cap as of here: `cap`, or a fork's from its fork point on."""
        self._absorb()
        return self.limits.turn_cap(cap)

    def resize(self, budget: Budget) -> None:
        """From a fork's point on, give `budget` (and its pot) the fork's allowance, once,
        journalled: a bill read from the journal shows the ledgers the agents spent against."""
        self._absorb()
        changed = self.limits.rescale(budget)
        if changed:
            self.emit(
                *(
                    self.new(
                        BudgetAllocated,
                        name=b.name,
                        allowance=b.allowance,
                        reserve=b.reserve,
                        parent=b.parent.name if isinstance(b, SubBudget) else None,
                    )
                    for b in changed
                )
            )

    def injected(self, agent: str) -> list[MessageInjected]:
        """The people's messages for `agent` not read yet (and now read)."""
        return self.inbox.pop(agent, [])

    def new(self, cls: type[E], **fields: Any) -> E:
        return cls(run_id=self.run_id, **fields)

    # --- writing -----------------------------------------------------------------------------

    def emit(self, *events: Event) -> None:
        """Record events as one atomic batch (or check them against the record), after any
        events held back (`hold`), in the same batch."""
        self._write(events, hold=False)

    def hold(self, *events: Event) -> None:
        """Emit events whose write may wait for the next batch: they are checked against the
        record and counted now, and written with the next `emit`, or by `flush`, which the
        session calls itself before anything touches the world or ends the step (a model
        call, a tool run, an activity, a turn boundary, a snapshot). The agent loop holds a
        model's answer until its tool call's dispatch, and a tool's result until the next
        model call: one commit where there were three (a commit is most of a cheap turn)."""
        self._write(events, hold=True)

    def flush(self) -> None:
        """Write the events held back, if any."""
        if self._held:
            self._write((), hold=False)

    def _write(self, events: Sequence[Event], hold: bool) -> None:
        fresh: list[Event] = []
        replayed = 0
        for event in events:
            if not self.live:
                expected = self.record.at(self.cursor)
                if not event.same_as(expected):
                    raise ReplayDivergence(self.cursor + 1, expected, event)
                self.cursor += 1
                replayed += 1
            else:
                self.require_live()
            fresh.append(event)
        written = fresh if self.replay else fresh[replayed:]
        if hold:
            self._held += written
            noted = self._held_faults  # their seams fire once they are written
        else:
            if self._held or written:
                batch = [*self._held, *written]
                self.journal.append(self.stream, batch, self.version)
                self.version += len(batch)
                self._held = []  # only once written: a refused batch is still held
                if self.snapshot_due is not None:
                    session_snapshots.keep(self)
            noted, self._held_faults = self._held_faults, []
        for i, event in enumerate(events):
            self.counts[event.kind] += 1
            self.counts[f"{event.kind}@{event.agent}"] += 1
            self.record.emitted.append(event)
            if i >= replayed and self.faults.armed:
                noted.append(
                    (event, self.counts[event.kind], self.counts[f"{event.kind}@{event.agent}"])
                )
        if not hold:
            for event, ordinal, agent_ordinal in noted:  # crash-test seams: once it is durable
                self.faults.appended(event.kind, event.agent, ordinal, agent_ordinal)

    # --- inputs: from the record while inside it, live after ---------------------------------

    def client(self, agent: str, live: ModelClient) -> ModelClient:
        """The client an agent should ask: recorded answers first, then `live`.

        One per agent for the whole session, so an agent that runs several times (a coder
        sent back after a REJECT) picks up where its previous run left off.
        """
        client = self.clients.get(agent)
        if client is None:
            client = ReplayClient(self.record.present(), agent, then=None if self.replay else live)
            self.clients[agent] = client
        return client

    def ask(
        self, client: ModelClient, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        """Ask the model, unless the journal recorded that this very call failed, or (live) the
        writer's lease was taken over since its last write (a writer paused between its
        ModelCalled and the call): StaleEpoch, as for a tool. A takeover during the call is
        not caught: the call is made and paid for, and its answer's append refused."""
        self.flush()
        recorded = self.peek()
        if isinstance(recorded, ModelFailed):
            EndpointDown.again(recorded.error, recorded.usage)  # an outage paid for in part
            failed = errors.rebuild(recorded.error, ModelError, ReplayedModelError)
            failed.usage = recorded.usage  # type: ignore[attr-defined]  # (a ModelError)
            raise failed
        if recorded is None:
            check_standing(self.journal)
        return client.complete(messages, tools)

    def run_tool(self, tool: Tool, args: dict[str, Any]) -> Outcome:
        """Execute a checked tool call, or serve its recorded outcome."""
        self.flush()
        recorded = self.peek()
        if recorded is not None:
            if not isinstance(recorded, ToolReturned) or recorded.tool != tool.name:
                raise ReplayDivergence(self.cursor + 1, recorded, f"a call of {tool.name}")
            return replayed_outcome(recorded)
        self.require_live()
        check_standing(self.journal)  # a writer whose lease was taken over runs nothing
        self.start.ready()
        if self.faults.armed:
            self.faults.starting(self.run_id, tool.name, self.counts["ToolDispatched"])
        # Where the call stands in the stream names it: a resumed step running it again (its
        # ToolReturned was never written) names it the same.
        outcome = execute(tool, args, Call(self.stream, self.position))
        if self.faults.armed:
            self.executions[tool.name] += 1
            self.faults.executed(
                self.run_id, tool.name, self.executions[tool.name], self.counts["ToolDispatched"]
            )
        return outcome

    def sub(self, stream: str) -> Session:
        """A session of the same run on a stream of its own, for work that runs beside this
        one (a parallel worker): its own versions, its own record, replayed like this one."""
        self.flush()
        sub = Session(
            self.journal,
            self.run_id,
            recorded=[r.event for r in self.source.read(stream)],
            replay=self.replay,
            stop=self.stop,
            resumed_by=self.resumed_by,
            faults=self.faults,
            ceilings=self.ceilings,
            stream=stream,
            source=self.source,
        )
        sub.start = self.start  # the same step
        return sub

    def activity(self, cls: type[E], work: Callable[[], dict[str, Any]], **envelope: Any) -> E:
        """A harness side effect whose outcome is one event: done once, then read back.

        `work` must be idempotent: a crash after it ran and before its event was written
        runs it again on resume.
        """
        self.flush()
        recorded = self.peek()
        if recorded is not None:
            if not isinstance(recorded, cls):
                raise ReplayDivergence(self.cursor + 1, recorded, f"a {cls.kind}")
            self.emit(recorded)
            return recorded
        self.require_live()
        check_standing(self.journal)  # nor commits, merges or prepares a workspace
        self.start.ready()
        event = self.new(cls, **envelope, **work())
        self.emit(event)
        return event

    def dead_letter(self, reason: str, attempts: int, last_error: str, **envelope: Any) -> str:
        """Park work for a person; returns their decision, "retry" or "discard".

        While nobody has decided, this raises Parked: the run rests with a DeadLettered event
        last, and the decision (DeadLetterRetried or DeadLetterDiscarded, appended to the run
        by whoever decides) is read back here when the run is driven again.
        """
        letter_id = f"{self.run_id}:{self.counts['DeadLettered'] + 1}"
        self.emit(
            self.new(
                DeadLettered,
                letter_id=letter_id,
                reason=reason,
                attempts=attempts,
                last_error=last_error,
                **envelope,
            )
        )
        decision = self.peek()
        if isinstance(decision, DeadLetterRetried) and decision.letter_id == letter_id:
            self.emit(decision)
            return "retry"
        if isinstance(decision, DeadLetterDiscarded) and decision.letter_id == letter_id:
            self.emit(decision)
            return "discard"
        if decision is not None:
            raise ReplayDivergence(self.cursor + 1, decision, f"a decision on {letter_id}")
        self.require_live()
        raise Parked(letter_id, reason)

    def require_live(self) -> None:
        if self.replay and self.live:
            raise ReplayEnded("the journal ends here and a replay does not go on live")
