"""A query value that cannot be taken: a filter's date that is none, a status or sort nobody
knows, a position that is no number. Whoever reads a filter (the metrics filter here, the
pages' filters in dashboard/) raises BadQuery with every field it cannot take; a page answers
400 with its form as typed, the API 422 naming each field (dashboard/api/errors.py)."""

from __future__ import annotations

SHOWN = 40  # characters of a refused value repeated in its message


class BadQuery(ValueError):
    """Query values that cannot be taken: why, per field (the field not repeated)."""

    def __init__(self, problems: dict[str, str]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{name}: {why}" for name, why in problems.items()))


def shown(value: str) -> str:
    """A refused value as its message repeats it: quoted, a long one cut short."""
    return repr(value if len(value) <= SHOWN else value[:SHOWN] + "…")


def named(value: str) -> str:
    """An id a "no such ..." answer names: as it is when it is short and plain, else as
    `shown` gives it. A request's path may hold thousands of characters, all said back; an
    empty id, or one with spaces at an end, read as no id at all ("no run ")."""
    plain = value and value == value.strip() and len(value) <= SHOWN and value.isprintable()
    return value if plain else shown(value)
