"""The solo team's flight: one coder makes a failing test pass in a scratch git repository.

The smallest complete flight: a real workspace, real pytest runs, and a verdict the harness
reaches by running the suite itself after the coder says it is done.
"""

from __future__ import annotations

from pathlib import Path

from runtime import loop, workspace
from runtime.budget import Budget
from runtime.events import (
    SuiteChecked,
    TaskEscalated,
    TeamFinished,
    WorkspacePrepared,
)
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
    suite = session.activity(
        SuiteChecked, lambda: suite_check(path, services.sandbox), task_id="T1"
    )
    status: Verdict
    if result.status != "done":
        status, reason = loop.ending(result.status), f"the coder stopped: {result.status}"
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
