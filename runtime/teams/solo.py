"""The solo team: one coder makes a failing test pass in a scratch git repository.

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
from runtime.model import ModelClient, ModelError, call
from runtime.sandbox import Sandbox
from runtime.session import Session
from runtime.teams.base import FlightConfig, Scenario, Services, Team, Verdict, start
from runtime.tools import Toolbox, ToolFailure

CODER_SYSTEM = (
    "You are the coder. You work in a git repository through your tools: list_files, "
    "read_file, edit_file, write_file and run_tests. Find why the tests fail, change the code "
    "(not the tests) until run_tests reports no failures, then call done with a summary."
)

FIX = '    fields = line.split(",")'
GUARDED = "    if not line.strip():\n        return []\n" + FIX

SOLO_FIX = Scenario(
    name="solo-fix",
    description="One coder makes the failing empty-input test pass; its first read misses.",
    template="parse-empty",
    task="Make the failing test pass and leave the whole suite green.",
    scripts={
        "coder": [
            call("read_file", 80, path="parser.py"),  # wrong path: an error observation
            call("list_files", 60),
            call("read_file", 90, path="textparse/parser.py"),
            call("run_tests", 70),
            call("edit_file", 120, path="textparse/parser.py", old=FIX, new=GUARDED),
            call("run_tests", 60),
            call("done", 40, summary="parse('') now returns []; the suite is green"),
        ]
    },
)


def suite_check(root: Path, sandbox: Sandbox = workspace.REQUIRED) -> dict[str, object]:
    """The harness's own run of the whole suite: the verdict never rests on an agent's word.
    The tests are agent code all the same: they run in the sandbox."""
    try:
        result = workspace.pytest_run(root, sandbox=sandbox)
    except ToolFailure as exc:
        return {"passed": 0, "failed": 0, "ok": False, "trace": str(exc)}
    failed = int(result["failed"])
    return {
        "passed": result["passed"],
        "failed": failed,
        "ok": failed == 0 and result["passed"] > 0,
        "trace": result.get("trace", ""),
    }


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    services: Services,
) -> TeamFinished:
    start(session, config)
    path = workspace.located(root, config.workspace)
    session.activity(
        WorkspacePrepared,
        lambda: {
            "path": config.workspace,
            "template": config.template,
            "commit": workspace.prepare(path, config.template, root),
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
        status, reason = result.status, f"the coder stopped: {result.status}"
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


SOLO = Team(name="solo", agents=("coder",), scenarios={SOLO_FIX.name: SOLO_FIX}, fly=fly)
