"""Test agents that misbehave in coordination, and the harness steps that catch them.

No team today has agents that delegate onward, wait on each other's leases or keep
commitments, so each drill is a small flight of its own: agents (named, acting in turn) that
act through the primitives of runtime/coordination/ on a run's session, and a harness that
decides the verdict (TeamFinished) from what the primitives journalled. `fly` runs a drill
live; `replay` runs the same code over the record into a fresh journal, as runtime.flight's
replay does for a team, and says whether every event came out the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runtime.coordination.commitments import Commitments
from runtime.coordination.delegation import Delegations, Refused
from runtime.coordination.facts import Facts
from runtime.coordination.leases import Leases
from runtime.coordination.livelock import Watch
from runtime.coordination.waits import WaitForGraph
from runtime.events import DeadlockDetected, Event, MessageSent, TeamFinished
from runtime.journal import Journal, MemoryJournal, Recorded
from runtime.session import Session
from runtime.stops import ReplayDivergence

Drill = Callable[[Session, Journal], TeamFinished]


@dataclass
class Flown:
    journal: MemoryJournal
    run_id: str
    finished: TeamFinished

    @property
    def records(self) -> list[Recorded]:
        return self.journal.read_all()

    @property
    def events(self) -> list[Event]:
        return [r.event for r in self.journal.read(f"run-{self.run_id}")]

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


def fly(drill: Drill, run_id: str = "r-drill") -> Flown:
    journal = MemoryJournal()
    return Flown(journal, run_id, drill(Session(journal, run_id), journal))


def replay(flown: Flown) -> bool:
    """True when the drill, run again over its record, emits every recorded event again."""
    recorded = flown.events
    fresh = MemoryJournal()
    session = Session(fresh, flown.run_id, recorded=recorded, replay=True)
    try:
        flown_again = drill_of(flown)(session, fresh)
    except ReplayDivergence:
        return False
    return session.cursor == len(recorded) and flown_again.same_as(flown.finished)


def drill_of(flown: Flown) -> Drill:
    return DRILLS[flown.run_id.removeprefix("r-")]


def finish(session: Session, status: str, reason: str) -> TeamFinished:
    event = session.new(TeamFinished, status=status, reason=reason)
    session.emit(event)
    return event


def request(session: Session, sender: str, recipient: str, task_id: str) -> None:
    session.emit(
        session.new(
            MessageSent,
            agent=sender,
            task_id=task_id,
            message_id=f"m-{sender}-{task_id}",
            performative="request",
            sender=sender,
            recipient=recipient,
        )
    )


def reply(session: Session, sender: str, recipient: str, task_id: str) -> None:
    session.emit(
        session.new(
            MessageSent,
            agent=sender,
            task_id=task_id,
            performative="done",
            sender=sender,
            recipient=recipient,
        )
    )


# --- commitments -------------------------------------------------------------------------------


def forgetful_owner(session: Session, journal: Journal) -> TeamFinished:
    """The refunds agent commits to refund the order (or say why not), finishes its own task,
    and forgets the commitment: the harness will not finish the run over an open one."""
    ledger = Commitments(session)
    ledger.make("c-refund", "refunds-agent", "refund B2001 or say why not", task_id="T1")
    ledger.acknowledge("c-refund", "refunds-agent")
    reply(session, "refunds-agent", "orchestrator", "T1")  # its task done; the refund not
    left = ledger.open()
    if left:
        owed = ", ".join(f"{c.commitment_id} ({c.owner}: {c.what})" for c in left)
        return finish(session, "escalated", f"commitments still open: {owed}")
    return finish(session, "done", "every commitment released")


def stalled_owner(session: Session, journal: Journal) -> TeamFinished:
    """The orders agent holds the refund commitment under its lease on the order, stalls
    past the lease, and the support agent takes the lease over: the harness moves the
    commitment with the lease; the stalled owner can no longer release it, the new one does."""
    leases = Leases(journal, session.run_id)
    ledger = Commitments(session, leases)
    held = leases.acquire("order:B2001", "orders-agent", ttl=-1)  # it stalls: already expired
    assert held is not None
    ledger.make("c-refund", "orders-agent", "refund B2001", task_id="T1", lease=held)
    ledger.acknowledge("c-refund", "orders-agent")
    taken = leases.acquire("order:B2001", "support-agent", ttl=60)
    assert taken is not None
    ledger.reclaim("order:B2001")
    ledger.acknowledge("c-refund", "support-agent")
    ledger.release("c-refund", "support-agent", "fulfilled", "refunded 3900 cents")
    left = ledger.open()
    return finish(
        session,
        "escalated" if left else "done",
        "commitments still open" if left else "every commitment released",
    )


# --- waits -------------------------------------------------------------------------------------


def lease_pair(session: Session, journal: Journal) -> TeamFinished:
    """The coder holds the repository and waits for the database; the migrator holds the
    database and then waits for the repository. The migrator's wait closes the cycle and is
    refused; it gives the database back, and the coder takes it."""
    leases = Leases(journal, session.run_id)
    graph = WaitForGraph(session, leases)
    assert leases.acquire("repo", "coder", ttl=60) is not None
    db = leases.acquire("db", "migrator", ttl=60)
    assert db is not None
    graph.await_lease("coder", "db", task_id="T1")
    answer = graph.await_lease("migrator", "repo", task_id="T2")
    if not isinstance(answer, DeadlockDetected):
        return finish(session, "escalated", "coder and migrator wait for each other")
    leases.release(db, "refused a wait that closed a cycle")
    if leases.acquire("db", "coder", ttl=60) is None:
        return finish(session, "escalated", "the coder still cannot take the database")
    return finish(session, "done", f"deadlock broken ({answer.rule}): {answer.refused} yielded")


def asking_pair(session: Session, journal: Journal) -> TeamFinished:
    """The planner asks the tester for test results; the tester, working on it, asks the
    planner for the plan. The tester's request would close the cycle: refused, the tester
    answers from what it has, and the planner's wait ends."""
    graph = WaitForGraph(session)
    assert graph.request("planner", "tester", "T1") is None
    request(session, "planner", "tester", "T1")
    refused = graph.request("tester", "planner", "T2")
    if refused is None:
        request(session, "tester", "planner", "T2")
        return finish(session, "escalated", "planner and tester wait for each other")
    reply(session, "tester", "planner", "T1")
    return finish(session, "done", f"deadlock broken ({refused.rule}): {refused.refused} yielded")


# --- delegation --------------------------------------------------------------------------------


def delegation_cycle(session: Session, journal: Journal) -> TeamFinished:
    """The orchestrator hands the ticket to the triager, the triager to the researcher, and
    the researcher back to the orchestrator: refused, the researcher does the work itself."""
    chain = Delegations(session, max_depth=3)
    first = chain.delegate("orchestrator", "triager", task_id="T1")
    second = chain.delegate("triager", "researcher", parent=first.delegation_id, task_id="T1")
    try:
        chain.delegate("researcher", "orchestrator", parent=second.delegation_id, task_id="T1")
    except Refused as exc:
        return finish(session, "done", f"the researcher kept the work: {exc}")
    return finish(session, "escalated", "the work went round the chain")


def delegation_too_deep(session: Session, journal: Journal) -> TeamFinished:
    """Each agent hands the work one further down: the third hand-off passes the limit of
    two; the agent refused does the work itself."""
    chain = Delegations(session, max_depth=2)
    first = chain.delegate("orchestrator", "lead", task_id="T1")
    second = chain.delegate("lead", "senior", parent=first.delegation_id, task_id="T1")
    try:
        chain.delegate("senior", "junior", parent=second.delegation_id, task_id="T1")
    except Refused as exc:
        return finish(session, "done", f"the senior kept the work: {exc}")
    return finish(session, "escalated", "the work was buried under delegation")


# --- livelock ----------------------------------------------------------------------------------


def flip_flop(session: Session, journal: Journal) -> TeamFinished:
    """Two agents disagree on the order's status and each writes its own back after the
    other's, round after round (each write a proper compare-and-swap): nobody is blocked and
    nothing progresses. The harness's watch stops it."""
    facts = Facts(journal)
    watch = Watch(session)
    values = {"refunds-agent": "refund_pending", "support-agent": "closed"}
    for _ in range(5):
        for agent, value in values.items():
            current = facts.read("order:B2001")
            facts.write(
                "order:B2001", "status", value, current.version, agent, run_id=session.run_id
            )
            changes = [r.event for r in journal.read(Facts.stream("order:B2001"))]
            stopped = watch.check(changes)
            if stopped is not None:
                return finish(session, "escalated", stopped.reason)
    return finish(session, "done", "the status settled")


DRILLS: dict[str, Drill] = {
    "forgetful-owner": forgetful_owner,
    "stalled-owner": stalled_owner,
    "lease-pair": lease_pair,
    "asking-pair": asking_pair,
    "delegation-cycle": delegation_cycle,
    "delegation-too-deep": delegation_too_deep,
    "flip-flop": flip_flop,
}


def flown(name: str) -> Flown:
    return fly(DRILLS[name], f"r-{name}")


def recorded(events: list[Event], run_id: str = "r-old") -> list[Recorded]:
    """A journal's records of `events`, in the run's stream, numbered from 1: an old journal
    built by hand (one written before the events under test existed)."""
    journal = MemoryJournal()
    journal.append(f"run-{run_id}", [e.model_copy(update={"run_id": run_id}) for e in events], 0)
    return journal.read_all()
