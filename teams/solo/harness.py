"""The solo team's flight: one coder makes a failing test pass in a scratch git repository.

The smallest complete flight: a real workspace, real pytest runs, and a verdict the harness
reaches by running the suite itself after the coder says it is done.
"""

from __future__ import annotations

from pathlib import Path

from runtime import loop, workspace
from runtime.budget import Budget
from runtime.coordination.carried import carry
from runtime.coordination.keys import request_hash
from runtime.coordination.mutation import Authority, Evidence, Mutation, MutationGate, decide
from runtime.events import (
    SuiteChecked,
    TaskEscalated,
    TeamFinished,
    WorkspacePrepared,
)
from runtime.fenced import Fenced
from runtime.model import ModelClient, ModelError
from runtime.session import Session
from runtime.status import Verdict
from runtime.team import FlightConfig, Services, start
from runtime.tools import Toolbox
from teams.repos import suite_check, template
from teams.solo.settings import SoloSettings

CODER_SYSTEM = (
    "You are the coder. You work in a git repository through your tools: list_files, "
    "read_file, edit_file, write_file and run_tests. Find why the tests fail, change the code "
    "(not the tests) until run_tests reports no failures, then call done with a summary."
)


# The one who may hand in the work as done: the coder (the gate's authority check).
AUTHORITY = Authority.of({"deliver": {"coder"}})


def delivery(
    session: Session, name: str, intent: tuple[str, int] | None, suite: SuiteChecked
) -> Mutation:
    """Taking the coder's work as done, as a mutation: it serves the run's intent (a person may
    have superseded it while the coder worked) and rests on the harness's own suite check."""
    key = "deliver:T1"  # once per run: its one task
    journal = session.journal
    return Mutation(
        what=f"taking the coder's work in {name} as done",
        actor="coder",
        capability="deliver",
        intent=intent,
        lease=journal.fence if isinstance(journal, Fenced) else None,
        evidence=(
            Evidence(
                "the harness's suite check",
                suite.ok,
                f"the suite is not green ({suite.failed} failing)",
            ),
        ),
        key=key,
        expected_key=key,
        request=request_hash("deliver", name, [suite.passed, suite.failed]),
        run_id=session.run_id,
    )


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    services: Services,
) -> TeamFinished:
    settings = SoloSettings.of(config)
    start(session, config)
    path = workspace.located(root, config.workspace)
    session.activity(
        WorkspacePrepared,
        lambda: {
            "path": config.workspace,
            "template": settings.template,
            "commit": workspace.prepare(path, template(settings.template), root),
        },
    )
    intent = carry(session, config.task)
    budget = Budget(config.allowance)
    coder = loop.Agent(
        "coder",
        clients["coder"],
        Toolbox(workspace.toolset(path, sandbox=services.sandbox)),
        CODER_SYSTEM,
        max_turns=config.max_turns,
        retries=config.retries,
        window=config.window,
    )
    try:
        result = loop.run(coder, config.task, session, budget, task_id="T1")
    except ModelError as exc:
        # The client already retried what was worth retrying: a person has to look.
        reason = f"the coder's model failed: {exc}"
        escalated = session.new(TeamFinished, status="escalated", reason=reason)
        session.emit(
            session.new(TaskEscalated, task_id="T1", reason=reason, last_error=str(exc)),
            escalated,
        )
        return escalated
    # No commit in a solo run: the working tree as a commit would take it is the coder's work.
    known = settings.template
    suite = session.activity(
        SuiteChecked,
        lambda: suite_check(path, services.sandbox, None, known),
        task_id="T1",
    )
    status: Verdict
    refused = (
        decide(
            session,
            lambda: MutationGate(session.journal, AUTHORITY, session.stream),
            delivery(session, config.workspace, intent, suite),
            task_id="T1",
        )
        if result.status == "done" and suite.ok
        else None
    )
    if result.status != "done":
        status, reason = loop.ending(result.status), f"the coder stopped: {result.status}"
    elif refused is not None:
        status, reason = "escalated", f"the coder's work was refused at the gate: {refused.reason}"
    elif suite.ok:
        status, reason = "done", "the coder reported done and the suite is green"
    else:
        status, reason = "failed", "the coder reported done but the suite is not green"
    finished = session.new(
        TeamFinished,
        status=status,
        reason=reason,
        summary={
            "spent": budget.spent,
            "allowance": budget.allowance,
            "turns": result.turns,
            "passed": suite.passed,
            "failed": suite.failed,
        },
    )
    session.emit(finished)
    return finished
