"""How agents worked: duplicated, unanswered, unproven, retried, rejected, accepted on failing
tests, out of budget, out of turns, or gone quiet (no tool call)."""

from __future__ import annotations

from typing import ClassVar

from runtime import roles
from runtime.events import (
    BudgetExhausted,
    DuplicateWorkRefused,
    Integrated,
    IntegrationRefused,
    MessageDelivered,
    MessageSent,
    RunInconclusive,
    RunStarted,
    TaskEscalated,
    ToolDispatched,
    ToolReturned,
    TurnCapReached,
)
from runtime.folds import Fold, Out, Rows, State, key
from runtime.journal import Recorded
from runtime.pytest_runs import failures
from runtime.signatures.base import WRITES, Finding, finding, lane, team_roles


class DuplicateWork(Fold):
    """Keeps, per file, who wrote it, and per lane (see `lane`) whether the call in flight is a
    write already counted at its dispatch; the positions of the writes are notes, read back
    once a second agent writes the same file. Where the work registry refused the second
    agent's write before it started (DuplicateWorkRefused), the finding says it was prevented
    (`prevented`): the plan still overlapped, nothing was written twice."""

    name: ClassVar[str] = "duplicate_work"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("ToolDispatched", "ToolReturned", "DuplicateWorkRefused")
    )

    def start(self) -> State:
        return {"writers": {}, "counted": {}}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        path = None
        if isinstance(e, DuplicateWorkRefused):
            self.prevented(state, rec, e, out)
            return
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
        if newcomer and len(writers) == 2 and path not in state.get("prevented", ()):
            out.add(path, found_now)
        else:
            out.put(path, found_now)

    @staticmethod
    def prevented(state: State, rec: Recorded, e: DuplicateWorkRefused, out: Out) -> None:
        path = e.artefact
        out.note(path, rec.position)
        refused = state.setdefault("prevented", {})
        seen = path in refused
        agents = refused.setdefault(path, [e.holder])
        if e.agent and e.agent not in agents:
            agents.append(e.agent)
        if len(state["writers"].get(path, [])) >= 2:
            return  # written twice all the same: the finding of the writes stands
        found = finding(
            "duplicate_work",
            f"{e.agent or '?'} on {e.task_id or '-'} set out to write {path}, {e.holder}'s "
            f"work on {e.holder_task}: refused before it started",
            out.notes(path),
            artefact=path,
            agents=sorted(agents),
            prevented=True,
        )
        (out.put if seen else out.add)(path, found)

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
            if e.error is None and not state["failed"]:
                return  # the usual return: no failure to absorb, no call key to build
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


class AcceptedFailingTests(Fold):
    """A reviewer's ACCEPT of a candidate whose own test run, the evidence the harness attached
    to the review (the ACCEPT's `tests`), shows failures: the reviewer's mistake, found whether
    the mutation gate held (IntegrationRefused) or, in a journal from before the gate read the
    tests, the candidate was merged all the same (Integrated citing that ACCEPT).

    An ACCEPT carrying test evidence is a review (a contract-net's award of a bid carries
    none), so the fold needs no roles: its state is back at its start but between such an
    ACCEPT and the merge's outcome (the harness tries the merge right after the verdict), and
    a run without one stores none. Keeps, per task, the finding of its latest such ACCEPT
    until that outcome."""

    name: ClassVar[str] = "accepted_failing_tests"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        ("MessageSent", "Integrated", "IntegrationRefused")
    )

    def start(self) -> State:
        return {"open": {}}  # task -> [the ACCEPT's message id, its position, the finding]

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        task = e.task_id or "-"
        if isinstance(e, MessageSent):
            if e.performative.lower() != "accept" or not e.payload:
                return
            tests = e.payload.get("tests")
            failed = failures(tests)
            if not failed:
                return
            assert isinstance(tests, dict)  # failures() counts nothing else
            commit = str(e.payload.get("commit") or "")
            passed = tests.get("passed", 0)
            row = finding(
                "accepted_failing_tests",
                f"{e.sender} accepted {task}'s commit {commit[:12] or '?'} though its tests fail "
                f"({failed} failed, {passed} passed)",
                [rec.position],
                task_id=task,
                agents=[e.sender],
                commit=commit,
                failed=failed,
                passed=passed,
                outcome=None,
            )
            out.add(rec.position, row)
            state["open"][task] = [e.message_id, rec.position, row]
        elif isinstance(e, Integrated | IntegrationRefused) and task in state["open"]:
            message_id, at, row = state["open"].pop(task)
            if isinstance(e, Integrated):
                if e.approval != message_id:
                    return  # merged on another ACCEPT: this one's outcome is not known
                said, outcome = "; it was merged all the same", "merged"
            else:
                said, outcome = "; the merge was refused", "refused"
            row = {
                **row,
                "summary": row["summary"] + said,
                "positions": [*row["positions"], rec.position],
                "outcome": outcome,
            }
            out.put(at, row)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class Stopped(Fold):
    """Keeps, per agent and task, where the agent's loop stopped on an event of `stop` while the
    task is still undone; dropped when the agent later says DONE on the task (it was given
    another go). The finding says why in the words of `says`."""

    stop: ClassVar[str]
    held: ClassVar[str] = "stopped"  # the state's one key (stored states keep theirs)

    def start(self) -> State:
        return {self.held: {}}

    def says(self, agent: str, task: str, rec: Recorded) -> str:
        raise NotImplementedError

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        e = rec.event
        if e.kind == self.stop and e.agent:
            task = e.task_id or "-"
            pair = key(e.agent, task)
            found = finding(
                self.name,
                self.says(e.agent, task, rec),
                [rec.position],
                task_id=task,
                agents=[e.agent],
            )
            (out.put if pair in state[self.held] else out.add)(pair, found)
            state[self.held][pair] = rec.position
        elif isinstance(e, MessageSent) and e.performative.lower() == "done":
            pair = key(e.sender, e.task_id or "-")
            if state[self.held].pop(pair, None) is not None:
                out.drop(pair)

    def result(self, state: State, rows: Rows) -> list[Finding]:
        return list(rows.rows.values())


class BudgetExhaustion(Stopped):
    """Keeps, per agent and task, where the budget ran out while the task is still undone."""

    name: ClassVar[str] = "budget_exhausted"
    stop: ClassVar[str] = "BudgetExhausted"
    held: ClassVar[str] = "halted"
    kinds: ClassVar[frozenset[str] | None] = frozenset((stop, "MessageSent"))

    def says(self, agent: str, task: str, rec: Recorded) -> str:
        assert isinstance(rec.event, BudgetExhausted)
        # The allowance that was spent, said: an agent's is often a share of the run's, so
        # "ran out" beside a run that spent a tenth of its tokens read as a mistake, and the
        # run's spent by another agent is not this one's.
        said = rec.event.said()
        spent = f" ({said})" if said else ""
        return f"{agent} ran out of budget on {task} before finishing it{spent}"


class TurnCaps(Stopped):
    """An agent used every turn it was given with its task undone. (Without this and the next,
    a run that ended out of turns or inconclusive had no finding at all, though the
    orphaned-commitment signature counts such a stop as reported by another.)"""

    name: ClassVar[str] = "turn_cap_reached"
    stop: ClassVar[str] = "TurnCapReached"
    kinds: ClassVar[frozenset[str] | None] = frozenset((stop, "MessageSent"))

    def says(self, agent: str, task: str, rec: Recorded) -> str:
        assert isinstance(rec.event, TurnCapReached)
        cap = rec.event.max_turns
        return f"{agent} used all {cap} turn{'' if cap == 1 else 's'} on {task} before finishing it"


class NoToolCalls(Stopped):
    """An agent answered in prose, was asked once for a tool call, and answered in prose again:
    its loop stopped inconclusive (a model that does not follow the tool protocol)."""

    name: ClassVar[str] = "no_tool_call"
    stop: ClassVar[str] = "RunInconclusive"
    kinds: ClassVar[frozenset[str] | None] = frozenset((stop, "MessageSent"))

    def says(self, agent: str, task: str, rec: Recorded) -> str:
        assert isinstance(rec.event, RunInconclusive)
        return f"{agent} stopped on {task}: {rec.event.reason}"
