"""Diagnosis from the journal alone: one finding per failure signature, citing its events.

    duplicate_work            two agents set out to write the same file
    unanswered_request        a REQUEST was delivered and its recipient neither replied nor ran
    done_without_evidence     a coder said DONE with no passing test run after its last edit
    transient_error_absorbed  a tool call failed, and the same call later succeeded
    reject_cap_reached        a task went back and forth between coder and reviewer until the
                              round cap escalated it
    budget_exhausted          an agent ran out of budget with its task unfinished
    missed_deadline           an agent asked for a reply let its deadline pass (absent, or present
                              and silent), once or more, on one task
    looping_agent             an agent made the same tool call (same tool, same arguments), or met
                              the same failure, three times in a row; or the loop breaker stopped it
    degraded_subtask          a fan-out sub-task ended without one verified finding (failed,
                              refused, timed out, or `ok` on claims its tool results do not back)
    breaker_tripped           a circuit breaker opened: calls behind it were refused
    saga_compensated          a saga step failed and the steps before it were undone

Each signature is a fold (see `folds`), so a projector can keep findings current event by event:
a finding is a row, added when the signature shows, replaced as it grows, dropped when later
events answer it; each signature's state keeps only what later events can still change.
Works on the reference runtime's flat journals too (no ids, no args, no ModelCalled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from runtime import folds, roles
from runtime.events import (
    AnswerComposed,
    BreakerTripped,
    BudgetExhausted,
    DeadlinePassed,
    Event,
    FindingUnsupported,
    MessageDelivered,
    MessageSent,
    ReplyOverdue,
    RunStarted,
    SagaAborted,
    SagaCompensated,
    SubtaskDegraded,
    TaskEscalated,
    TeamStarted,
    ToolDispatched,
    ToolReturned,
    WorkerReported,
)
from runtime.folds import Fold, Out, Rows, State, key
from runtime.journal import Recorded

Finding = dict[str, Any]
WRITES = ("edit_file", "write_file")


def finding(kind: str, summary: str, positions: list[int], **detail: Any) -> Finding:
    return {"kind": kind, "summary": summary, "positions": sorted(set(positions)), **detail}


def team_roles(state: State, e: Event) -> dict[str, str]:
    """The run's roles (runtime/roles.py), kept in the fold's state from its TeamStarted."""
    if isinstance(e, TeamStarted):
        state["roles"] = roles.of_team(e.team)
    found: dict[str, str] = state.get("roles") or dict(roles.CONVENTION)
    return found


def lane(rec: Recorded) -> str:
    """Where an agent's tool calls run one after the other: its stream (a run's, or a parallel
    specialist's). A call's attempts are all journalled before the lane's next dispatch, so a
    fold keeps one call per lane, not every call the run ever made."""
    return key(rec.stream, rec.event.agent)


class DuplicateWork(Fold):
    """Keeps, per file, who wrote it, and per lane (see `lane`) whether the call in flight is a
    write already counted at its dispatch; the positions of the writes are notes, read back
    once a second agent writes the same file."""

    name: ClassVar[str] = "duplicate_work"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("ToolDispatched", "ToolReturned"))

    def start(self) -> State:
        return {"writers": {}, "counted": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        path = None
        if isinstance(e, ToolDispatched):
            here = lane(rec)
            state["counted"].pop(here, None)  # the lane's previous call is over
            if e.tool in WRITES and e.args and "path" in e.args:
                path = str(e.args["path"])
                if e.call_id:
                    state["counted"][here] = e.call_id
        elif isinstance(e, ToolReturned) and e.tool in WRITES:
            here = lane(rec)
            if e.call_id and state["counted"].get(here) == e.call_id:
                if e.error is None:
                    del state["counted"][here]  # its last attempt
                return  # already counted at its dispatch
            if not isinstance(e.result, dict):
                return
            found = e.result.get("edited") or e.result.get("written")
            path = found if isinstance(found, str) else None
        if path is None:
            return
        path = path.lstrip("./")
        out.note(path, rec.position)
        writers = state["writers"].setdefault(path, [])
        agent = e.agent or "?"
        newcomer = agent not in writers
        if newcomer:
            writers.append(agent)
        if len(writers) < 2:
            return
        agents = sorted(writers)
        found_now = finding(
            "duplicate_work",
            f"{' and '.join(agents)} all wrote to {path}",
            out.notes(path),
            artefact=path,
            agents=agents,
        )
        if newcomer and len(writers) == 2:
            out.add(path, found_now)
        else:
            out.put(path, found_now)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return [row for _, row in sorted(rows.rows.items())]


class UnansweredRequests(Fold):
    """Keeps the requests not yet answered; a finding per thread and recipient with delivered
    requests among them, added, grown or dropped as they are delivered and answered."""

    name: ClassVar[str] = "unanswered_request"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("MessageSent", "MessageDelivered", "RunStarted")
    )

    def start(self) -> State:
        return {"open": []}  # requests not yet answered, in order

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        before = self.grouped(state)
        e = rec.event
        if isinstance(e, MessageSent):
            self.close(state, e.sender, e.task_id or "-")  # any message from the recipient
            if e.performative.lower() == "request":
                state["open"].append(
                    {
                        "id": e.message_id,
                        "recipient": e.recipient,
                        "task": e.task_id or "-",
                        "positions": [rec.position],
                        "delivered": False,
                    }
                )
        elif isinstance(e, MessageDelivered) and not e.duplicate:
            for r in state["open"]:
                same = (
                    r["id"] == e.message_id
                    if e.message_id
                    else (r["recipient"] == e.recipient and r["task"] == (e.task_id or "-"))
                )
                if same and not r["delivered"]:
                    r["delivered"] = True
                    r["positions"].append(rec.position)
                    break
        elif isinstance(e, RunStarted):
            self.close(state, e.agent, e.task_id)  # reference runs name no task: any run counts
        after = self.grouped(state)
        for group, positions in after.items():
            if group not in before:
                out.add(key(*group), self.finding(group, positions))
            elif before[group] != positions:
                out.put(key(*group), self.finding(group, positions))
        for group in before.keys() - after.keys():
            out.drop(key(*group))

    @staticmethod
    def close(state: State, recipient: str | None, task: str | None) -> None:
        state["open"] = [
            r
            for r in state["open"]
            if not (r["delivered"] and r["recipient"] == recipient and task in (None, r["task"]))
        ]

    @staticmethod
    def grouped(state: State) -> dict[tuple[str, str], list[int]]:
        groups: dict[tuple[str, str], list[int]] = {}
        for r in state["open"]:
            if r["delivered"]:
                groups.setdefault((r["task"], r["recipient"]), []).extend(r["positions"])
        return groups

    @staticmethod
    def finding(group: tuple[str, str], positions: list[int]) -> Finding:
        task, recipient = group
        return finding(
            "unanswered_request",
            f"{recipient} was sent a REQUEST on {task} and neither replied nor ran",
            positions,
            task_id=task,
            agents=[recipient],
        )

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return sorted(rows.rows.values(), key=lambda f: f["positions"][0])


class DoneWithoutEvidence(Fold):
    """Keeps, per agent, where its run started and whether it has tested since its last edit."""

    name: ClassVar[str] = "done_without_evidence"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("TeamStarted", "RunStarted", "ToolReturned", "MessageSent")
    )

    def start(self) -> State:
        return {"evidence": {}, "run_start": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        cast = team_roles(state, e)
        if isinstance(e, RunStarted) and e.agent:
            state["evidence"][e.agent] = False
            state["run_start"][e.agent] = rec.position
        elif isinstance(e, ToolReturned) and e.agent and e.error is None:
            if e.tool in WRITES:
                state["evidence"][e.agent] = False  # tests before an edit say nothing about it
            elif e.tool == "run_tests":
                state["evidence"][e.agent] = True
        elif (
            isinstance(e, MessageSent)
            and e.performative.lower() == "done"
            and roles.has(cast, e.sender, "writes")
            and not state["evidence"].get(e.sender, False)
        ):
            out.add(
                rec.position,
                finding(
                    "done_without_evidence",
                    f"{e.sender} said DONE on {e.task_id or '-'} without a passing test run after "
                    "its last edit",
                    [state["run_start"].get(e.sender, rec.position), rec.position],
                    task_id=e.task_id,
                    agents=[e.sender],
                ),
            )

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class TransientErrors(Fold):
    """Keeps, per lane (see `lane`), the call in flight and its arguments (its attempts may
    fail and be retried), and the calls that failed and have not succeeded since."""

    name: ClassVar[str] = "transient_error_absorbed"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("ToolDispatched", "ToolReturned"))

    def start(self) -> State:
        return {"in_flight": {}, "failed": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, ToolDispatched):
            if e.call_id:
                state["in_flight"][lane(rec)] = [e.call_id, e.args]
            else:
                state["in_flight"].pop(lane(rec), None)
        elif isinstance(e, ToolReturned):
            args = None
            here = lane(rec)
            current = state["in_flight"].get(here)
            if e.call_id and current is not None and current[0] == e.call_id:
                args = current[1]
                if e.error is None:
                    del state["in_flight"][here]  # its last attempt
            call = key(e.agent, e.tool, sorted((args or {}).items()))
            if e.error is not None:
                state["failed"].setdefault(call, rec.position)
            elif call in state["failed"]:
                first = state["failed"].pop(call)
                out.add(
                    rec.position,
                    finding(
                        "transient_error_absorbed",
                        f"{e.agent}'s {e.tool} failed and the same call later succeeded",
                        [first, rec.position],
                        agents=[e.agent],
                        tool=e.tool,
                    ),
                )

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class RejectCaps(Fold):
    """Keeps nothing: each review REJECT of a task is a note, read back when the round cap
    escalates the task."""

    name: ClassVar[str] = "reject_cap_reached"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("TeamStarted", "MessageSent", "TaskEscalated")
    )

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        cast = team_roles(state, e)
        task = e.task_id or "-"
        if (
            isinstance(e, MessageSent)
            and e.performative.lower() == "reject"
            and not roles.has(cast, e.recipient, "writes")  # a REJECT of a bid is no review
        ):
            out.note(task, rec.position)
        elif isinstance(e, TaskEscalated) and e.cause == "reject_cap":
            rejects = out.notes(task)
            out.add(
                rec.position,
                finding(
                    "reject_cap_reached",
                    f"{task} was rejected {len(rejects)} times and escalated",
                    [*rejects, rec.position],
                    task_id=task,
                ),
            )

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class BudgetExhaustion(Fold):
    """Keeps, per agent and task, where the budget ran out while the task is still undone."""

    name: ClassVar[str] = "budget_exhausted"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("BudgetExhausted", "MessageSent"))

    def start(self) -> State:
        return {"halted": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, BudgetExhausted) and e.agent:
            task = e.task_id or "-"
            pair = key(e.agent, task)
            found = finding(
                "budget_exhausted",
                f"{e.agent} ran out of budget on {task} before finishing it",
                [rec.position],
                task_id=task,
                agents=[e.agent],
            )
            (out.put if pair in state["halted"] else out.add)(pair, found)
            state["halted"][pair] = rec.position
        elif isinstance(e, MessageSent) and e.performative.lower() == "done":
            pair = key(e.sender, e.task_id or "-")
            if state["halted"].pop(pair, None) is not None:
                out.drop(pair)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


LOOP_REPEATS = 3  # identical calls in a row that make a loop (the loop breaker's default)


class LoopingAgents(Fold):
    """Keeps, per lane (see `lane`), two streaks: the same call (tool and arguments) made again
    and again, and the same failure (tool, error type and message: one conflict met again and
    again) returned call after call; each is a finding once it is `LOOP_REPEATS` long. Journals
    from before the loop breaker show the repeats themselves; where the breaker stopped the
    agent, its BreakerTripped joins the finding of the streak it cut short (or makes one)."""

    name: ClassVar[str] = "looping_agent"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("ToolDispatched", "ToolReturned", "BreakerTripped")
    )

    def start(self) -> State:
        return {"calls": {}, "failures": {}, "found": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        here = lane(rec)
        if isinstance(e, ToolDispatched):
            signature = key(e.tool, sorted((e.args or {}).items()))
            streak = self.extend(state["calls"], here, signature, e.tool, rec.position, e.call_id)
            if streak["count"] >= LOOP_REPEATS:
                what = f"called {e.tool} {streak['count']} times in a row with the same arguments"
                self.found(state, out, here, streak, e.agent, what)
        elif isinstance(e, ToolReturned):
            if e.error is None:
                state["failures"].pop(here, None)
                return
            signature = key(e.tool, e.error.type, e.error.message)
            failures = state["failures"]
            streak = self.extend(failures, here, signature, e.tool, rec.position, e.call_id)
            if streak["count"] >= LOOP_REPEATS:
                what = (
                    f"met the same failure of {e.tool} {streak['count']} times in a row "
                    f"({e.error.type}: {e.error.message})"
                )
                self.found(state, out, here, streak, e.agent, what)
        elif isinstance(e, BreakerTripped) and e.breaker.startswith("loop:"):
            # The trip ends the latest streak of the lane: the repeats it refused to run, or
            # the failures it would not meet again (already a finding).
            candidates = [s for s in (state["found"].get(here), state["calls"].get(here)) if s]
            latest: dict[str, Any] = {"positions": [], "tool": "?", "key": key(here, rec.position)}
            if candidates:
                latest = max(candidates, key=lambda s: int(s["positions"][-1]))
            streak = {**latest, "positions": [*latest["positions"], rec.position]}
            what = f"was stopped by the loop breaker: {e.reason}"
            self.found(state, out, here, streak, e.agent, what)
            state["calls"].pop(here, None)
            state["failures"].pop(here, None)

    @staticmethod
    def extend(
        streaks: dict[str, Any],
        here: str,
        signature: str,
        tool: str,
        position: int,
        call_id: str | None,
    ) -> dict[str, Any]:
        """The lane's streak grown by one call (a retry's attempts are one call)."""
        streak = streaks.get(here)
        if streak is None or streak["signature"] != signature:
            streak = streaks[here] = {
                "signature": signature,
                "tool": tool,
                "positions": [],
                "count": 0,
                "call": None,
                "key": key(here, position),
            }
        streak["positions"].append(position)
        if call_id is None or call_id != streak["call"]:
            streak["count"] += 1
        streak["call"] = call_id
        return streak

    @staticmethod
    def found(
        state: State,
        out: Out,
        here: str,
        streak: dict[str, Any],
        agent: str | None,
        what: str,
    ) -> None:
        row = finding(
            "looping_agent",
            f"{agent or '?'} {what}",
            streak["positions"],
            agents=[agent or "?"],
            tool=streak["tool"],
        )
        (out.put if streak.get("reported") else out.add)(streak["key"], row)
        streak["reported"] = True
        # a copy, never the streak itself: the state is JSON, and a stored state has no aliases
        state["found"][here] = {
            "key": streak["key"],
            "tool": streak["tool"],
            "positions": list(streak["positions"]),
            "reported": True,
        }

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class BreakerTrips(Fold):
    """Keeps, per breaker, the positions where it opened (a reset does not unmake a trip)."""

    name: ClassVar[str] = "breaker_tripped"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("BreakerTripped",))

    def start(self) -> State:
        return {"trips": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        assert isinstance(e, BreakerTripped)
        if e.breaker.startswith("loop:"):
            return  # an agent stopped for repeating itself: the looping_agent finding says so
        trips = state["trips"].setdefault(e.breaker, [])
        seen = state.setdefault("seen", {}).setdefault(e.breaker, [])
        if e.t in seen:
            return  # the same trip, copied into the run's own stream by a harness (engine.replayed)
        seen.append(e.t)
        trips.append(rec.position)
        times = "" if len(trips) == 1 else f" ({len(trips)} times)"
        found = finding(
            "breaker_tripped",
            f"breaker {e.breaker} tripped{times}: {e.reason}",
            trips,
            breaker=e.breaker,
        )
        (out.put if len(trips) > 1 else out.add)(e.breaker, found)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class MissedDeadlines(Fold):
    """Keeps, per task and awaited agent, how many deadlines passed and the last reason; the
    positions are notes. A DeadlinePassed is the harness's verdict on each request (journals
    from before ReplyOverdue have it too); a ReplyOverdue before it says which clock ran out."""

    name: ClassVar[str] = "missed_deadline"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("ReplyOverdue", "DeadlinePassed"))

    def start(self) -> State:
        return {"missed": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if isinstance(e, ReplyOverdue):
            out.note(key(e.task_id or "-", e.awaited), rec.position)
            return
        if not isinstance(e, DeadlinePassed):
            return
        pair = key(e.task_id or "-", e.awaited)
        out.note(pair, rec.position)
        seen = pair in state["missed"]
        count = state["missed"][pair] = state["missed"].get(pair, 0) + 1
        requests = "request" if count == 1 else f"{count} requests"
        (out.put if seen else out.add)(
            pair,
            finding(
                "missed_deadline",
                f"{e.awaited} let the deadline of {requests} on {e.task_id or '-'} pass: "
                f"{e.reason}",
                out.notes(pair),
                task_id=e.task_id,
                agents=[e.awaited],
            ),
        )

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class DegradedSubtasks(Fold):
    """Keeps, per fan-out sub-task, its last report's verified findings (findings of an ok
    report, less those found unsupported) and why it has none; when the answer is composed,
    each sub-task left with none is a finding. Read from the reports and the verification, so
    a journal from before SubtaskDegraded existed shows the same; where the event is there, its
    `why` is the harness's own words."""

    name: ClassVar[str] = "degraded_subtask"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("WorkerReported", "FindingUnsupported", "SubtaskDegraded", "AnswerComposed")
    )

    def start(self) -> State:
        return {"tasks": {}, "last": None, "found": []}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        tasks = state["tasks"]
        if isinstance(e, WorkerReported) and e.task_id:
            report = e.report
            ok = report.get("status") == "ok"
            tasks[e.task_id] = {
                "worker": report.get("worker_id") or e.agent or "?",
                "verified": len(report.get("findings") or []) if ok else 0,
                "why": "it reported ok with no findings"
                if ok
                else f"it failed ({report.get('reason')})",
                "unsupported": 0,
                "positions": [rec.position],
            }
            state["last"] = e.task_id  # its findings are checked next, under a retry's id too
        elif isinstance(e, FindingUnsupported) and state["last"] in tasks:
            task = tasks[state["last"]]
            task["verified"] -= 1
            task["unsupported"] += 1
            task["why"] = f"{task['unsupported']} of its findings unsupported ({e.reason})"
            task["positions"].append(rec.position)
        elif isinstance(e, SubtaskDegraded) and e.task_id in tasks:
            tasks[e.task_id]["why"] = e.why
            tasks[e.task_id]["said"] = True  # the harness's words name the sub-task already
            tasks[e.task_id]["positions"].append(rec.position)
        elif isinstance(e, AnswerComposed):
            for sub_id, task in tasks.items():
                if task["verified"] > 0:
                    continue
                seen = sub_id in state["found"]
                if not seen:
                    state["found"].append(sub_id)
                (out.put if seen else out.add)(
                    sub_id,
                    finding(
                        "degraded_subtask",
                        task["why"]
                        if task.get("said")
                        else f"{task['worker']} on {sub_id} ended without a verified finding: "
                        f"{task['why']}",
                        [*task["positions"], rec.position],
                        task_id=sub_id,
                        agents=[task["worker"]],
                    ),
                )

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class SagaCompensations(Fold):
    """Keeps, per aborted saga, the step that failed and the steps undone so far."""

    name: ClassVar[str] = "saga_compensated"
    kinds: ClassVar[frozenset[str] | None] = frozenset(("SagaAborted", "SagaCompensated"))

    def start(self) -> State:
        return {"sagas": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        saga: dict[str, Any]
        if isinstance(e, SagaAborted):
            saga = {"failed": e.failed_step, "why": e.reason, "undone": [], "at": [rec.position]}
            state["sagas"][e.saga_id] = saga
            fresh = True
        elif isinstance(e, SagaCompensated) and e.saga_id in state["sagas"]:
            saga = state["sagas"][e.saga_id]
            saga["undone"].append(e.step)
            saga["at"].append(rec.position)
            fresh = False
        else:
            return
        undone = ", ".join(saga["undone"]) or "nothing yet"
        failed = saga["failed"] or "a step"
        found = finding(
            "saga_compensated",
            f"saga {e.saga_id}: {failed} failed ({saga['why']}); undone: {undone}",
            saga["at"],
            saga=e.saga_id,
            undone=list(saga["undone"]),
        )
        (out.add if fresh else out.put)(e.saga_id, found)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


SIGNATURES: tuple[Fold, ...] = (
    DuplicateWork(),
    UnansweredRequests(),
    DoneWithoutEvidence(),
    TransientErrors(),
    RejectCaps(),
    BudgetExhaustion(),
    MissedDeadlines(),
    LoopingAgents(),
    DegradedSubtasks(),
    BreakerTrips(),
    SagaCompensations(),
)


class Diagnosis(Fold):
    """Every signature at once; the result is the findings in order of their first event."""

    name: ClassVar[str] = "findings"
    kinds: ClassVar[frozenset[str] | None] = frozenset().union(*(s.kinds or () for s in SIGNATURES))

    def start(self) -> State:
        return {s.name: s.start() for s in SIGNATURES}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        kind = rec.event.kind
        for s in SIGNATURES:
            if s.kinds is None or kind in s.kinds:
                # setdefault: a state stored before a signature was added lacks its part
                s.step(state.setdefault(s.name, s.start()), rec, out.part(s.name))

    def result(self, state: State, rows: Rows) -> list[Finding]:
        found = [
            f
            for s in SIGNATURES
            for f in s.result(state.get(s.name) or s.start(), rows.part(s.name))
        ]
        return sorted(found, key=lambda f: f["positions"][0])


def diagnose(records: Sequence[Recorded]) -> list[Finding]:
    """Every finding in the run, in the order of the first event that shows it."""
    result: list[Finding] = folds.run(Diagnosis(), records)
    return result
