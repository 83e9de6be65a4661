"""The repo-fix flight: the protocol from plan to verified integration, and the run's verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runtime import workspace
from runtime.coordination.carried import carry
from runtime.events import Integrated, SuiteChecked, TeamFinished, WorkspacePrepared
from runtime.messages import Performative
from runtime.model import ModelClient
from runtime.sandbox import Sandbox
from runtime.scripted_votes import refuse_unscripted_votes
from runtime.session import Session
from runtime.status import Verdict
from runtime.team import FlightConfig, Scenario, Services, start
from teams.repo_fix import parallel, verifying
from teams.repo_fix.harness import Harness, Stop
from teams.repo_fix.roles import PARALLEL_ORCHESTRATOR
from teams.repo_fix.rounds import fix_rounds
from teams.repo_fix.scenarios import SCENARIOS
from teams.repo_fix.settings import RepoFixSettings
from teams.repos import suite_check, template

BIDDERS = ("coder-a", "coder-b")


def fly(
    session: Session,
    config: FlightConfig,
    clients: dict[str, ModelClient],
    root: Path,
    absent: tuple[str, ...] = (),
    sandbox: Sandbox = workspace.REQUIRED,
) -> TeamFinished:
    settings = RepoFixSettings.of(config)
    harness = Harness(session, config, clients, root, absent, sandbox)
    start(session, config)
    session.activity(
        WorkspacePrepared,
        lambda: {
            "path": config.workspace,
            "template": settings.template,
            "commit": workspace.prepare(harness.path, template(settings.template), root),
        },
    )
    harness.intent = carry(session, config.task)
    coders = list(BIDDERS) if settings.bidding or settings.parallel_writers else ["coder"]
    agents = ["orchestrator", *coders, "reviewer", "tester"]
    agents += (["critic"] if settings.reflect else []) + (["docs"] if settings.docs else [])
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
    harness.post.send(
        Performative.REQUEST, "operator", "orchestrator", "plan", {"task": harness.config.task}
    )
    if harness.settings.parallel_writers:
        tasks = harness.plan(PARALLEL_ORCHESTRATOR)
        shipped = parallel.write(harness, tasks)  # all merged before any is verified
        for integrated in shipped:
            verify(harness, tasks, integrated)
    else:
        tasks = harness.plan()
        shipped = []
        for fix in (t for t in tasks if t["kind"] == "fix"):
            coder = harness.award(fix) if harness.settings.bidding else "coder"
            shipped.append(fix_rounds(harness, fix, coder))
            verify(harness, tasks, shipped[-1])
    # On main as integrated: nothing left in the working tree beside it (never reviewed: the
    # tester's files, in a journal from before it verified in a worktree of its own) has a say
    # in the verdict.
    known = harness.settings.template
    suite = session.activity(
        SuiteChecked,
        lambda: suite_check(harness.path, harness.sandbox, "main", known),
        task_id="suite",
    )
    summary.update(passed=suite.passed, failed=suite.failed, integrated=[i.commit for i in shipped])
    for docs_task in (t for t in tasks if t["kind"] == "docs"):
        harness.document(docs_task, shipped)
    if not suite.ok:
        return "failed", f"integrated, but the suite is not green ({suite.failed} failing)"
    return "done", "reviewed, integrated, and the suite is green"


def verify(harness: Harness, tasks: list[dict[str, Any]], integrated: Integrated) -> None:
    """The plan's verify tasks of the fix just integrated."""
    for check in tasks:
        if check["kind"] == "verify" and check.get("of") == integrated.task_id:
            verifying.verify(harness, check, integrated)


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


def vet(scenario: Scenario, config: FlightConfig) -> None:
    """Refuse a scripted bidding run whose scenario scripts no bids, a scripted
    reflection whose scenario scripts no critic, and a scripted review voted on by another
    number of samples than the scenario scripts."""
    settings = RepoFixSettings.of(config)
    missing = [a for a in BIDDERS if a not in scenario.scripts]
    if settings.bidding and missing and config.model == "scripted":
        raise ValueError(
            f"scenario {scenario.name!r} has no bidding script for {', '.join(missing)}"
        )
    if settings.parallel_writers and (settings.bidding or settings.reflect):
        raise ValueError(
            "parallel writers take their fixes in the plan's order: no --bidding, and no "
            "--reflect (not built for writers in worktrees yet)"
        )
    scripted_critic = config.models.get("critic", config.model) == "scripted"
    if settings.reflect and scripted_critic and "critic" not in scenario.scripts:
        raise ValueError(
            f"scenario {scenario.name!r} scripts no critic for --reflect; "
            "the reflect scenario does, or give the critic a model"
        )
    refuse_unscripted_votes(scenario, SCENARIOS, config, "reviewer", "the reviewer's verdict")
