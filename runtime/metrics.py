"""Coordination metrics of a run, as a fold: is the team worth what it costs?

Seed 02 (§40-41) asks for numbers that say whether coordinating agents paid for itself. Each
metric is defined in docs/metrics.md: which events it counts, and why it is null — not 0 — when
the journal lacks the events that define it (a reference journal, a team that never coordinates
that way, events this runtime does not journal yet). Every metric comes back as
`{"value": number | None, "reason": str | None, ...what it was computed from}`.

The state keeps counters, per agent a handful of numbers (bounded by the team's size), and only
what later events still need: the messages not yet delivered, the lanes' calls in flight, the
conflicts and dead letters a person has not decided yet, the tasks reviewed. It emits no rows:
the result is read from the state, as the bill's and the resume point's are, so a projector keeps
it current for what each batch costs. Duplicate work is the diagnosis's own fold
(`diagnose.DuplicateWork`) stepped inside this one, so both say the same about the same writes;
so are orphaned commitments, deadlocks and livelock (runtime/signatures/obligations.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from runtime import folds, metric_values, roles, streams
from runtime.diagnose import DuplicateWork, team_roles
from runtime.events import (
    ClaimAsserted,
    ClaimsReconciled,
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    DeadlinePassed,
    DeskChecked,
    LeaseGranted,
    MessageDelivered,
    MessageSent,
    ModelCalled,
    ModelFailed,
    ModelResponded,
    MutationRefused,
    RecoveryRouted,
    RunForked,
    SagaSettled,
    StaleWorkRejected,
    SuiteChecked,
    TaskEscalated,
    TeamFinished,
    TeamStarted,
    ToolDispatched,
    ToolReturned,
    WorkerHandedOff,
    WorkerTimedOut,
)
from runtime.folds import Fold, Key, Out, Row, Rows, State
from runtime.journal import Recorded
from runtime.metric_sums import summed
from runtime.signatures.base import lane
from runtime.signatures.obligations import Deadlocks, Livelocks, OrphanedCommitments

NAMES = (
    "duplicate_work_rate",
    "coordination_overhead_ratio",
    "assignment_handoff_count",
    "ownership_conflict_rate",
    "stale_message_rate",
    "conflict_resolution_latency",
    "deadlock_rate",
    "livelock_rate",
    "verification_independence_rate",
    "commitment_orphan_rate",
    "handoff_failure_rate",
    "coordination_cost_per_verified_success",
)
# The diagnosis's folds these metrics count with (each stepped on its own kinds).
OBLIGATIONS = (OrphanedCommitments(), Deadlocks(), Livelocks())
# Each metric in one sentence, as pages show it beside the value (docs/metrics.md says more).
DEFINITIONS = {
    "duplicate_work_rate": "Files written by two or more agents, over the files written.",
    "coordination_overhead_ratio": "Tokens of agents that only coordinate (assign, review, "
    "test others' work) over the tokens of the agents doing the work.",
    "assignment_handoff_count": "REQUESTs sent to another agent, and workers handed off.",
    "ownership_conflict_rate": "Contested claims (conflicts parked, claims reconciled, stale "
    "work rejected, or refused at the mutation gate for a stale intent or lease) over the "
    "claims and leases asserted (not the driver's own step lease).",
    "stale_message_rate": "Deliveries that were duplicates or already superseded by a newer "
    "message on the same thread, over all deliveries.",
    "conflict_resolution_latency": "Mean seconds from a conflict parked for a person to its "
    "resolution: conflicts only (the run's whole wait for people, dead letters included, is "
    "waiting_for_people_seconds beside it).",
    "deadlock_rate": "Cycles of waits (open requests, leases awaited) found, over the waits.",
    "livelock_rate": "Tasks escalated at the REJECT round cap or showing a livelock signal "
    "(reopened, oscillating, the same conflict again), over the tasks looked at: those "
    "reviewed, and every one that livelocked.",
    "verification_independence_rate": "Checks made by somebody who wrote nothing in the run "
    "(the harness always), over all checks.",
    "commitment_orphan_rate": "Commitments left open when the run ended, over those made (or "
    "requests taken up and dropped, in runs that made none).",
    "handoff_failure_rate": "Hand-offs whose deadline passed or whose worker timed out or was "
    "routed to recovery, over the hand-offs.",
    "coordination_cost_per_verified_success": "Coordination tokens of a run the harness "
    "verified done (null when it did not end done, or a saga undid its work: compensated).",
}


class Named(NamedTuple):
    """A metric as a person reads it: its full name, and a short one for a narrow column."""

    full: str
    short: str


# Each metric's name on the pages: the run's Metrics tab heads its row with the full name (the
# key beneath it, which docs/metrics.md and the API use) and /metrics heads its columns with the
# short one (the full in its title). Kept here, beside the definitions, so both pages say one.
TITLES = {
    "duplicate_work_rate": Named("Duplicate work", "Duplicate"),
    "coordination_overhead_ratio": Named("Coordination overhead ratio", "Overhead ratio"),
    "assignment_handoff_count": Named("Assignments and hand-offs", "Hand-offs"),
    "ownership_conflict_rate": Named("Contested ownership", "Contested"),
    "stale_message_rate": Named("Stale messages", "Stale"),
    "conflict_resolution_latency": Named("Mean time to resolve a conflict", "To resolve"),
    "deadlock_rate": Named("Deadlocks", "Deadlock"),
    "livelock_rate": Named("Livelocked tasks", "Livelock"),
    "verification_independence_rate": Named("Independent checks", "Independent"),
    "commitment_orphan_rate": Named("Orphaned commitments", "Orphaned"),
    "handoff_failure_rate": Named("Failed hand-offs", "Hand-offs failed"),
    "coordination_cost_per_verified_success": Named(
        "Coordination cost per verified success", "Coord. per success"
    ),
}


def title(key: str) -> Named:
    """The metric's names; its key for both when it has none (a state stored by a later
    version, read by this one, may hold a metric this one does not know)."""
    return TITLES.get(key) or Named(key, key)


VERIFY_TOOL = "run_tests"


class Discard:
    """An Out that keeps nothing: DuplicateWork's rows and notes belong to the diagnosis;
    the metrics read only its state (who wrote which file)."""

    def add(self, key: Key, row: Row) -> None:
        pass

    def put(self, key: Key, row: Row) -> None:
        pass

    def change(self, key: Key, fields: Row) -> None:
        pass

    def drop(self, key: Key) -> None:
        pass

    def note(self, key: str, position: int) -> None:
        pass

    def notes(self, key: str) -> list[int]:
        return []

    def part(self, name: str) -> Out:
        return self


DISCARD = Discard()
DUPLICATES = DuplicateWork()
_CONCERNED: dict[str, tuple[Fold, ...]] = {}  # kind -> the obligations that step it
ORPHANS, DEADLOCKS, LIVELOCKS = OBLIGATIONS


class Metrics(Fold):
    """The twelve coordination metrics of seed 02 §40, per run (docs/metrics.md)."""

    name: ClassVar[str] = "metrics"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        (
            "TeamStarted",
            "ModelCalled",
            "ModelResponded",
            "ModelFailed",
            "ToolDispatched",
            "ToolReturned",
            "MessageSent",
            "MessageDelivered",
            "WorkerHandedOff",
            "WorkerTimedOut",
            "RecoveryRouted",
            "DeadlinePassed",
            "TaskEscalated",
            "ClaimAsserted",
            "LeaseGranted",
            "ClaimsReconciled",
            "ConflictParked",
            "ConflictResolved",
            "StaleWorkRejected",
            "MutationRefused",
            "DeadLettered",
            "DeadLetterRetried",
            "DeadLetterDiscarded",
            "SuiteChecked",
            "DeskChecked",
            "TeamFinished",
            "SagaSettled",
            "RunForked",
        )
    ).union(*(f.kinds or () for f in OBLIGATIONS))

    def start(self) -> State:
        return {
            "duplicates": DUPLICATES.start(),
            **{f.name: f.start() for f in OBLIGATIONS},
            # agent -> [tokens, seconds, coordinates (0/1)]
            "agents": {},
            "called": {},  # lane -> t of its ModelCalled awaiting a response
            "dispatched": {},  # lane -> t its tool call (or last attempt) started
            "timed": False,  # whether any model or tool time could be measured
            "waiting": {},  # message key -> [task, recipient, t sent, superseded (0/1)]
            "transit": 0.0,  # seconds messages spent between sent and delivered
            "deliveries": 0,
            "stale": 0,
            "handoffs": 0,
            "failed": [],  # the hand-offs that failed (keys), each counted once
            "claims": 0,
            "contested": 0,
            "parked": {},  # conflict id -> t parked, until a person resolves it
            "parked_on": {},  # conflict id -> [subject, predicate], until it is resolved
            "ruled": [],  # [subject, predicate] of rulings whose ClaimsReconciled is to come
            "resolved": [0, 0.0, 0.0],  # count, seconds in all, longest
            "letters": {},  # letter id -> t dead-lettered, until a person decides
            "human_wait": 0.0,  # seconds conflicts and dead letters waited for a person
            "lettered": 0,  # dead letters, decided or not
            "reviewed": [],  # tasks with a review verdict
            "livelocked": [],  # tasks escalated at the REJECT round cap
            "checks": [0, 0],  # verifications, of which independent
            "status": None,
            "undone": False,  # a saga's steps were undone (compensated): see `verdict`
        }

    def agent(self, state: State, name: str | None) -> list[Any]:
        row: list[Any] = state["agents"].setdefault(name or "?", [0, 0.0, 0])
        return row

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        concerned = _CONCERNED.get(e.kind)
        if concerned is None:
            concerned = _CONCERNED[e.kind] = tuple(
                f for f in OBLIGATIONS if f.kinds is None or e.kind in f.kinds
            )
        for fold in concerned:
            part = state.get(fold.name)
            if part is None:  # a state stored before these metrics counted with them
                part = state[fold.name] = fold.start()
            fold.step(part, rec, DISCARD)
        # The kinds every turn brings first, each tested once; the rare ones after.
        if isinstance(e, ModelResponded):
            row = self.agent(state, e.agent)
            row[0] += e.usage.total
            called = state["called"].pop(lane(rec), None)
            if called is not None and e.t:
                row[1] += max(0.0, e.t - called)
                state["timed"] = True
        elif isinstance(e, ToolReturned):
            DUPLICATES.step(state["duplicates"], rec, DISCARD)
            self.returned(state, rec, e)
        elif isinstance(e, ToolDispatched):
            DUPLICATES.step(state["duplicates"], rec, DISCARD)
            if e.t:
                state["dispatched"][lane(rec)] = e.t
            else:
                state["dispatched"].pop(lane(rec), None)
        elif isinstance(e, ModelCalled):
            if e.t:
                state["called"][lane(rec)] = e.t
        elif isinstance(e, ModelFailed) and e.usage is not None:
            self.agent(state, e.agent)[0] += e.usage.total  # paid for: the bill counts it too
        elif isinstance(e, MessageSent):
            self.sent(state, rec, e, team_roles(state, e))
        elif isinstance(e, MessageDelivered):
            self.delivered(state, rec, e)
        elif isinstance(e, TeamStarted):
            team_roles(state, e)  # keeps the team's roles for the verdicts to come
        elif isinstance(e, WorkerHandedOff):
            state["handoffs"] += 1
        elif isinstance(e, WorkerTimedOut | RecoveryRouted):
            self.fail(state, folds.key("worker", e.worker_id, str(e.attempt)))
        elif isinstance(e, DeadlinePassed):
            self.fail(state, folds.key("message", e.request))
        elif isinstance(e, TaskEscalated):
            task = e.task_id or "-"
            if e.cause == "reject_cap" and task not in state["livelocked"]:
                state["livelocked"].append(task)
        elif isinstance(e, ClaimAsserted | LeaseGranted):
            # The driver's lease says which worker ran a step: infrastructure, not an agent
            # owning work. A stored run's fold sees it; the run's journal streams do not.
            if rec.stream != streams.driver_lease(e.run_id):
                state["claims"] += 1
        elif isinstance(e, ClaimsReconciled):
            # A person's ruling on a parked conflict settles its claims too: the contest was
            # counted when it was parked, where deciding it counted it again (0.5 became 1.0).
            ruled = state.setdefault("ruled", [])
            if [e.subject, e.predicate] in ruled:
                ruled.remove([e.subject, e.predicate])
            else:
                state["contested"] += 1
        elif isinstance(e, StaleWorkRejected):
            state["contested"] += 1
        elif isinstance(e, MutationRefused) and e.check in ("intent", "lease"):
            state["contested"] += 1  # stale work, refused at the gate (StaleWorkRejected before)
        elif isinstance(e, ConflictParked):
            state["contested"] += 1
            state["parked"][e.conflict_id] = e.t
            state.setdefault("parked_on", {})[e.conflict_id] = [e.subject, e.predicate]
        elif isinstance(e, ConflictResolved):
            parked = state["parked"].pop(e.conflict_id, None)
            if (on := state.setdefault("parked_on", {}).pop(e.conflict_id, None)) is not None:
                state.setdefault("ruled", []).append(on)  # its ClaimsReconciled comes next
            if parked is not None:
                waited = max(0.0, e.t - parked) if parked and e.t else 0.0
                done = state["resolved"]
                done[0] += 1
                done[1] += waited
                done[2] = max(done[2], waited)
                state["human_wait"] += waited
        elif isinstance(e, DeadLettered):
            state["letters"][e.letter_id] = e.t
            # Kept since the metrics page (a state stored before has no count: it starts at 0).
            state["lettered"] = state.get("lettered", 0) + 1
        elif isinstance(e, DeadLetterRetried | DeadLetterDiscarded):
            lettered = state["letters"].pop(e.letter_id, None)
            if lettered and e.t:
                state["human_wait"] += max(0.0, e.t - lettered)
        elif isinstance(e, SuiteChecked | DeskChecked):
            self.check(state, independent=True)  # the harness checks, no agent
        elif isinstance(e, TeamFinished):
            state["status"] = e.status
        elif isinstance(e, SagaSettled) and e.undone:
            # Read as the run's summary reads it (views.Summary): its own streams only.
            if rec.stream.startswith(("run-", "worker-")):
                state["undone"] = True
        elif isinstance(e, RunForked):
            # A fork's tokens up to here were its parent's (its copied prefix): kept per agent
            # so that the sums across runs count them once (journal_store/metrics_days.py).
            state["inherited"] = {name: row[0] for name, row in state["agents"].items()}
            # And every other figure the sums add up, as the prefix left it (the last
            # RunForked: a fork of a fork copied its parent's, which ends before it).
            state["copied"] = summed(self.result(state, folds.Rows()))
            # Each RunForked's, in order: a fork of a fork copied its parent's, which says
            # where that parent began in its own parent and what that prefix held, so the
            # sums can count a chain whose middle run is not in the store (run_columns.lineage).
            state.setdefault("forks", []).append(
                {"parent": e.parent, "inherited": state["inherited"], "copied": state["copied"]}
            )

    def returned(self, state: State, rec: Recorded, e: ToolReturned) -> None:
        here = lane(rec)
        began = state["dispatched"].get(here)
        if began is not None and e.t:
            self.agent(state, e.agent)[1] += max(0.0, e.t - began)
            state["dispatched"][here] = e.t  # a retried call's next attempt starts here
            state["timed"] = True
        if e.error is None:
            state["dispatched"].pop(here, None)
        if e.tool != VERIFY_TOOL or e.error is not None:
            return
        writers = metric_values.writers(state)
        if not writers:
            return  # a test run before anything was written reproduces, it verifies nothing
        independent = (e.agent or "?") not in writers
        if independent:
            self.agent(state, e.agent)[2] = 1  # a tester: it checks others' work
        self.check(state, independent)

    def sent(self, state: State, rec: Recorded, e: MessageSent, cast: dict[str, str]) -> None:
        task = e.task_id or "-"
        for waiting in state["waiting"].values():
            if waiting[0] == task and waiting[1] == e.recipient:
                waiting[3] = 1  # a newer message to the same reader on the same thread
        state["waiting"][e.message_id or str(rec.position)] = [task, e.recipient, e.t, 0]
        performative = e.performative.lower()
        if performative == "request" and e.sender != e.recipient:
            state["handoffs"] += 1
            self.agent(state, e.sender)[2] = 1  # it assigns work
        elif (
            performative in ("accept", "reject")
            and roles.has(cast, e.sender, "reviews")
            and not roles.has(cast, e.recipient, "writes")  # an award or refusal of a bid
        ):
            self.agent(state, e.sender)[2] = 1
            if task not in state["reviewed"]:
                state["reviewed"].append(task)
            self.check(state, e.sender not in metric_values.writers(state))

    def delivered(self, state: State, rec: Recorded, e: MessageDelivered) -> None:
        state["deliveries"] += 1
        waiting = state["waiting"]
        found = waiting.pop(e.message_id, None) if e.message_id else None
        if found is None and not e.message_id:
            task = e.task_id or "-"
            for k in reversed(list(waiting)):
                if waiting[k][0] == task and waiting[k][1] == e.recipient:
                    found = waiting.pop(k)
                    break
        if e.duplicate or (found is not None and found[3]):
            state["stale"] += 1
        if found is not None and found[2] and e.t:
            state["transit"] += max(0.0, e.t - found[2])

    @staticmethod
    def fail(state: State, key: str) -> None:
        if key not in state["failed"]:
            state["failed"].append(key)

    @staticmethod
    def check(state: State, independent: bool) -> None:
        state["checks"][0] += 1
        state["checks"][1] += int(independent)

    def result(self, state: State, rows: Rows) -> dict[str, dict[str, Any]]:
        return metric_values.values(state)


def metrics(records: Sequence[Recorded]) -> dict[str, dict[str, Any]]:
    """The run's coordination metrics (docs/metrics.md)."""
    out: dict[str, dict[str, Any]] = folds.run(Metrics(), records)
    return out


__all__ = ["DEFINITIONS", "NAMES", "TITLES", "Metrics", "Named", "metrics", "title"]
