"""The solo team: one coder makes a failing test pass in a scratch git repository.

    settings   SoloSettings: which shipped template the workspace is made from
    scenarios  the scripted presets (the first is the default)
    harness    the flight: prepare the workspace, run the coder, run the suite, decide

May import `runtime` and `teams.repos`; never another team.
"""

from __future__ import annotations

from runtime.team import Team
from teams.solo.harness import fly
from teams.solo.scenarios import SCENARIOS
from teams.solo.settings import SoloSettings

TEAM = Team(
    name="solo",
    agents=("coder",),
    scenarios=SCENARIOS,
    fly=fly,
    settings=SoloSettings,
    roles={"coder": "writes"},
    single_agent=True,  # the single-agent baseline of the teams that fix a repository
)

__all__ = ["TEAM", "SoloSettings"]
