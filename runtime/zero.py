"""Agents with no intelligence, to measure what the harness guarantees by itself.

Gode and Sunder replaced a market's traders with zero-intelligence bidders to see how much of
its performance was the institution's. The same instrument on a team: a ZIClient answers every
call with its role's fixed `done` at a nominal 5 tokens, whatever its window says (a coder
reports without editing or testing, a reviewer accepts, a tester says green), and a RuleClient
is a reviewer that is still not a model: one 8-token rule that accepts exactly the submissions
whose harness-attached test evidence shows passing tests and no failures.

Both are deterministic (a resumed or replayed run gets the same answers), chosen per agent
like any backend: `--model-for coder=zi --model-for reviewer=rules`. The 2 x 2 (`fly_cell`,
`python -m runtime zi`) pits them against a model on the other side: the scenario's scripts, an
OpenAI-compatible endpoint or the local model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime.events import Usage
from runtime.model import ChatMessage, ModelClient, ModelResponse, ToolSpec, call

ZI_TOKENS = 5
RULE_TOKENS = 8
# A role's one reply: what its done tool's contract asks for, with nothing behind it.
STUBS: dict[str, dict[str, Any]] = {
    "coder": {"summary": "done"},
    "reviewer": {"verdict": "accept", "reasons": "looks fine"},
    "tester": {"verdict": "green", "summary": "all green"},
}


def role_of(agent: str) -> str:
    """A team's agent names say their role ("coder-a" codes, "reviewer" reviews)."""
    return next((role for role in STUBS if agent.startswith(role)), agent)


class ZIClient(ModelClient):
    """The same `done` for every call of `agent`, whatever its window holds."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.stub = STUBS.get(role_of(agent), {"summary": "done"})

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        return with_usage(call("done", ZI_TOKENS, **self.stub), messages)


class RuleClient(ModelClient):
    """A reviewer by rule: accept when the newest request's evidence shows tests that passed
    and none that failed; reject otherwise. It reads the harness's evidence, never the coder's
    words."""

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        tests = evidence(messages)
        if tests is not None and tests.get("passed", 0) > 0 and tests.get("failed", 1) == 0:
            verdict, reasons = "accept", f"{tests['passed']} passed, 0 failed"
        else:
            verdict, reasons = "reject", "no passing test evidence with the submission"
        return with_usage(call("done", RULE_TOKENS, verdict=verdict, reasons=reasons), messages)


def evidence(messages: Sequence[ChatMessage]) -> dict[str, Any] | None:
    """The `tests` of the newest message in the window that carries one (a request's payload
    is JSON after its header line, as runtime/messages.py renders it)."""
    for message in reversed(messages):
        if message.role != "user" or not message.content:
            continue
        _, _, body = message.content.partition("\n")
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            continue
        if isinstance(payload, dict) and "tests" in payload:
            tests = payload["tests"]
            return tests if isinstance(tests, dict) else None
    return None


def with_usage(response: ModelResponse, window: Sequence[ChatMessage]) -> ModelResponse:
    """A nominal cost, said as all output: these clients read nothing they are paid for."""
    total = response.usage.total
    return response.model_copy(update={"usage": Usage(total=total, prompt=0, completion=total)})


# --- the 2 x 2: a model or ZI coder, a model or rule reviewer, the ZI tester throughout -----

# The backends that can fly the 2 x 2's model side: the scenario's scripts, an OpenAI-compatible
# endpoint (MINUTES_MODEL_*), the local model server.
MODELS = ("scripted", "endpoint", "local")


def cells_of(model: str) -> list[tuple[str, str]]:
    """The four (coder, reviewer) backends, the model's cells first: the coder is `model` or
    ZI, the reviewer `model` or the rule."""
    return [(coder, reviewer) for coder in (model, "zi") for reviewer in (model, "rules")]


def fly_cell(
    team_name: str,
    scenario: str | None,
    coder: str,
    reviewer: str,
    path: Path,
    root: Path,
    services: Any = None,
    **settings: Any,
) -> dict[str, Any]:
    """Fly one cell into a new journal at `path` and read it: the team's writer on `coder`, its
    reviewer on `reviewer`, its tester ZI, the rest (the orchestrator's plan) scripted."""
    return fly_planned(
        plan_cell(team_name, scenario, coder, reviewer, path, **settings), root, services
    )


@dataclass(frozen=True)
class PlannedCell:
    """A cell checked and planned, not flown: what the 2x2 refuses, it refuses before any cell
    flies or anything is written."""

    run_id: str
    config: Any  # flight.FlightConfig
    path: Path
    coder: str
    reviewer: str
    agents: tuple[str, str]  # the team's writer and reviewer


def plan_cell(
    team_name: str,
    scenario: str | None,
    coder: str,
    reviewer: str,
    path: Path,
    hosts: Any = None,
    **settings: Any,
) -> PlannedCell:
    """The cell's run planned (its team, scenario, backends and settings checked, and its
    model clients made from the host's settings `hosts.models`: an endpoint none is set for
    is refused here), or FlightError; nothing is written, nothing asked."""
    from runtime import flight

    team = flight.team_named(team_name)
    writer = next((a for a, r in team.roles.items() if r == "writes"), None)
    reviewer_name = next((a for a, r in team.roles.items() if r == "reviews"), None)
    if writer is None or reviewer_name is None:
        raise flight.FlightError(f"team {team_name} has no writer and reviewer to replace")
    if path.exists():
        raise flight.FlightError(f"{path} exists: give another --dir")
    models = {writer: coder, reviewer_name: reviewer}
    models.update({a: "zi" for a in team.agents if a == "tester"})
    run_id = flight.new_run_id()
    config = flight.plan(team_name, scenario, run_id, models=models, **settings)
    flight.clients_for(config, team, models=getattr(hosts, "models", None))
    return PlannedCell(run_id, config, path, coder, reviewer, (writer, reviewer_name))


def fly_planned(planned: PlannedCell, root: Path, services: Any = None) -> dict[str, Any]:
    """Fly a planned cell into its journal and read it (the command line flies it under its
    run's lease, then reads it with `read_planned`)."""
    from runtime import flight
    from runtime.jsonl import JsonlJournal

    journal = JsonlJournal(planned.path)
    flight.fly(journal, planned.config, planned.run_id, root, services=services)
    return read_planned(journal, planned)


def read_planned(journal: Any, planned: PlannedCell) -> dict[str, Any]:
    """What a flown cell's journal shows (`cell`), with its run's id."""
    from runtime import flight

    records = flight.run_records(journal, planned.run_id)
    return {
        "run": planned.run_id,
        **cell(records, planned.coder, planned.reviewer, planned.agents),
    }


def cell(
    records: Sequence[Any],
    coder: str,
    reviewer: str,
    agents: tuple[str, str] = ("coder", "reviewer"),
) -> dict[str, Any]:
    """What one cell's journal shows: the verdict, the spend, whether an ACCEPT was given and
    what was integrated, the harness's own suite check, whether every integration cited an
    ACCEPT that is in the journal, and whether none cited an ACCEPT of failing tests;
    `models` names the model each side asked (the endpoint's model name, or the backend)."""
    from runtime import views
    from runtime.events import Integrated, MessageSent, SuiteChecked, TeamFinished
    from runtime.pytest_runs import failures

    events = [r.event for r in records]
    accepts = {  # message id -> the test evidence the ACCEPT was given on
        e.message_id: (e.payload or {}).get("tests")
        for e in events
        if isinstance(e, MessageSent) and e.performative.lower() == "accept"
    }
    integrated = [e for e in events if isinstance(e, Integrated)]
    suite = next((e for e in events if isinstance(e, SuiteChecked)), None)
    verdict = next((e for e in events if isinstance(e, TeamFinished)), None)
    bill = views.bill(records)
    backends = {"coder": coder, "reviewer": reviewer}
    return {
        "coder": coder,
        "reviewer": reviewer,
        "models": {
            side: (bill["agents"].get(agent) or {}).get("model") or backends[side]
            for side, agent in zip(("coder", "reviewer"), agents, strict=True)
        },
        "status": verdict.status if verdict else "unfinished",
        "reason": verdict.reason if verdict else "",
        "tokens": bill["total"]["tokens"],
        "accept": bool(accepts),
        "integrated": len(integrated),
        "every_integration_cites_an_accept": all(i.approval in accepts for i in integrated),
        "no_integration_on_failing_tests": not any(
            failures(accepts.get(i.approval)) for i in integrated
        ),
        "suite": None if suite is None else {"passed": suite.passed, "failed": suite.failed},
        "suite_checked_by_harness": suite is not None or not integrated,
    }


def label(c: dict[str, Any], side: str) -> str:
    """A side of a cell as the table names it: its backend, and the endpoint's model name."""
    backend, model = c[side], c.get("models", {}).get(side)
    return backend if model in (None, backend) else f"{backend}:{model}"


def table(cells: Sequence[dict[str, Any]]) -> str:
    """The cells as `python -m runtime zi` prints them, then what held in every cell."""
    width = max([10, *(len(label(c, side)) + 2 for c in cells for side in ("coder", "reviewer"))])
    lines = [
        f"{'coder':<{width}}{'reviewer':<{width}}{'verdict':<12}{'tokens':>7}  {'ACCEPT':<7}"
        f"{'integrated':<11}{'suite':<12}",
    ]
    for c in cells:
        suite = "-" if c["suite"] is None else f"{c['suite']['passed']}/{c['suite']['failed']} p/f"
        lines.append(
            f"{label(c, 'coder'):<{width}}{label(c, 'reviewer'):<{width}}{c['status']:<12}"
            f"{c['tokens']:>7}  {'yes' if c['accept'] else 'no':<7}{c['integrated']:<11}"
            f"{suite:<12}"
        )
    held = {
        "no integration without an ACCEPT in the journal": all(
            c["every_integration_cites_an_accept"] for c in cells
        ),
        "no integration of a candidate whose own tests fail": all(
            c["no_integration_on_failing_tests"] for c in cells
        ),
        "the suite's verdict is the harness's own run, not an agent's word": all(
            c["suite_checked_by_harness"] for c in cells
        ),
        "a red suite is never reported done": all(
            not (c["status"] == "done" and c["suite"] and c["suite"]["failed"]) for c in cells
        ),
    }
    shipped_untested = [
        f"{c['coder']} x {label(c, 'reviewer')}"
        for c in cells
        if c["integrated"] and c["coder"] == "zi"
    ]
    lines += ["", "held in every cell (the harness's):"]
    lines += [f"  {'yes' if ok else 'NO '} {name}" for name, ok in held.items()]
    lines += [
        "",
        "what the harness supplied in no cell: that the ACCEPT it requires means anything. "
        + (
            f"An empty, untested change was integrated in {', '.join(shipped_untested)} "
            "on the reviewer's ACCEPT; only the harness's own suite check called it "
            "failed."
            if shipped_untested
            else "No untested change was integrated here."
        ),
    ]
    return "\n".join(lines)
