"""The command line's argument types: each refuses a bad value in argparse, which names the
flag and exits 2 before anything is read or written."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic.fields import FieldInfo

from runtime import plugins, streams
from runtime.team import FlightConfig


def run_id_arg(value: str) -> str:
    """--run-id, held to the rule imported ids are (runtime/streams.py): a journal flown with
    another would be refused by every store, and its workspace named for it."""
    if value and not streams.is_new_run_id(value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a run id ({streams.NEW_RUN_ID_RULE})")
    return value


def whole(low: int, high: int | None = None, name: str = "number") -> Callable[[str], int]:
    """An argparse type for a whole number from `low` (to `high`): a value out of range is
    refused by argparse, naming the flag, before anything is read or written; the settings'
    own check named their field ('max_turns'), which no command line has."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
        if number < low or (high is not None and number > high):
            within = f"at least {low:,}" if high is None else f"from {low:,} to {high:,}"
            raise argparse.ArgumentTypeError(f"must be {within}, not {number:,}")
        return number

    parse.__name__ = name  # argparse says "invalid <name> value" if a type raises otherwise
    return parse


def setting(field: str) -> Callable[[str], int]:
    """`whole` within the bounds FlightConfig gives `field`: one rule, the settings' own."""
    return within(FlightConfig.model_fields[field], field)


def within(field: FieldInfo, name: str) -> Callable[[str], int]:
    """`whole` within `field`'s bounds (ge, le; from 0 when it gives no lower one)."""
    low, high = bound(field, "ge"), bound(field, "le")
    return whole(0 if low is None else int(low), None if high is None else int(high), name)


def setting_seconds(field: str) -> Callable[[str], float]:
    """A number of seconds within the bounds FlightConfig gives `field` (a ceiling: more than
    0), refused in argparse as `whole` refuses a whole number."""
    info = FlightConfig.model_fields[field]
    low, high = bound(info, "gt") or 0, bound(info, "le")

    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
        if not (low < number < math.inf) or (high is not None and number > high):
            limit = "" if high is None else f" and at most {high:,}"
            raise argparse.ArgumentTypeError(f"must be more than {low:g}{limit}, not {value}")
        return number

    parse.__name__ = field
    return parse


def team_flag(flag: str) -> Callable[[str], int]:
    """The argparse type of an installed team's whole-number flag (`--votes`, `--max-rounds`),
    held to the bounds or the values its team's settings give the setting: refused naming the
    flag and what it takes, where a plain int let the settings' check name a field
    ('settings.votes') and `--max-rounds 0` was not even refused (0 read as not given)."""
    for team in plugins.teams().values():
        for option in team.options:
            if option.flag == flag and option.into is None:
                return team_setting(team.settings.model_fields[option.setting], option.setting)
    return int  # a number set inside a dict setting (`into`): its bounds are the team's to check


def team_setting(field: FieldInfo, name: str) -> Callable[[str], int]:
    """`within` `field`'s bounds, or one of the values its Literal allows (`votes`: 1, 3, 5)."""
    if get_origin(field.annotation) is not Literal:
        return within(field, name)
    allowed: tuple[Any, ...] = get_args(field.annotation)
    said = ", ".join(str(v) for v in allowed[:-1]) + f" or {allowed[-1]}"

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
        if number not in allowed:
            raise argparse.ArgumentTypeError(f"must be {said}, not {number:,}")
        return number

    parse.__name__ = name
    return parse


def bound(field: FieldInfo, name: str) -> Any:
    """`field`'s bound `name` (ge, gt, le) as pydantic keeps it, or None."""
    return next((getattr(b, name) for b in field.metadata if hasattr(b, name)), None)


def kind_of(path: Path) -> str:
    """What stands at `path` when it is no regular file, in a word or two."""
    return "a folder" if path.is_dir() else "not a regular file (a pipe, a device or a socket)"


WORKSPACES = "where run workspaces are (default: beside the journal)"  # --workspaces


def folder_arg(value: str) -> str:
    """A folder option (--workspaces, --dir): refused by argparse when something other than a
    folder stands there, where fly said only "File exists" once it had planned the run."""
    path = Path(value)
    if path.exists() and not path.is_dir():
        what = "a file" if path.is_file() else kind_of(path)
        raise argparse.ArgumentTypeError(f"{value} is {what}, not a folder")
    return value
