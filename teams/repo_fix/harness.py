"""The repo-fix harness: the protocol's steps, each enforced in code rather than by prompts.

`Harness` holds a flight's state (its post office, budgets, the candidates that shipped) and
carries out one step at a time: plan, award (contract net), fix and review in rounds,
integrate behind the reviewer's ACCEPT, verify, document. `teams.repo_fix.flight` strings the
steps together; the module docstring of `teams.repo_fix` says what each guarantees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime import loop, overspent, workspace
from runtime.budget import Budget, SubBudget
from runtime.coordination.deadlines import Deadline, Due
from runtime.coordination.mutation import decide
from runtime.coordination.registry import WorkRegistry
from runtime.events import (
    BudgetAllocated,
    CandidateCommitted,
    DeadlinePassed,
    Event,
    Integrated,
    IntegrationRefused,
    MutationRefused,
    ReplyOverdue,
    TaskEscalated,
    TeamPlanned,
    ToolReturned,
)
from runtime.fenced import Fenced
from runtime.journal import Fence
from runtime.messages import Message, Performative, PostOffice
from runtime.model import ModelClient, ModelError
from runtime.sandbox import Sandbox
from runtime.session import Session
from runtime.status import Verdict
from runtime.team import FlightConfig
from runtime.tools import Toolbox
from teams.repo_fix import merge_gate
from teams.repo_fix.plan import accept_plan
from teams.repo_fix.roles import (
    BIDDER_REPORT,
    VERIFICATION_RESERVE,
    Role,
    role_of,
)
from teams.repo_fix.settings import RepoFixSettings

REQUEST, DONE = Performative.REQUEST, Performative.DONE
ACCEPT, REJECT, PROPOSE = Performative.ACCEPT, Performative.REJECT, Performative.PROPOSE
REPLY_ATTEMPTS = 2  # the first REQUEST and one re-issue
LOOP_REPEATS = 3  # the same tool call this many times in a row trips the loop breaker


class Stop(Exception):
    """The run cannot go on; the harness finishes it with this verdict and reason."""

    def __init__(self, status: Verdict, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class NoReply(Exception):
    """An agent asked twice gave no report: why, from its last attempt."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Reply:
    """What came back from an agent asked to do something: its report, or why there is none."""

    report: dict[str, Any] | None
    status: str  # the agent's run status, or "absent" / "model failed"
    started: int  # index in session.emitted where its run began (for evidence)
    why: str = ""  # what stopped it, where the harness knows more than the status


class Harness:
    def __init__(
        self,
        session: Session,
        config: FlightConfig,
        clients: dict[str, ModelClient],
        root: Path,
        absent: tuple[str, ...] = (),
        sandbox: Sandbox = workspace.REQUIRED,
    ) -> None:
        self.session = session
        self.config = config
        self.settings = RepoFixSettings.of(config)
        self.clients = clients
        self.root = root
        self.path = workspace.located(root, config.workspace)
        self.sandbox = sandbox
        self.post = PostOffice(session)
        self.absent = absent
        reserve = int(config.allowance * VERIFICATION_RESERVE)
        self.budget = Budget(config.allowance, reserve=reserve)
        self.ledgers: dict[str, SubBudget] = {}
        self.merged: dict[str, CandidateCommitted] = {}  # by task: the candidate that shipped
        self.reflected: set[str] = set()  # tasks whose first draft the critic has read
        # by task: the diffs the critic sent back, with its reasons (never sent for review)
        self.sent_back: dict[str, dict[str, str]] = {}
        self.intent: tuple[str, int] | None = None  # the run's intent, once carried
        self.awarded: dict[str, str] = {}  # by task: the coder whose candidates may be merged
        self.integrations: dict[str, str] = {}  # idempotency key -> the request merged under it
        self.refused: MutationRefused | None = None  # the gate's last refusal of a merge
        self.clash = ""  # why the last merge the gate let through conflicted with main, if so
        self.held: Fence | None = None  # a lease the merges hold besides the driver's (tests)
        # Parallel writers (teams/repo_fix/parallel.py): where each agent works, when not in
        # the workspace (its own git worktree), and by task the lease a writer's merge is
        # fenced by (the lease its commitment is held under).
        self.where: dict[str, Path] = {}
        self.confined: dict[str, workspace.Writable] = {}  # where it may write, if not its role's
        self.fences: dict[str, Fence] = {}
        self.worktrees: dict[str, str] = {}  # by task: the writer's worktree its work is in
        # Work done by one assignment is not redone by another (a vague plan's tester
        # rewriting the coder's test file): refused before the write starts.
        self.registry = WorkRegistry(session)

    # --- helpers ----------------------------------------------------------------------------

    @property
    def lease(self) -> Fence | None:
        """The lease a merge holds. On the workers the run's journal is fenced by the driver's
        lease, whose fence moves to each step's grant: read now, not when the flight began.
        The gate refuses a merge (before git is touched) once another driver took over."""
        if self.held is not None:
            return self.held
        journal = self.session.journal
        return journal.fence if isinstance(journal, Fenced) else None

    def emit(self, cls: type[Event], **fields: Any) -> None:
        self.session.emit(self.session.new(cls, **fields))

    def open_ledgers(self, agents: list[str]) -> None:
        events: list[Event] = [
            self.session.new(
                BudgetAllocated,
                name="run",
                allowance=self.budget.allowance,
                reserve=self.budget.reserve,
            )
        ]
        for name in agents:
            role = role_of(name)
            share = max(1, int(self.config.allowance * role.share))
            self.ledgers[name] = SubBudget(self.budget, share, name, role.may_use_reserve)
            events.append(
                self.session.new(BudgetAllocated, name=name, allowance=share, parent="run")
            )
        self.session.emit(*events)

    def make(self, name: str, role: Role | None = None) -> loop.Agent:
        role = role or role_of(name)
        here = self.where.get(name, self.path)
        writable = self.confined.get(name, role.writable)
        tools = workspace.toolset(here, writable, sandbox=self.sandbox)
        return loop.Agent(
            name,
            self.clients[name],
            Toolbox(tools, allow=role.allow),
            role.system,
            max_turns=self.config.max_turns,
            retries=self.config.retries,
            window=self.config.window,
            done=role.report,
            repeats=LOOP_REPEATS,
        )

    def run(
        self, name: str, task_id: str, agent: loop.Agent | None = None, due: Due | None = None
    ) -> Reply:
        """Give an agent its turns on a task; it reads its mail at the top of each one, and
        stops when `due` says its reply is overdue."""
        started = self.session.position
        if name in self.absent:
            return Reply(None, "absent", started)  # its process is down: no turn is ever taken
        agent = agent or self.make(name)
        try:
            result = loop.run(
                agent,
                role_of(name).standing,
                self.session,
                self.ledgers[name],
                task_id=task_id,
                mail=self.post.mailbox(name),
                deadline=due,
                admit=self.registry,
            )
        except ModelError as exc:
            return Reply(None, f"model failed: {exc}", started)
        why = ""
        if result.status == "overdue":
            overdue = self.last(started, lambda e: isinstance(e, ReplyOverdue))
            why = overdue.reason if isinstance(overdue, ReplyOverdue) else ""
        return Reply(result.report, result.status, started, why)

    def last(self, since: int, wanted: Callable[[Event], bool]) -> Event | None:
        """The latest event since index `since` that is `wanted`, looked for from the end: an
        agent's run just ended, and what the harness asks of it is near its end, so a run
        resumed from a loop snapshot does not read back the turns it skipped to find it."""
        for version in range(self.session.position, since, -1):
            event = self.session.record.stored(version)
            if wanted(event):
                return event
        return None

    def deadline(self, recipient: str) -> Deadline:
        """The clock on a reply: the team's reply turns (within the agent's own turn cap) and
        seconds."""
        turns = self.settings.reply_turns
        if turns is not None and turns >= self.config.max_turns:
            turns = None  # the turn cap stops the run first
        return Deadline(turns=turns, seconds=self.settings.reply_seconds)

    def ask(self, recipient: str, task_id: str, payload: dict[str, Any]) -> tuple[Message, Reply]:
        """REQUEST and await the report; re-issue once; escalate if there is still none."""
        while True:
            try:
                return self.request(recipient, task_id, payload)
            except NoReply as silent:
                self.escalate(
                    task_id,
                    "no_reply",
                    REPLY_ATTEMPTS,
                    silent.reason,
                    f"{recipient} did not reply to {REPLY_ATTEMPTS} requests on {task_id}",
                )

    def request(
        self, recipient: str, task_id: str, payload: dict[str, Any]
    ) -> tuple[Message, Reply]:
        """REQUEST and await the report, re-issued once; NoReply when there is still none (each
        miss journalled as DeadlinePassed). What then is the caller's to decide."""
        reason = ""
        for attempt in range(1, REPLY_ATTEMPTS + 1):
            sent_at = self.session.position
            request = self.post.send(REQUEST, "orchestrator", recipient, task_id, payload)
            due = Due(
                self.session,
                recipient,
                task_id,
                request.message_id,
                sent_at,
                self.deadline(recipient),
            )
            reply = self.run(recipient, task_id, due=due)
            if reply.report is not None:
                return request, reply
            if reply.status == "halted":
                spent = overspent.why(self.session, reply.started)  # the ledger, and how far
                raise Stop("halted", f"{recipient} ran out of budget on {task_id}{spent}")
            reason = f"{recipient} gave no report ({reply.status})"
            if reply.why:
                reason = f"{reason}: {reply.why}"
            self.emit(
                DeadlinePassed,
                task_id=task_id,
                awaited=recipient,
                request=request.message_id,
                attempt=attempt,
                reason=reason,
            )
        raise NoReply(reason)

    def escalate(
        self, task_id: str, cause: str, attempts: int, last_error: str, reason: str
    ) -> None:
        """Hand the task to a person. Returns when they chose to retry it; otherwise stops."""
        self.emit(
            TaskEscalated,
            task_id=task_id,
            attempts=attempts,
            last_error=last_error,
            cause=cause,
            reason=reason,
        )
        if not self.config.park:
            raise Stop("escalated", reason)
        decision = self.session.dead_letter(reason, attempts, last_error, task_id=task_id)
        if decision == "discard":
            raise Stop("escalated", f"{reason}; a person discarded the task")

    def evidence(self, agent: str, since: int) -> dict[str, Any] | None:
        """The agent's last successful run_tests after its last edit, as the journal shows it:
        tests run before an edit say nothing about the edited code."""

        def telling(event: Event) -> bool:
            return (
                isinstance(event, ToolReturned)
                and event.agent == agent
                and not event.error
                and event.tool in ("edit_file", "write_file", "run_tests")
            )

        found = self.last(since, telling)
        tests: dict[str, Any] | None = None
        if isinstance(found, ToolReturned) and found.tool == "run_tests":
            tests = found.result
        return tests

    # --- the protocol -----------------------------------------------------------------------

    def plan(self, role: Role | None = None) -> list[dict[str, Any]]:
        agent = self.make("orchestrator", role) if role is not None else None
        reply = self.run("orchestrator", "plan", agent)
        if reply.report is None:
            raise Stop("inconclusive", f"the orchestrator produced no plan ({reply.status})")
        try:
            tasks, amended = accept_plan(reply.report["tasks"], self.settings.docs)
        except ValueError as exc:
            raise Stop("inconclusive", f"the orchestrator's plan is unusable: {exc}") from None
        self.emit(TeamPlanned, task_id="plan", tasks=tasks, amended=amended)
        return tasks

    def award(self, fix: dict[str, Any]) -> str:
        """Contract net: announce to the coders, take bids, ACCEPT the lowest, REJECT the rest."""
        bids: list[tuple[int, str]] = []
        for bidder in ("coder-a", "coder-b"):
            self.post.send(
                REQUEST,
                "orchestrator",
                bidder,
                fix["id"],
                {"announce": fix["brief"], "bid": "your estimate in tokens"},
            )
            agent = self.make(bidder)
            agent.done = BIDDER_REPORT
            agent.max_turns = 1
            reply = self.run(bidder, fix["id"], agent)
            bid = (reply.report or {}).get("bid")
            if isinstance(bid, int):
                self.post.send(PROPOSE, bidder, "orchestrator", fix["id"], {"bid": bid})
                bids.append((bid, bidder))
        if not bids:
            self.emit(
                TaskEscalated,
                task_id=fix["id"],
                cause="no_bids",
                reason=f"no coder bid for {fix['id']}",
            )
            raise Stop("escalated", f"no coder bid for {fix['id']}")
        bids.sort()
        winner = bids[0][1]
        for bid, bidder in bids:
            verdict = ACCEPT if bidder == winner else REJECT
            self.post.send(
                verdict, "orchestrator", bidder, fix["id"], {"bid": bid, "award": bidder == winner}
            )
        return winner

    def submit(
        self, task_id: str, coder: str, request: Message, reply: Reply, label: str
    ) -> tuple[CandidateCommitted, dict[str, Any] | None]:
        """Commit the coder's work as the task's candidate and answer the REQUEST with DONE,
        carrying the diff and the test evidence the journal shows (not what the coder says)."""
        assert reply.report is not None
        summary = reply.report["summary"]
        message = f"{task_id} {label}: {summary[:60]}"
        worktree = self.worktrees.get(task_id)
        candidate = self.session.activity(
            CandidateCommitted,
            lambda: (
                workspace.commit_worktree(self.path, worktree, message)
                if worktree is not None
                else workspace.commit_candidate(self.path, f"candidate/{task_id}", message)
            ),
            agent=coder,
            task_id=task_id,
        )
        tests = self.evidence(coder, reply.started)
        self.post.send(
            DONE,
            coder,
            "orchestrator",
            request.task_id,
            {
                "summary": summary,
                "commit": candidate.commit,
                "diff": candidate.diff,
                "tests": tests,
            },
            in_reply_to=request.message_id,
        )
        return candidate, tests

    def integrate(
        self, task_id: str, candidate: CandidateCommitted, tests: dict[str, Any] | None
    ) -> Integrated | None:
        """Merge the candidate through the mutation gate: the run's intent version, the driver's
        lease epoch, the awarded coder's authority, the reviewer's ACCEPT for this very commit on
        the task thread and `tests`, the candidate's own test run the reviewer was shown,
        showing no failures (evidence), and one merge per task (idempotency). Refused, nothing
        is merged: MutationRefused names the check, IntegrationRefused says why, None comes
        back; so too when the merge the gate let through conflicts with main (it is aborted).
        A journal written before the gate read the tests replays its merges as written:
        `decide` reads back the refusals the record holds, and makes up none."""
        approval = merge_gate.approval(self.post.log, task_id, candidate.commit)
        lease = self.fences.get(task_id, self.lease)
        mutation = merge_gate.mutation(
            task_id, candidate, approval, tests, self.intent, lease, self.session.run_id
        )
        self.clash = ""
        refused = self.refused = decide(
            self.session,
            lambda: merge_gate.gate(self.session, self.awarded.get(task_id), self.integrations),
            mutation,
            task_id=task_id,
        )
        if refused is not None:
            self.emit(
                IntegrationRefused, task_id=task_id, branch=candidate.branch, reason=refused.reason
            )
            return None
        if approval is None:  # a journal from before the gate, refused as it was then
            reason = f"no ACCEPT from the reviewer on {task_id} for commit {candidate.commit[:12]}"
            self.emit(IntegrationRefused, task_id=task_id, branch=candidate.branch, reason=reason)
            return None
        integrated = merge_gate.merged(self.session, self.path, task_id, candidate, approval)
        if isinstance(integrated, IntegrationRefused):  # it conflicted with main: aborted
            self.clash = integrated.reason
            return None
        self.integrations[mutation.key] = mutation.request
        return integrated

    def document(self, docs_task: dict[str, Any], shipped: list[Integrated]) -> None:
        """Shipping does not wait for documentation: a missing changelog is a follow-up, not a
        reason to hold back a verified fix. So a silent docs agent escalates only its task."""
        # Built from the recorded candidates, never by asking git: a replay has no workspace.
        diff = "\n".join(self.merged[i.task_id or ""].diff for i in shipped)
        payload = {"brief": docs_task["brief"], "diff": diff}
        try:
            request, reply = self.ask("docs", docs_task["id"], payload)
        except Stop:
            return
        assert reply.report is not None
        self.post.send(
            DONE,
            "docs",
            "orchestrator",
            docs_task["id"],
            {"summary": reply.report["summary"]},
            in_reply_to=request.message_id,
        )
