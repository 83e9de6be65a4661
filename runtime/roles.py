"""What an agent does in its team, in the words the views and the diagnosis need.

A team says which of its agents write the work ("writes": their DONE should rest on a passing
test run; a REQUEST to them starts a fix) and which judge it ("reviews": their ACCEPT and
REJECT are reviews, not a contract-net's award or refusal of a bid). The views read the run's
team from its TeamStarted; a journal of a team this install does not have (a foreign or old
one) falls back to the names Minutes' own teams use, so it still reads sensibly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from runtime import plugins

Role = Literal["writes", "reviews"]
# The names Minutes' teams give these roles, for journals of teams not installed here.
CONVENTION: dict[str, Role] = {"coder": "writes", "reviewer": "reviews"}


def of_team(name: str | None) -> dict[str, Role]:
    """The roles the team gives its agents (by agent name)."""
    found = plugins.teams().get(name or "")
    return dict(found.roles) if found is not None else dict(CONVENTION)


def has(roles: Mapping[str, str], agent: str | None, role: Role) -> bool:
    """Whether `agent` has `role`: by its name, or by the name before a suffix (coder-a and
    coder-b are the team's coder, working in parallel)."""
    if not agent:
        return False
    found = roles.get(agent) or roles.get(agent.split("-")[0])
    return found == role
