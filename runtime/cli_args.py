"""The command line's argument types: each refuses a bad value in argparse, which names the
flag and exits 2 before anything is read or written."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from runtime import streams
from runtime.team import FlightConfig


def run_id_arg(value: str) -> str:
    """--run-id, held to the rule imported ids are (runtime/streams.py): a journal flown with
    another would be refused by every store, and its workspace named for it."""
    if value and not streams.is_run_id(value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a run id ({streams.RUN_ID_RULE})")
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
    low, high = 0, None
    for bound in FlightConfig.model_fields[field].metadata:
        low = getattr(bound, "ge", low)
        high = getattr(bound, "le", high)
    return whole(low, high, field)
