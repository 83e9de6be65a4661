"""A page's query value it cannot take: a date that is none, a sort or status it does not
know, a position that is no number. The API answers such a value 422 naming the field
(dashboard/api/errors.py `invalid`); a page answers 400 and stays usable: its form drawn again
with what was typed, a message naming each field, the value and what the field takes
(templates/dashboard/_bad_query.html), and no list drawn as if the filter had applied.

What reads a page's filter raises BadQuery with every field it cannot take; the page's view
draws itself with `problems` (and the API answers `invalid("query", exc.problems)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SHOWN = 40  # characters of a refused value repeated in its message
KEPT = 64  # characters of a refused value kept in the form (an id's, a team's column)


class BadQuery(ValueError):
    """Query values a page or the API cannot take: why, per field (the field not repeated)."""

    def __init__(self, problems: dict[str, str]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{name}: {why}" for name, why in problems.items()))


def shown(value: str) -> str:
    """A refused value as its message repeats it: quoted, a long one cut short."""
    return repr(value if len(value) <= SHOWN else value[:SHOWN] + "…")


def typed(params: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, str]:
    """What was typed in these fields, as a form drawn again shows it (a huge value cut)."""
    return {name: str(params.get(name) or "")[:KEPT] for name in names}
