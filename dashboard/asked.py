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

from services.asked import BadQuery, shown

__all__ = ["KEPT", "BadQuery", "shown", "typed"]

KEPT = 64  # characters of a refused value kept in the form (an id's, a team's column)


def typed(params: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, str]:
    """What was typed in these fields, as a form drawn again shows it (a huge value cut)."""
    return {name: str(params.get(name) or "")[:KEPT] for name in names}
