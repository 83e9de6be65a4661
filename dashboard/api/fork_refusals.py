"""A fork's checks that need the run, as the API's 422 names them beside the body's other
faults: an `at` no event of the run is at (or one no fork starts after), an agent the run has
not, a tool result replaced where the event is no tool's, an endpoint this server cannot use.

The fork's body (api/run_schemas.ForkIn) asks them when the request is refused anyway (a
schema fault, an Idempotency-Key that cannot be one), so that a script learns of `at` with its
`max_turns` of 0, where it learnt of it once that was mended. Each is read, never written: the
replay of the fork and its workspace are the service's, once the request is sound
(services/forks.begin_fork, which asks them again).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

from dashboard import asked, queries
from dashboard.access import get_run_for_user
from runtime import fork, fork_checks
from runtime.journal import Recorded
from runtime.team import split_models
from services import forks
from services.runs import RunNotFound, endpoint_unusable


def no_event(run_id: str, at: int) -> str | None:
    """Why `at` names no event of run `run_id` (the fork page's sentence), past any position a
    column holds among them; None when an event is there. The endpoint's 422 at `at`."""
    return None if event_at(run_id, at) is not None else no_event_said(run_id, at)


def event_at(run_id: str, at: int) -> Recorded | None:
    """The run's event at `at`; None where there is none, or `at` is past any position."""
    return forks.event_at(run_id, at) if at <= asked.POSITION_MAX else None


def no_event_said(run_id: str, at: int) -> str:
    # Past any position, as typed and quoted short (pydantic said "less than or equal to ...").
    typed = str(at) if at <= asked.POSITION_MAX else asked.shown(str(at))
    return asked.no_event_at(run_id, typed)


def of_run(user: Any, run_id: str, at: int | None, changes: fork.Changes) -> dict[str, list[str]]:
    """Every refusal of a fork of run `run_id` after `at` (None: the body's `at` was refused
    by the schema, and nothing that rests on the event is judged) with `changes`, by the
    body's field. Nothing, as the endpoint answers before anything is judged, for someone
    the run is not shown to (dashboard/access.py: no fault may say what the run holds) or
    a run that is not here (its 404, once the body is sound)."""
    try:
        run = get_run_for_user(user, run_id)
    except (PermissionDenied, RunNotFound):
        return {}
    found: dict[str, list[str]] = {}
    event = None
    if at is not None:
        # The event read once, where the check that it is there read it a second time.
        if (event := event_at(run_id, at)) is None:
            found["at"] = [no_event_said(run_id, at)]
        elif why := fork.unforkable(event, run_id, forks.first_letter(run_id)):
            found["at"] = [why]
    # The agents the fork page offers (read off the index), as the plan's check reads them.
    agents = fork.cast(queries.event_agents(run_id), run.team)
    for name, said in fork_checks.refusals(changes, event, agents, run_id).items():
        found.setdefault(name, []).extend(said)
    if "endpoint" in split_models(changes.models)[0].values() and (why := endpoint_unusable()):
        found.setdefault("models", []).append(why)
    # In the body's order, as the schema's own entries are.
    return {name: found[name] for name in FIELDS if name in found}


FIELDS = ("at", "models", "message", "tool_result")  # what the run's checks judge of a body
