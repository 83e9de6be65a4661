"""The single-agent baseline: a team's task flown by one agent, and the two side by side.

Seed 02 (§40) asks for it beside the coordination metrics: a team that costs more than one
well-instrumented worker for the same outcome is too complicated. The baseline is a run of the
single-agent team (`Team.single_agent`: the solo coder) on the team run's own task, repository
template, model, allowance and turn caps; its TeamStarted records `baseline_of` (the team run's
id), so the link is in the journal, not in anybody's memory. The comparison reads each run's
bill and summary folds: outcome, tokens, model calls, wall time, and tokens per verified success
(a run whose harness verdict is `done`).

Only teams that work on a repository template can have one (the solo coder fixes code); a solo
run is its own baseline. On the scripted model the solo coder follows its own script, written
for the parse-empty template: on another template it fails, which is what a script can show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import folds, plugins, views
from runtime.events import RunForked, TeamStarted
from runtime.flight import FlightError, plan
from runtime.journal import Recorded
from runtime.status import TERMINAL
from runtime.team import FlightConfig, Team


def single_agent() -> Team:
    """The installed team that flies baselines (`Team.single_agent`: the solo coder)."""
    for team in plugins.teams().values():
        if team.single_agent:
            return team
    raise FlightError("no installed team flies single-agent baselines")


def team_refusal(team: str) -> str | None:
    """Why no run of this team can have a single-agent baseline; None when its runs can, and
    for a team that is not installed: where its run is started, that is refused as unknown."""
    found = plugins.teams().get(team)
    if found is None:
        return None
    if found is single_agent():
        return f"a {team} run is its own single-agent baseline"
    if "template" not in found.settings.model_fields:
        return (
            f"team {team} works on no repository template: the single-agent baseline "
            "(the solo coder) can only fly repository tasks"
        )
    return None


def refusal(config: FlightConfig) -> str | None:
    """Why this run cannot have a single-agent baseline; None when it can."""
    if config.baseline_of is not None:
        return "this run is itself a baseline"
    return team_refusal(config.team)


def as_flown(team: FlightConfig, forked: RunForked | None) -> FlightConfig:
    """The team run's settings with the caps it went on with: a fork's settings keep its
    parent's (its prefix must replay under them), and its RunForked carries the allowance and
    turn cap in force from the fork point on (runtime/limits.py). Its baseline flew under the
    parent's: a fork given 5000 tokens beside a baseline given the parent's 400."""
    if forked is None:
        return team
    caps = {
        k: v
        for k, v in forked.changes.items()
        if k in ("allowance", "max_turns") and isinstance(v, int)
    }
    return team.model_copy(update=caps) if caps else team


def plan_baseline(team: FlightConfig, team_run_id: str, run_id: str, **given: Any) -> FlightConfig:
    """The solo run's settings for the team run's task: the same task, template, model (the
    coder's own backend when the team gave its coder one), allowance and turn caps, linked to
    the team run. `given`: what the host adds (who started it, the sandbox, parking)."""
    why = refusal(team)
    if why is not None:
        raise FlightError(why)
    one = single_agent()
    solo = plan(
        one.name,
        None,
        run_id,
        task=team.task,
        model=team.models.get(one.agents[0], team.model),
        model_name=team.model_name,
        # The coder's own endpoint model, when the team gave it one.
        model_names={a: n for a, n in team.model_names.items() if a == one.agents[0]} or None,
        allowance=team.allowance,
        max_turns=team.max_turns,
        max_seconds=team.max_seconds,
        max_run_turns=team.max_run_turns,
        window=team.window,
        retries=team.retries,
        baseline_of=team_run_id,
        **given,
    )
    # The template is a place, which a caller may not name (flight.plan refuses it); here it is
    # the team run's own, already validated when that run started.
    template = team.settings.template  # type: ignore[attr-defined]
    settings = solo.settings.model_dump(mode="json") | {"template": template}
    return FlightConfig.model_validate(
        solo.model_dump(mode="json") | {"settings": settings}, context={"run_id": run_id}
    )


def started(records: Sequence[Recorded]) -> TeamStarted | None:
    for rec in records:
        if isinstance(rec.event, TeamStarted):
            return rec.event
    return None


def baseline_of(records: Sequence[Recorded]) -> str | None:
    """The team run this run is the baseline of, from its TeamStarted."""
    first = started(records)
    if first is None:
        return None
    found = first.config.get("baseline_of")
    return found if isinstance(found, str) else None


def side(run_id: str, summary: dict[str, Any], bill: dict[str, Any]) -> dict[str, Any]:
    """One run's column of the comparison, from its summary and bill folds' results."""
    status = summary["status"]
    tokens, calls = bill["total"]["tokens"], bill["total"]["calls"]
    began, ended = summary["started"], summary["finished"]
    verified = 1 if status == "done" else 0
    if verified:
        cost, why = float(tokens), None
    elif status not in TERMINAL:
        cost, why = None, f"the run has not finished ({status})"
    else:
        cost, why = None, f"the run ended {status}: no verified success to divide by"
    return {
        "run_id": run_id,
        "team": summary["team"],
        "scenario": summary["scenario"],
        "outcome": status,
        "tokens": tokens,
        "model_calls": calls,
        "wall_seconds": round(ended - began, 3) if began and ended else None,
        "verified_successes": verified,
        "cost_per_verified_success": cost,
        "cost_reason": why,
    }


def compare(team: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """The team run and its baseline side by side, with the team's figures over the solo's."""

    def ratio(key: str) -> float | None:
        a, b = team[key], baseline[key]
        return round(a / b, 4) if a is not None and b else None

    return {
        "team": team,
        "baseline": baseline,
        "team_over_baseline": {
            key: ratio(key)
            for key in ("tokens", "model_calls", "wall_seconds", "cost_per_verified_success")
        },
    }


def of_records(run_id: str, records: Sequence[Recorded]) -> dict[str, Any]:
    """A run's column from its records (the command line's path)."""
    summary = folds.run(views.Summary(), records)
    return side(run_id, summary, views.bill(records))


def format_comparison(c: dict[str, Any]) -> str:
    """The comparison as a small table for the command line."""
    rows = [
        ("run", "run_id"),
        ("team", "team"),
        ("outcome", "outcome"),
        ("tokens", "tokens"),
        ("model calls", "model_calls"),
        ("wall seconds", "wall_seconds"),
        ("tokens per verified success", "cost_per_verified_success"),
    ]
    lines = [f"  {'':<30}{'team':>16}{'single agent':>16}"]
    for label, key in rows:
        a, b = c["team"][key], c["baseline"][key]
        lines.append(f"  {label:<30}{shown(a):>16}{shown(b):>16}")
    return "comparison:\n" + "\n".join(lines)


def shown(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
