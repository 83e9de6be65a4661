"""What every failure signature shares: the finding shape, the run's roles, an agent's lane."""

from __future__ import annotations

from typing import Any

from runtime import roles
from runtime.events import (
    Event,
    TeamStarted,
)
from runtime.folds import State, key
from runtime.journal import Recorded

Finding = dict[str, Any]
WRITES = ("edit_file", "write_file")


# Positions a finding cites of a pattern that repeats: its first ones and its latest. A loop
# that goes on for 20,000 events must not make its finding (the row every batch rewrites, the
# fold's stored state, the findings tab) 20,000 positions long; the summary says how many.
EVIDENCE = 10


def finding(kind: str, summary: str, positions: list[int], **detail: Any) -> Finding:
    cited = sorted(set(positions))
    if len(cited) > EVIDENCE + 1:
        cited = [*cited[:EVIDENCE], cited[-1]]
    return {"kind": kind, "summary": summary, "positions": cited, **detail}


def cite(positions: list[int], position: int) -> None:
    """Add `position` to a repeating pattern's evidence, kept to its first EVIDENCE positions
    and its latest (a fold's state keeps what a finding can cite, not the whole pattern)."""
    positions.append(position)
    if len(positions) > EVIDENCE + 1:
        del positions[EVIDENCE:-1]


def team_roles(state: State, e: Event) -> dict[str, str]:
    """The run's roles (runtime/roles.py), kept in the fold's state from its TeamStarted."""
    if isinstance(e, TeamStarted):
        state["roles"] = roles.of_team(e.team)
    found: dict[str, str] = state.get("roles") or dict(roles.CONVENTION)
    return found


def lane(rec: Recorded) -> str:
    """Where an agent's tool calls run one after the other: its stream (a run's, or a parallel
    specialist's). A call's attempts are all journalled before the lane's next dispatch, so a
    fold keeps one call per lane, not every call the run ever made."""
    where = (rec.stream, rec.event.agent)
    found = _LANES.get(where)
    if found is None:
        if len(_LANES) >= LANES_KEPT:
            _LANES.clear()
        found = _LANES[where] = key(*where)
    return found


# Lanes already built: several folds ask for the lane of every tool call and model call. The
# key is the same text whoever builds it; the cache only saves building it again.
_LANES: dict[tuple[str, str | None], str] = {}
LANES_KEPT = 4096
