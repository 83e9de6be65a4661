"""A vote of scripted samples is only as long as its script.

A team's voted decision (repo-fix's review, the desk's refund) asks its deciding agent once per
sample. A scripted agent answers from its scenario's script, which was written for that
scenario's own number of votes: asked for more, it runs out mid-run (the run ends escalated
or dead-lettered, saying "the script has N responses and all were used"); asked for fewer, its
next scripted answer is a sample where the harness expected an action. Either way the run shows
nothing about voting, so a team's `vet` refuses it before anything is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping

from runtime.team import FlightConfig, Scenario


def refuse_unscripted_votes(
    scenario: Scenario,
    scenarios: Mapping[str, Scenario],
    config: FlightConfig,
    agent: str,
    decision: str,
) -> None:
    """ValueError, saying why and what to do instead, when `agent` is scripted and the run
    asks for another number of votes than its scenario scripts."""
    votes = getattr(config.settings, "votes", 1)
    scripted = scenario.settings.get("votes", 1)
    if votes == scripted or config.models.get(agent, config.model) != "scripted":
        return
    others = [s.name for s in scenarios.values() if s.settings.get("votes", 1) == votes]
    where = f" (scenario {others[0]!r} scripts {votes})" if others else ""
    raise ValueError(
        f"votes {votes}: scenario {scenario.name!r} scripts {scripted} sample"
        f"{'s' if scripted != 1 else ''} of {decision}, and a scripted {agent} answers only "
        f"what its script says; leave votes at the scenario's own, or give the {agent} a "
        f"model{where}"
    )
