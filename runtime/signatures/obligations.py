"""What agents owed and waited for: orphaned commitments, deadlocks, delegation past its limits,
livelock. Each reads the primitives' events where a run has them, and the requests, facts and
conflicts themselves where it does not (a journal written before they existed)."""

from __future__ import annotations

from typing import Any, ClassVar

from runtime.coordination import livelock
from runtime.coordination.delegation import MAX_DEPTH
from runtime.coordination.livelock import Signals
from runtime.coordination.waits import WaitGraph, describe
from runtime.events import (
    CommitmentAcknowledged,
    CommitmentMade,
    CommitmentReleased,
    CommitmentTransferred,
    DeadlockDetected,
    DelegationRefused,
    LivelockDetected,
    MessageSent,
    RunStarted,
    TeamFinished,
)
from runtime.folds import Fold, Out, Rows, State, key
from runtime.journal import Recorded
from runtime.signatures.base import Finding, finding

# An agent's run on a task that stopped for a reason another signature (or the harness's own
# handling) already answers: the obligation it held is not silently left open.
STOPS = frozenset(
    (
        "AgentFinished",  # its report: the harness answers for what comes of it
        "BudgetExhausted",
        "TurnCapReached",
        "ReplyOverdue",
        "BreakerTripped",
        "RunInconclusive",
        "TaskEscalated",
        "DeadlinePassed",
    )
)


class OrphanedCommitments(Fold):
    """Keeps the open commitments (CommitmentMade until released; a transfer changes the owner
    and waits for its acknowledgement); when the run finishes, each still open is a finding.

    A journal with no CommitmentMade (written before commitments, or by a team that keeps
    none) is read by the obligation a REQUEST makes: its recipient, once it ran on the task,
    owes a message or a report on it. A message from it, its report, an escalation or a passed
    deadline on the task, or a stop of its run that another signature reports, discharges it;
    one still owed when the run finishes was orphaned: its run ended some other way (its model
    failed, it crashed) and nobody took the task back."""

    name: ClassVar[str] = "orphaned_commitment"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        (
            "CommitmentMade",
            "CommitmentAcknowledged",
            "CommitmentReleased",
            "CommitmentTransferred",
            "MessageSent",
            "RunStarted",
            "TeamFinished",
            *STOPS,
        )
    )

    def start(self) -> State:
        # made: commitments made; taken: requests taken up (the orphan rate's denominators)
        return {"explicit": False, "made": 0, "taken": 0, "open": {}, "owed": {}, "orphaned": 0}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        task = e.task_id or "-"
        if isinstance(e, CommitmentMade):
            state["explicit"] = True
            state["made"] += 1
            state["open"][e.commitment_id] = {
                "owner": e.owner,
                "what": e.what,
                "acked": False,
                "from": None,
                "positions": [rec.position],
            }
        elif isinstance(e, CommitmentAcknowledged | CommitmentTransferred):
            c = state["open"].get(e.commitment_id)
            if c is None:
                return
            c["positions"].append(rec.position)
            if isinstance(e, CommitmentTransferred):
                c.update(owner=e.to_owner, acked=False, **{"from": e.from_owner})
            else:
                c["acked"] = True
        elif isinstance(e, CommitmentReleased):
            state["open"].pop(e.commitment_id, None)
        elif isinstance(e, MessageSent):
            owed = state["owed"]
            owed.pop(key(task, e.sender), None)  # it said something on the task
            if e.performative.lower() == "request" and e.sender != e.recipient:
                owed[key(task, e.recipient)] = {
                    "by": e.recipient,
                    "to": e.sender,
                    "task": task,
                    "ran": False,
                    "positions": [rec.position],
                }
        elif isinstance(e, RunStarted):
            o = state["owed"].get(key(task, e.agent))
            if o is not None and not o["ran"]:
                o["ran"] = True
                state["taken"] += 1
                o["positions"].append(rec.position)
        elif e.kind in STOPS:
            state["owed"].pop(key(task, e.agent), None)
            if e.kind in ("TaskEscalated", "DeadlinePassed"):
                for k in [k for k, o in state["owed"].items() if o["task"] == task]:
                    del state["owed"][k]
        elif isinstance(e, TeamFinished):
            self.finished(state, rec, out)

    @staticmethod
    def finished(state: State, rec: Recorded, out: Out) -> None:
        if state["explicit"]:
            for cid, c in state["open"].items():
                handed = (
                    f"; handed on by {c['from']}, never acknowledged"
                    if c["from"] and not c["acked"]
                    else ""
                )
                out.add(
                    cid,
                    finding(
                        "orphaned_commitment",
                        f"{c['owner']}'s commitment {cid} ({c['what']}) was still open when "
                        f"the run finished{handed}",
                        [*c["positions"], rec.position],
                        commitment=cid,
                        agents=[c["owner"]],
                    ),
                )
                state["orphaned"] += 1
            state["open"] = {}
            return
        for k, o in state["owed"].items():
            if not o["ran"]:
                continue  # never taken up: the unanswered_request finding's
            out.add(
                k,
                finding(
                    "orphaned_commitment",
                    f"{o['by']} took up {o['to']}'s request on {o['task']} and the run "
                    "finished with nothing from it and nobody given the task",
                    [*o["positions"], rec.position],
                    task_id=o["task"],
                    agents=[o["by"]],
                ),
            )
            state["orphaned"] += 1
        state["owed"] = {}

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class Deadlocks(Fold):
    """Steps the wait-for graph (runtime/coordination/waits.py) over the journal: a wait that
    closes a cycle of open waits is a deadlock nothing broke, and a DeadlockDetected one the
    harness broke. A cycle of requests on one task only is a delegation cycle, which
    `DelegationLimits` reports."""

    name: ClassVar[str] = "deadlock"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        (
            "MessageSent",
            "LeaseAwaited",
            "LeaseGranted",
            "LeaseReleased",
            "LeaseTaken",
            "LeaseGivenBack",
            "DeadlockDetected",
        )
    )

    def start(self) -> State:
        return {"graph": {"waits": {}}, "found": [], "waits": 0, "deadlocks": 0}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        graph = WaitGraph(state["graph"])
        wait = graph.wait_of(e, rec.position)
        graph.step(e, rec.position)
        if wait is not None:
            state["waits"] += 1
            cycle = graph.cycle(wait)
            lease_free = all(w["key"].startswith("request:") for w in cycle or [])
            if cycle is None or (lease_free and len({w["task"] for w in cycle}) == 1):
                return
            self.found(
                state,
                out,
                cycle,
                f"deadlock: {describe(cycle)}; nothing broke the cycle",
                rec.position,
                None,
            )
        elif isinstance(e, DeadlockDetected):
            if e.waits and str(e.waits[-1].get("key", "")).startswith("request:"):
                state["waits"] += 1  # a refused request was never sent, but it was a wait
            self.found(
                state,
                out,
                e.waits,
                f"deadlock broken: {e.reason} ({e.rule})",
                rec.position,
                e.refused,
            )

    @staticmethod
    def found(
        state: State,
        out: Out,
        cycle: list[dict[str, Any]],
        summary: str,
        position: int,
        refused: str | None,
    ) -> None:
        agents = sorted({str(w.get("waiter")) for w in cycle})
        k = key(*agents)
        seen = k in state["found"]
        if not seen:
            state["found"].append(k)
            state["deadlocks"] += 1
        cited = [int(w["at"]) for w in cycle if refused is None and isinstance(w.get("at"), int)]
        row = finding("deadlock", summary, [*cited, position], agents=agents, refused=refused)
        (out.put if seen else out.add)(k, row)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class DelegationLimits(Fold):
    """Keeps, per task, the open REQUESTs (each until its recipient answers on the task with
    anything but a REQUEST of its own, which hands the work on). A REQUEST to an agent already
    on the chain of requests that reached its sender is a delegation cycle, and one deeper than
    the limit a delegation too deep, in journals from before the limits; where the limits
    refused one (DelegationRefused), the finding says so."""

    name: ClassVar[str] = "delegation_limit"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("MessageSent", "DelegationRefused"))

    def start(self) -> State:
        return {"open": {}}  # task -> [[sender, recipient, position], ...]

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, DelegationRefused):
            rule = "delegation_cycle" if e.rule == "cycle" else "delegation_too_deep"
            out.add(
                rec.position,
                finding(
                    rule,
                    f"refused: {e.reason}",
                    [rec.position],
                    task_id=e.task_id,
                    agents=[*e.chain, e.to],
                ),
            )
            return
        assert isinstance(e, MessageSent)
        task = e.task_id or "-"
        edges: list[list[Any]] = state["open"].setdefault(task, [])
        if e.performative.lower() != "request" or e.sender == e.recipient:
            edges[:] = [edge for edge in edges if edge[1] != e.sender]  # it answered
            if not edges:
                state["open"].pop(task, None)
            return
        chain, positions = [e.sender], [rec.position]
        while (into := next((x for x in edges if x[1] == chain[0]), None)) and (
            into[0] not in chain
        ):
            chain.insert(0, into[0])
            positions.insert(0, into[2])
        edges.append([e.sender, e.recipient, rec.position])
        if e.recipient in chain:
            loop = " → ".join([*chain, e.recipient])
            kind, what = "delegation_cycle", f"a delegation cycle on {task}: {loop}"
        elif len(chain) > MAX_DEPTH:
            kind = "delegation_too_deep"
            what = f"delegated {len(chain)} deep on {task} ({' → '.join([*chain, e.recipient])})"
        else:
            return
        out.add(
            rec.position,
            finding(
                kind,
                f"{what}; nothing refused it",
                positions,
                task_id=task,
                agents=[*chain, e.recipient],
            ),
        )

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class Livelocks(Fold):
    """Steps the livelock signals (runtime/coordination/livelock.py) over the journal: a thing
    whose signal repeats `LIMIT` times is a finding; LivelockDetected says the harness stopped
    the loop there."""

    name: ClassVar[str] = "livelock"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        (
            "Integrated",
            "CommitmentReleased",
            "MessageSent",
            "FactChanged",
            "ConflictParked",
            "StaleWorkRejected",
            "LivelockDetected",
        )
    )

    def start(self) -> State:
        return {"signals": Signals().state, "found": []}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, LivelockDetected):
            how = f"; the harness stopped it: {e.reason}"
            for signal in e.signals:
                self.found(state, out, signal, rec.position, how)
            return
        given = Signals(state["signals"]).step(e)
        if given is not None:
            out.note(given["key"], rec.position)
            if given["count"] >= livelock.LIMIT:
                self.found(state, out, given, rec.position, "")

    @staticmethod
    def found(state: State, out: Out, signal: dict[str, Any], position: int, how: str) -> None:
        k = str(signal.get("key"))
        seen = k in state["found"]
        if not seen:
            state["found"].append(k)
        row = finding(
            "livelock",
            f"livelock ({signal.get('signal')}): {signal.get('detail')}, "
            f"{signal.get('count')} times{how}",
            [*out.notes(k), position],
            signal=signal.get("signal"),
            about=k.split(":", 1)[-1],
        )
        (out.put if seen else out.add)(k, row)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())
