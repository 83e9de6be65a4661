"""Views: the bill, threads, audit, resume point, status and summary of a run, as folds.

State is a view; it can be thrown away and rebuilt. Each view is a fold (see `folds`) over a
run's records in order (Recorded, so it can cite positions), with a plain-function form for a
whole list. They read the reference runtime's journals too: lines without a version, without
ModelCalled or BudgetDebited, without message ids.

What each fold keeps between events, and what it emits as rows:
- bill (runtime/bill.py): the totals per agent, task and line, the ledgers (all bounded by the
  team's size); a line's row is added at its first response and changed at every later one.
- threads: only the messages not yet delivered; each message is a row, and its delivery a
  change of that row.
- audit (runtime/audit.py): nothing; each entry is a row, and the ACCEPTs an integration may
  cite are notes.
- resume point and summary: a handful of fields.
- metrics (runtime/metrics.py): counters and what later events still need; no rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from runtime import folds, roles
from runtime import status as status_
from runtime.audit import Audit
from runtime.bill import Bill
from runtime.diagnose import SIGNATURES, Diagnosis, diagnose, team_roles
from runtime.events import (
    AgentFinished,
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    JournalImported,
    MessageDelivered,
    MessageSent,
    RunForked,
    RunInterrupted,
    RunResumed,
    RunStarted,
    SagaSettled,
    TeamFinished,
    TeamStarted,
)
from runtime.folds import Fold, State
from runtime.journal import Recorded
from runtime.metrics import Metrics, metrics
from runtime.status import DEAD_LETTERED, INTERRUPTED, RUNNING, WAITING

Records = Sequence[Recorded]
# finishing: a person discarded the work the run had stopped on, and it goes on to its end
# without it (the work's own stage is not what comes next any more).
FINISHING = "finishing"
STAGES = ("plan", "fix", "review", "verify", FINISHING, "complete", WAITING)  # waiting: a person


class Threads(Fold):
    """Messages grouped by task thread, in order, each with its performative and delivery.

    The state holds only the messages still waiting for their delivery: by message id, and per
    thread (reference journals carry no ids, so a delivery there belongs to the newest waiting
    message to that recipient on that thread).
    """

    name: ClassVar[str] = "threads"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("MessageSent", "MessageDelivered"))

    def start(self) -> State:
        return {"ids": {}, "waiting": {}}

    def step(self, state: State, rec: Recorded, out: folds.Out) -> None:
        e = rec.event
        if isinstance(e, MessageSent):
            task = e.task_id or "-"
            out.add(
                rec.position,
                {
                    "task_id": task,
                    "position": rec.position,
                    "message_id": e.message_id,
                    "performative": e.performative.upper(),
                    "sender": e.sender,
                    "recipient": e.recipient,
                    "payload": e.payload,
                    "in_reply_to": e.in_reply_to,
                    "delivered": False,
                },
            )
            state["waiting"].setdefault(task, []).append([rec.position, e.recipient])
            if e.message_id:
                state["ids"][e.message_id] = [task, rec.position]
        elif isinstance(e, MessageDelivered):
            where = state["ids"].pop(e.message_id or "", None)
            if where is not None:
                self.deliver(state, out, where[0], where[1])
                return
            for position, recipient in reversed(state["waiting"].get(e.task_id or "-", [])):
                if recipient == e.recipient:
                    # A message with an id delivered this way keeps its id entry: a later
                    # delivery naming it lands on it again, not on another message.
                    self.deliver(state, out, e.task_id or "-", position)
                    break

    @staticmethod
    def deliver(state: State, out: folds.Out, task: str, position: int) -> None:
        out.change(position, {"delivered": True})
        waiting = state["waiting"].get(task, [])
        for i, (at, _) in enumerate(waiting):
            if at == position:
                del waiting[i]
                break
        if not waiting:
            state["waiting"].pop(task, None)

    def result(self, state: State, rows: folds.Rows) -> dict[str, list[dict[str, Any]]]:
        lanes: dict[str, list[dict[str, Any]]] = {}
        for row in rows.rows.values():
            message = dict(row)
            lanes.setdefault(message.pop("task_id"), []).append(message)
        return lanes


class ResumePoint(Fold):
    """The stage the run stands at (what comes next) and the position it resumes after.

    A run that stopped for a person stands at `waiting` while its decision is open, whatever
    its work's stage: a dead letter nobody has retried or discarded, or a conflict its
    escalated verdict left for a person (as `status.derived` says "waiting"); `waiting_for`
    says which. A decision takes it back to its work's stage: where a retried letter goes on
    from, or `complete` for a run that finished escalated. A discarded letter takes it to
    `finishing`: the run is driven on to its end without that work (a repo-fix run stops, a
    triage run answers without the sub-task), until its verdict, or until staged work starts
    again.
    """

    name: ClassVar[str] = "resume_point"
    # The kinds that move the stage, or say the team (whose roles the stage reads).
    STAGED: ClassVar[frozenset[str]] = frozenset(
        ("TeamStarted", "TeamFinished", "MessageSent", "RunStarted", "AgentFinished")
    )

    def start(self) -> State:
        return {
            "stage": "plan",
            "messages": False,
            "position": 0,
            "version": 0,
            "open": {},  # the items a person is asked to decide: id -> "conflict", "dead letter"
            "escalated": False,
        }

    def step(self, state: State, rec: Recorded, out: folds.Out) -> None:
        e = rec.event
        # A letter can be in the control stream, a conflict is in its own: read before the
        # streams that are not the run's journal are passed over.
        if isinstance(e, DeadLettered | ConflictParked):
            what = "dead letter" if isinstance(e, DeadLettered) else "conflict"
            key = e.letter_id if isinstance(e, DeadLettered) else e.conflict_id
            state["open"] = {**state.get("open", {}), key: what}
        elif isinstance(e, DeadLetterRetried | DeadLetterDiscarded | ConflictResolved):
            key = e.conflict_id if isinstance(e, ConflictResolved) else e.letter_id
            was = state.get("open", {})
            if isinstance(e, DeadLetterDiscarded) and key in was and state["stage"] != "complete":
                state["stage"] = FINISHING  # not back to the stage the discarded work reached
            state["open"] = {k: v for k, v in was.items() if k != key}
        if not rec.stream.startswith("run-"):
            return  # the lease and control streams say how the run is driven, not where it is
        state["position"], state["version"] = rec.position, rec.version
        if e.kind not in self.STAGED:
            return  # most of a run (model and tool calls): only the position moves
        cast = team_roles(state, e)

        def writer(agent: str | None) -> bool:
            return roles.has(cast, agent, "writes")

        if isinstance(e, TeamFinished):
            state["stage"] = "complete"
            state["escalated"] = e.status == "escalated"
        elif isinstance(e, MessageSent):
            state["messages"] = True
            p = e.performative.lower()
            # a contract-net's award or refusal of a bid is no review
            reviewer = roles.has(cast, e.sender, "reviews")
            if (p == "request" and writer(e.recipient)) or (p == "reject" and reviewer):
                state["stage"] = "fix"
            elif p == "done" and writer(e.sender):
                state["stage"] = "review"
            elif p == "accept" and reviewer:
                state["stage"] = "verify"
        elif isinstance(e, RunStarted) and writer(e.agent) and state["stage"] == "plan":
            state["stage"] = "fix"
        elif (
            isinstance(e, AgentFinished)
            and writer(e.agent)
            and state["stage"] == "fix"
            and not state["messages"]
        ):
            state["stage"] = "verify"  # a solo run: nobody reviews, the harness checks next

    def result(self, state: State, rows: folds.Rows) -> dict[str, Any]:
        # A conflict parked while the run goes on is not yet waited for: its verdict says so.
        waiting = [
            {"what": what, "id": key}
            for key, what in state.get("open", {}).items()
            if what == "dead letter" or state.get("escalated")
        ]
        return {
            "stage": WAITING if waiting else state["stage"],
            "position": state["position"],
            "version": state["version"],
            "waiting_for": waiting,
        }


class Summary(Fold):
    """What a list of runs shows: team, task, status, times, size.

    The status is `status.derived`: the harness's verdict read beside the conflicts people
    decided, the work they discarded and the saga steps that were undone; a run with dead
    letters open (the harness's, the driver's) is dead-lettered until a person has decided
    every one of them. The clock stops where the run stops: at its verdict, at its first open
    dead letter or an interrupt (until it goes on),
    and, for an imported run with no verdict, at its last recorded event.
    """

    name: ClassVar[str] = "summary"

    def start(self) -> State:
        return {
            "team": None,
            "scenario": None,
            "task": None,
            "status": RUNNING,
            "reason": "",
            "started": None,
            "finished": None,
            # Seconds the run stood waiting for a person (an interrupt, a dead letter) and then
            # went on: its clock stops at the wait and leaves it out once the run goes on.
            "waited": 0.0,
            "events": 0,
            "started_by": None,
            "last_position": 0,
            "last_t": None,
            "verdict": None,
            "driving": RUNNING,
            # The dead letters nobody has decided yet, oldest first: id -> why it was lettered.
            # The run waits for a person until none is left, whichever is decided first.
            "letters": {},
            "conflicts": [],
            "decided": 0,
            "discarded": False,
            "undone": False,
            "imported": None,
            "parent": None,
            "fork_at": None,
            "baseline_of": None,  # the team run a single-agent baseline was flown beside
        }

    # The kinds `follow` tells apart beyond the clock and the count; any other event only
    # moves those (nearly every event of a run: model calls, tool calls, debits).
    FOLLOWED: ClassVar[frozenset[str]] = frozenset(
        (
            "DeadLettered",
            "DeadLetterRetried",
            "DeadLetterDiscarded",
            "ConflictParked",
            "ConflictResolved",
            "JournalImported",
            "RunForked",
            "TeamStarted",
            "TeamFinished",
            "SagaSettled",
            "RunInterrupted",
            "RunResumed",
        )
    )
    KEYS: ClassVar[int]  # how many keys start() holds (set below the class)

    def step(self, state: State, rec: Recorded, out: folds.Out) -> None:
        e = rec.event
        if len(state) != self.KEYS:  # a state stored before a key was kept
            for key, value in self.start().items():
                state.setdefault(key, value)
        elif e.kind not in self.FOLLOWED:
            # The status reads only what followed kinds change: nothing to derive again.
            self.count(state, rec)
            return
        self.follow(state, rec)
        state["status"] = status_.derived(
            state["verdict"],
            state["driving"],
            conflicts_open=bool(state["conflicts"]),
            conflicts_decided=state["decided"] > 0,
            discarded=state["discarded"],
            undone=state["undone"],
            imported=state["imported"] is not None,
        )

    @staticmethod
    def count(state: State, rec: Recorded) -> bool:
        """The run's size and clock moved by one of its events; False for an event of another
        stream."""
        if not rec.stream.startswith(("run-", "worker-")):
            return False  # the lease and control streams are not the run's events (its
            # specialists' are)
        t = rec.event.t
        state["events"] += 1
        state["last_position"] = rec.position
        if t:
            state["last_t"] = t
            if state["started"] is None:
                state["started"] = t
        return True

    @staticmethod
    def follow(state: State, rec: Recorded) -> None:
        e = rec.event
        if isinstance(e, DeadLettered):
            if not state["letters"]:  # the clock stops at the first: the run stood still there
                state["finished"] = e.t or None
            state["letters"] = {**state["letters"], e.letter_id: e.reason}
            state.update(driving=DEAD_LETTERED, reason=e.reason)
        elif isinstance(e, DeadLetterRetried):
            Summary.decided(state, e.letter_id, t=e.t)
        elif isinstance(e, DeadLetterDiscarded):
            state["discarded"] = True
            # Driven on without that work (the discard queued its step): running, saying so,
            # where it read dead-lettered with nothing left to decide until its verdict.
            why = f"dead letter {e.letter_id} discarded by {e.by}; the run goes on without it"
            Summary.decided(state, e.letter_id, why, e.t)
        elif isinstance(e, ConflictParked):
            state["conflicts"] = [*state["conflicts"], e.conflict_id]
        elif isinstance(e, ConflictResolved) and e.conflict_id in state["conflicts"]:
            state["conflicts"] = [c for c in state["conflicts"] if c != e.conflict_id]
            state["decided"] += 1
            chosen = "no claim" if e.choice == "none" else repr(e.value)
            state["reason"] = f"conflict {e.conflict_id} resolved by {e.by}: {chosen}"
        elif isinstance(e, JournalImported):
            state["imported"] = {"file": e.file, "by": e.by, "t": e.t}
            state["started_by"] = state["started_by"] or e.by
            if state["verdict"] is None:
                state["finished"] = state["last_t"]  # its clock is the journal's
        elif isinstance(e, RunForked):
            # A fork's past is its parent's, timestamps and all (it replays exactly); the fork
            # itself started when it was made, which its list row, duration and day say.
            state.update(parent=e.parent, fork_at=e.at, started=e.t or state["started"])
            # Its clock starts there: the parent's waits are the parent's, and a fork made at
            # an interrupt stands still from its making, not from the parent's stop.
            state["waited"] = 0.0
            if state["finished"] is not None:
                state["finished"] = e.t or state["finished"]
        if not Summary.count(state, rec):
            return
        if isinstance(e, TeamStarted):
            state.update(
                team=e.team,
                scenario=e.scenario,
                task=e.task,
                started=e.t or None,
                started_by=e.config.get("started_by"),
            )
            linked = e.config.get("baseline_of")
            state["baseline_of"] = linked if isinstance(linked, str) and linked else None
        elif isinstance(e, TeamFinished):
            state.update(verdict=e.status, reason=e.reason, finished=e.t or None)
        elif isinstance(e, SagaSettled) and e.undone:
            state["undone"] = True  # a step failed, those before it were undone: no money moved
        elif isinstance(e, RunInterrupted):
            state.update(driving=INTERRUPTED, reason=e.reason, finished=e.t or None)
        elif isinstance(e, RunResumed):
            Summary.goes_on(state, e.t)
            state.update(driving=RUNNING, reason="")

    @staticmethod
    def goes_on(state: State, t: float) -> None:
        """The run goes on after a wait for a person: its clock runs again, the wait left out
        (a run resumed an hour after its interrupt did not take an hour more)."""
        if state["finished"] is not None and t:
            state["waited"] = state.get("waited", 0.0) + max(0.0, t - state["finished"])
        state["finished"] = None

    @staticmethod
    def decided(state: State, letter_id: str, reason: str = "", t: float = 0.0) -> None:
        """A person decided a dead letter: the run goes on once no other letter of it is open
        (another one still holds it, whatever this decision was: it says why, and its clock
        stays stopped)."""
        left = {k: why for k, why in state["letters"].items() if k != letter_id}
        state["letters"] = left
        if left:
            state["reason"] = list(left.values())[-1]
        elif state["verdict"] is None:
            Summary.goes_on(state, t)
            state.update(driving=RUNNING, reason=reason)
        else:  # decided after the run ended: its verdict, reason and clock stand
            state["driving"] = RUNNING

    def result(self, state: State, rows: folds.Rows) -> dict[str, Any]:
        return dict(state)


Summary.KEYS = len(Summary().start())
ALL: tuple[Fold, ...] = (
    Summary(),
    Bill(),
    Threads(),
    Audit(),
    ResumePoint(),
    Metrics(),
    Diagnosis(),
)
# What a projector keeps, fold by fold: the diagnosis as its six signatures, so that a batch
# loads and writes only the signatures its kinds concern.
STORED: tuple[Fold, ...] = (*ALL[:-1], *SIGNATURES)


def bill(records: Records) -> dict[str, Any]:
    out: dict[str, Any] = folds.run(Bill(), records)
    return out


def threads(records: Records) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = folds.run(Threads(), records)
    return out


def audit(records: Records) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = folds.run(Audit(), records)
    return out


def resume_point(records: Records) -> dict[str, Any]:
    out: dict[str, Any] = folds.run(ResumePoint(), records)
    return out


def status(records: Records) -> str:
    """running, interrupted, or the harness's verdict."""
    out: str = folds.run(Summary(), records)["status"]
    return out


def all_views(records: Records) -> dict[str, Any]:
    return {
        "status": status(records),
        "bill": bill(records),
        "threads": threads(records),
        "audit": audit(records),
        "resume_point": resume_point(records),
        "findings": diagnose(records),
        "metrics": metrics(records),
    }
