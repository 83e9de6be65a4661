"""The repo-fix team: orchestrator, coder, reviewer and tester on a real git repository.

The protocol, enforced by this harness rather than by prompts:

    plan      the orchestrator's typed task list (the harness adds a review and a verify it forgot)
    fix       REQUEST to the coder; its report becomes DONE carrying the candidate's diff and the
              test evidence the journal shows (not what the coder claims)
    review    REQUEST to the reviewer with the diff and test output only; its report becomes
              ACCEPT or REJECT; a REJECT goes back to the coder, at most `max_rounds` times
    integrate a real merge, and only with an ACCEPT on the task thread for that very commit
    verify    REQUEST to the tester; then the harness runs the suite itself: green is a fact the
              repository certifies, not a judgement anyone renders

Every awaited reply has a deadline (the recipient's turns): a silent agent gets one re-issued
REQUEST, then the task is escalated with its reason. Nothing waits forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime import loop, workspace
from runtime.budget import Budget, SubBudget
from runtime.events import (
    BudgetAllocated,
    CandidateCommitted,
    DeadlinePassed,
    Event,
    Integrated,
    IntegrationRefused,
    SuiteChecked,
    TaskEscalated,
    TeamFinished,
    TeamPlanned,
    ToolReturned,
    WorkspacePrepared,
)
from runtime.messages import Message, Performative, PostOffice
from runtime.model import ModelClient, ModelError
from runtime.sandbox import Sandbox
from runtime.session import Session
from runtime.teams.base import FlightConfig, Services, Team, Verdict, start
from runtime.teams.repo_fix_scenarios import SCENARIOS
from runtime.teams.roles import (
    BIDDER_REPORT,
    VERIFICATION_RESERVE,
    Role,
    role_of,
)
from runtime.teams.solo import suite_check
from runtime.tools import Toolbox

REQUEST, DONE = Performative.REQUEST, Performative.DONE
ACCEPT, REJECT, PROPOSE = Performative.ACCEPT, Performative.REJECT, Performative.PROPOSE
REPLY_ATTEMPTS = 2  # the first REQUEST and one re-issue


class Stop(Exception):
    """The run cannot go on; the harness finishes it with this verdict and reason."""

    def __init__(self, status: Verdict, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Reply:
    """What came back from an agent asked to do something: its report, or why there is none."""

    report: dict[str, Any] | None
    status: str  # the agent's run status, or "absent" / "model failed"
    started: int  # index in session.emitted where its run began (for evidence)


def accept_plan(
    proposed: list[dict[str, Any]], docs: bool
) -> tuple[list[dict[str, Any]], list[str]]:
    """The plan the harness will run, and what it had to add to the orchestrator's.

    The gate does not depend on the orchestrator remembering it: every fix gets a review and a
    verify, and a run with a docs agent gets a docs task. A plan with repeated ids, no fix, or a
    task `of` something that is not a fix is refused (ValueError).
    """
    tasks = [dict(t) for t in proposed]
    ids = [t["id"] for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("task ids repeat")
    fixes = [t["id"] for t in tasks if t["kind"] == "fix"]
    if not fixes:
        raise ValueError("it has no fix task")
    for t in tasks:
        if t["kind"] != "fix" and t.get("of") not in fixes:
            raise ValueError(f"{t['id']} is a {t['kind']} of {t.get('of')!r}, which is not a fix")
    if not docs:
        tasks = [t for t in tasks if t["kind"] != "docs"]  # this run has no docs agent
    amended = []

    def add(kind: str, of: str, brief: str, why: str) -> None:
        taken = {t["id"] for t in tasks}
        new_id = next(f"T{n}" for n in range(1, len(taken) + 2) if f"T{n}" not in taken)
        tasks.append({"id": new_id, "kind": kind, "of": of, "brief": brief})
        amended.append(f"added {new_id}: {why}")

    for fix in fixes:
        for kind in ("review", "verify"):
            if not any(t["kind"] == kind and t.get("of") == fix for t in tasks):
                add(kind, fix, f"{kind} {fix}", f"every fix needs a {kind}")
    if docs and not any(t["kind"] == "docs" for t in tasks):
        add(
            "docs",
            fixes[0],
            "record the shipped change in docs/changelog.md",
            "this run has a docs agent",
        )
    return tasks, amended


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

    # --- helpers ----------------------------------------------------------------------------

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
        tools = workspace.toolset(self.path, role.writable, sandbox=self.sandbox)
        return loop.Agent(
            name,
            self.clients[name],
            Toolbox(tools, allow=role.allow),
            role.system,
            max_turns=self.config.max_turns,
            retries=self.config.retries,
            window=self.config.window,
            done=role.report,
        )

    def run(self, name: str, task_id: str, agent: loop.Agent | None = None) -> Reply:
        """Give an agent its turns on a task; it reads its mail at the top of each one."""
        started = len(self.session.emitted)
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
                mail=lambda: self.post.mail_for(name),
            )
        except ModelError as exc:
            return Reply(None, f"model failed: {exc}", started)
        return Reply(result.report, result.status, started)

    def ask(self, recipient: str, task_id: str, payload: dict[str, Any]) -> tuple[Message, Reply]:
        """REQUEST and await the report; re-issue once; escalate if there is still none."""
        while True:
            reason = ""
            for attempt in range(1, REPLY_ATTEMPTS + 1):
                request = self.post.send(REQUEST, "orchestrator", recipient, task_id, payload)
                reply = self.run(recipient, task_id)
                if reply.report is not None:
                    return request, reply
                if reply.status == "halted":
                    raise Stop("halted", f"{recipient} ran out of budget on {task_id}")
                reason = f"{recipient} gave no report ({reply.status})"
                self.emit(
                    DeadlinePassed,
                    task_id=task_id,
                    awaited=recipient,
                    request=request.message_id,
                    attempt=attempt,
                    reason=reason,
                )
            self.escalate(
                task_id,
                "no_reply",
                REPLY_ATTEMPTS,
                reason,
                f"{recipient} did not reply to {REPLY_ATTEMPTS} requests on {task_id}",
            )

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
        """The agent's last successful run_tests after its last edit, as the journal shows it."""
        found: dict[str, Any] | None = None
        for event in self.session.emitted[since:]:
            if not isinstance(event, ToolReturned) or event.agent != agent or event.error:
                continue
            if event.tool in ("edit_file", "write_file"):
                found = None  # tests run before an edit say nothing about the edited code
            elif event.tool == "run_tests":
                found = event.result
        return found

    # --- the protocol -----------------------------------------------------------------------

    def plan(self) -> list[dict[str, Any]]:
        reply = self.run("orchestrator", "plan")
        if reply.report is None:
            raise Stop("inconclusive", f"the orchestrator produced no plan ({reply.status})")
        try:
            tasks, amended = accept_plan(reply.report["tasks"], self.config.docs)
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

    def fix(self, fix: dict[str, Any], coder: str) -> Integrated:
        """Fix, review, try to integrate; back to the coder when the gate refuses, until the
        round cap. The gate, not the verdict branch, is what decides whether a merge happens."""
        task_id = fix["id"]
        payload: dict[str, Any] = {"brief": fix["brief"]}
        while True:  # until integrated, or a person discards the task
            for round_no in range(1, self.config.max_rounds + 1):
                request, reply = self.ask(coder, task_id, payload)
                assert reply.report is not None
                message = f"{task_id} round {round_no}: {reply.report['summary'][:60]}"
                branch = f"candidate/{task_id}"
                candidate = self.session.activity(
                    CandidateCommitted,
                    # activity() calls the lambda at once, so the loop variables are current
                    lambda: workspace.commit_candidate(self.path, branch, message),  # noqa: B023
                    agent=coder,
                    task_id=task_id,
                )
                tests = self.evidence(coder, reply.started)
                self.post.send(
                    DONE,
                    coder,
                    "orchestrator",
                    task_id,
                    {
                        "summary": reply.report["summary"],
                        "commit": candidate.commit,
                        "diff": candidate.diff,
                        "tests": tests,
                    },
                    in_reply_to=request.message_id,
                )
                # The reviewer sees the artefact and its evidence, not the coder's rationale.
                review_request, verdict = self.ask(
                    "reviewer",
                    task_id,
                    {"commit": candidate.commit, "diff": candidate.diff, "tests": tests},
                )
                assert verdict.report is not None
                accepted = verdict.report["verdict"] == "accept"
                self.post.send(
                    ACCEPT if accepted else REJECT,
                    "reviewer",
                    "orchestrator",
                    task_id,
                    {
                        "commit": candidate.commit,
                        "reasons": verdict.report["reasons"],
                        "tests": tests,
                    },
                    in_reply_to=review_request.message_id,
                )
                integrated = self.integrate(task_id, candidate)
                if integrated is not None:
                    self.merged[task_id] = candidate
                    return integrated
                payload = {
                    "brief": fix["brief"],
                    "rejected": verdict.report["reasons"],
                    "round": round_no + 1,
                }
            self.escalate(
                task_id,
                "reject_cap",
                self.config.max_rounds,
                str(payload.get("rejected", "")),
                f"the reviewer rejected {task_id} {self.config.max_rounds} times "
                f"(the cap is {self.config.max_rounds})",
            )
            # a person sent it back: another set of rounds from the last rejection

    def approval(self, task_id: str, commit: str) -> Message | None:
        """The reviewer's ACCEPT on this thread for this very commit, if there is one."""
        for message in self.post.log:
            if (
                message.task_id == task_id
                and message.performative is ACCEPT
                and role_of(message.sender).name == "reviewer"
                and message.payload.get("commit") == commit
            ):
                return message
        return None

    def integrate(self, task_id: str, candidate: CandidateCommitted) -> Integrated | None:
        """Merge the candidate, only with the reviewer's ACCEPT for it on the task thread.
        Without one the merge is refused, with an event saying why, and None comes back."""
        approval = self.approval(task_id, candidate.commit)
        if approval is None:
            reason = f"no ACCEPT from the reviewer on {task_id} for commit {candidate.commit[:12]}"
            self.emit(IntegrationRefused, task_id=task_id, branch=candidate.branch, reason=reason)
            return None
        return self.session.activity(
            Integrated,
            lambda: {
                "branch": candidate.branch,
                "commit": workspace.merge(self.path, candidate.branch, f"integrate {task_id}"),
                "approval": approval.message_id,
                "approved_by": approval.sender,
            },
            task_id=task_id,
        )

    def verify(self, check: dict[str, Any], integrated: Integrated) -> None:
        request, reply = self.ask(
            "tester", check["id"], {"brief": check["brief"], "commit": integrated.commit}
        )
        assert reply.report is not None
        self.post.send(
            DONE,
            "tester",
            "orchestrator",
            check["id"],
            {
                "verdict": reply.report["verdict"],
                "summary": reply.report["summary"],
                "tests": self.evidence("tester", reply.started),
            },
            in_reply_to=request.message_id,
        )

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


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    absent: tuple[str, ...] = (),
    sandbox: Sandbox = workspace.REQUIRED,
) -> TeamFinished:
    harness = Harness(session, config, clients, root, absent, sandbox)
    start(session, config)
    session.activity(
        WorkspacePrepared,
        lambda: {
            "path": config.workspace,
            "template": config.template,
            "commit": workspace.prepare(harness.path, config.template, root),
        },
    )
    coders = ["coder-a", "coder-b"] if config.bidding else ["coder"]
    agents = ["orchestrator", *coders, "reviewer", "tester"] + (["docs"] if config.docs else [])
    harness.open_ledgers(agents)
    summary: dict[str, Any] = {}
    try:
        status, reason = ship(harness, summary)
    except Stop as stop:
        status, reason = stop.status, stop.reason
    summary.update(spent=harness.budget.spent, allowance=harness.budget.allowance)
    finished = session.new(TeamFinished, status=status, reason=reason, summary=summary)
    session.emit(finished)
    return finished


def ship(harness: Harness, summary: dict[str, Any]) -> tuple[Verdict, str]:
    """The protocol from plan to verified integration; raises Stop when it cannot go on."""
    session = harness.session
    # The orchestrator needs the task in its mail like everyone else.
    harness.post.send(REQUEST, "operator", "orchestrator", "plan", {"task": harness.config.task})
    tasks = harness.plan()
    shipped: list[Integrated] = []
    for fix in (t for t in tasks if t["kind"] == "fix"):
        coder = harness.award(fix) if harness.config.bidding else "coder"
        integrated = harness.fix(fix, coder)
        shipped.append(integrated)
        for check in (t for t in tasks if t["kind"] == "verify" and t.get("of") == fix["id"]):
            harness.verify(check, integrated)
    suite = session.activity(
        SuiteChecked, lambda: suite_check(harness.path, harness.sandbox), task_id="suite"
    )
    summary.update(passed=suite.passed, failed=suite.failed, integrated=[i.commit for i in shipped])
    for docs_task in (t for t in tasks if t["kind"] == "docs"):
        harness.document(docs_task, shipped)
    if not suite.ok:
        return "failed", f"integrated, but the suite is not green ({suite.failed} failing)"
    return "done", "reviewed, integrated, and the suite is green"


def fly_scenario(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    services: Services,
) -> TeamFinished:
    """The team's entry point (its world is a git workspace: it needs no services)."""
    scenario = SCENARIOS.get(config.scenario)
    absent = scenario.absent if scenario else ()
    return fly(session, config, clients, root, absent, services.sandbox)


REPO_FIX = Team(
    name="repo-fix",
    agents=("orchestrator", "coder", "coder-a", "coder-b", "reviewer", "tester", "docs"),
    scenarios=SCENARIOS,
    fly=fly_scenario,
    bidding=True,
)
