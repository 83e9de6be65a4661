"""The teams this installation can fly, found by entry point: the runtime names none of them.

A distribution offers teams under the entry-point group `minutes.teams`; each entry names a
`Team`, or a collection of them. Minutes' own `teams` package offers its registry
(`teams = "teams:TEAMS"` in pyproject.toml), so adding a team there is adding a folder and a
line; another distribution can offer its own the same way, without touching this project.

Why entry points and not an import of `teams`: an arrow from `runtime` up to `teams` would let
the runtime grow team knowledge again; with entry points the runtime sees only what a team
declares (its `Team`). The group is read from the installed distribution's metadata, so a
checkout whose teams changed needs `pip install -e .` again (the Makefile does it when
pyproject.toml changes).

Loaded once per process, on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from importlib.metadata import entry_points
from typing import Any

from pydantic import ValidationError

from runtime.team import Team, TeamSettings

GROUP = "minutes.teams"


class PluginError(LookupError):
    """The installed teams cannot be loaded, or a team asked for is not among them."""


@functools.cache
def teams() -> dict[str, Team]:
    """Every installed team by name, in entry-point order."""
    found: dict[str, Team] = {}
    for point in entry_points(group=GROUP):
        for team in _teams_in(point.load(), point.value):
            if team.name in found and found[team.name] is not team:
                raise PluginError(f"two teams are named {team.name!r} ({point.value} has one)")
            found[team.name] = team
    if not found:
        raise PluginError(
            f"no team is installed: no entry point in group {GROUP!r}; install Minutes "
            "(`pip install -e .`, or `make`) so its teams are registered"
        )
    return found


def _teams_in(offered: object, where: str) -> Iterable[Team]:
    if isinstance(offered, Team):
        return [offered]
    values = offered.values() if isinstance(offered, Mapping) else offered
    if isinstance(values, Iterable) and all(isinstance(t, Team) for t in values):
        return list(values)
    raise PluginError(f"entry point {where} offers neither a Team nor a collection of them")


def team(name: str) -> Team:
    found = teams().get(name)
    if found is None:
        raise PluginError(f"unknown team {name!r}; known teams: {', '.join(sorted(teams()))}")
    return found


def settings_model(name: object) -> type[TeamSettings]:
    """The settings model of an installed team, by the `team` its settings name."""
    if not isinstance(name, str):
        raise PluginError("the team's settings must name their team ('team')")
    return team(name).settings


def parse_settings(value: object, context: dict[str, Any] | None = None) -> TeamSettings:
    """A team's settings, validated by its own model: the union of the installed teams'
    models, discriminated by `team` (each model's `team` is a Literal of its name)."""
    if not isinstance(value, dict):
        raise ValueError("the team's settings must be an object naming its team ('team')")
    try:
        model = settings_model(value.get("team"))
    except PluginError as exc:
        raise ValueError(str(exc)) from None
    return model.model_validate(value, context=context)


def from_flat(name: Any, flat: dict[str, Any]) -> dict[str, Any]:
    """A team's settings out of a v1 (flat) config; an unknown team's keep every key, so the
    journal still reads (and refuses to fly, naming the team)."""
    try:
        model = settings_model(name)
    except PluginError:
        return dict(flat)
    return model.from_flat(flat)


def place_problems(settings: dict[str, Any]) -> list[tuple[str, str]]:
    """The problems with the place-naming fields recorded team settings hold, by field (a field
    they do not hold names no place)."""
    try:
        model = settings_model(settings.get("team"))
        model.model_validate(settings)
    except PluginError:
        return []  # no such team: nothing it names is a place; the run will not fly
    except ValidationError as exc:
        return [
            (str(err["loc"][0]), err["msg"].removeprefix("Value error, "))
            for err in exc.errors()
            if err["loc"] and err["loc"][0] in model.places and err["loc"][0] in settings
        ]
    return []
