"""What the harness's guards caught: loops, breakers, deadlines, degraded sub-tasks, sagas."""

from __future__ import annotations

from typing import Any, ClassVar

from runtime.events import (
    AnswerComposed,
    BreakerTripped,
    DeadlinePassed,
    FindingUnsupported,
    ReplyOverdue,
    SagaAborted,
    SagaCompensated,
    SagaCompensating,
    SubtaskDegraded,
    ToolDispatched,
    ToolReturned,
    WorkerReported,
)
from runtime.folds import Fold, Out, Rows, State, key
from runtime.journal import Recorded
from runtime.signatures.base import Finding, cite, finding, lane

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
                    f"met the same failure of {e.tool} {streak['count']} times in a row ({e.error})"
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
        cite(streak["positions"], position)
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
    """Keeps, per aborted saga, the step that failed, the steps undone so far and those whose
    undo was begun and not finished (its driver died mid-call: money may still be moved)."""

    name: ClassVar[str] = "saga_compensated"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("SagaAborted", "SagaCompensating", "SagaCompensated")
    )

    def start(self) -> State:
        return {"sagas": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        saga: dict[str, Any]
        if isinstance(e, SagaAborted):
            saga = {"failed": e.failed_step, "why": e.reason, "undone": [], "at": [rec.position]}
            state["sagas"][e.saga_id] = saga
            fresh = True
        elif isinstance(e, SagaCompensating | SagaCompensated) and e.saga_id in state["sagas"]:
            saga = state["sagas"][e.saga_id]
            undoing = saga.setdefault("undoing", [])  # a state stored before undos were begun
            if isinstance(e, SagaCompensated):
                saga["undone"].append(e.step)
                if e.step in undoing:
                    undoing.remove(e.step)
            elif e.step not in undoing:
                undoing.append(e.step)
            saga["at"].append(rec.position)
            fresh = False
        else:
            return
        undone = ", ".join(saga["undone"]) or "nothing yet"
        failed = saga["failed"] or "a step"
        summary = f"saga {e.saga_id}: {failed} failed ({saga['why']}); undone: {undone}"
        if begun := saga.get("undoing"):
            summary += f"; begun and not finished: {', '.join(begun)} (money may still be moved)"
        found = finding(
            "saga_compensated",
            summary,
            saga["at"],
            saga=e.saga_id,
            undone=list(saga["undone"]),
            undoing=list(saga.get("undoing", [])),
        )
        (out.add if fresh else out.put)(e.saga_id, found)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())
