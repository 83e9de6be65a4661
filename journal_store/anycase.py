"""A substring match in any case, in every alphabet, on SQLite too.

Django's `icontains` is a LIKE on SQLite, and SQLite's LIKE folds the case of ASCII letters
only: "émile" did not find "Émile", nor "привет" "ПРИВЕТ", in the runs list's Search or a
review queue's words, though the trigram index (FTS5 folds the case of every letter) had
named the rows. A text with a letter beyond ASCII is matched by a function of ours instead,
registered on each SQLite connection as it opens: each side lowered as Python lowers it, a
letter at a time, as PostgreSQL's UPPER does under a UTF-8 locale. An ASCII text keeps the
LIKE, which SQLite runs without calling back into Python for each row it checks.

PostgreSQL's match is its own UPPER ... LIKE UPPER, which folds as the database's locale
does: every letter under a UTF-8 locale (the usual one), ASCII alone under the C locale.
"""

from __future__ import annotations

import re
from typing import Any

from django.db.models.lookups import IContains

FUNCTION = "minutes_holds"


def holds(text: str | None, part: str | None) -> bool | None:
    """Whether `text` holds `part`, in any case (SQL's NULL for a NULL)."""
    if text is None or part is None:
        return None
    return part.lower() in text.lower()


def register(sender: Any, connection: Any, **kwargs: Any) -> None:
    """`connection_created`'s receiver: the function on each new SQLite connection."""
    if connection.vendor == "sqlite":
        connection.connection.create_function(FUNCTION, 2, holds, deterministic=True)


def shape(text: str) -> str:
    """A LIKE pattern every row holding `text` in any case matches (SQLite's LIKE folds the
    case of ASCII letters): each of its letters beyond ASCII is any one letter (`_`), as are
    "i" and "k", which the dotted capital I and the Kelvin sign lower to; the rest is itself.
    SQLite checks it without calling into Python, so the function is called only on the rows
    that have the text's shape. Exact, since every other letter lowers to one letter, and
    none beyond ASCII to an ASCII one (every code point checked), but for a text holding the
    combining dot above (U+0307) after an i, in a row holding the dotted capital I (U+0130),
    which lowers to the two."""
    return "%" + "".join("_" if c in LOOSE or not c.isascii() else escaped(c) for c in text) + "%"


LOOSE = frozenset("iIkK")
WILD = re.compile(r"[\\%_]")  # LIKE's wildcards and its escape


def escaped(text: str) -> str:
    """`text` as a LIKE pattern (ESCAPE '\\') that matches itself alone: its wildcards and
    escape are its own letters, as `icontains` has them."""
    return WILD.sub(r"\\\g<0>", text)


class AnyCase(IContains):
    """`icontains`, whose case is folded in every alphabet on SQLite too: used as a condition
    of its own (`Q(AnyCase(F(column), text))`)."""

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, Any]:
        if not isinstance(self.rhs, str) or self.rhs.isascii():
            return self.as_sql(compiler, connection)
        lhs, params = self.process_lhs(compiler, connection)
        # The text itself to the function, not a pattern: LIKE's wildcards in it are its own.
        return (
            f"({lhs} LIKE %s ESCAPE '\\' AND {FUNCTION}({lhs}, %s))",
            [*params, shape(self.rhs), *params, self.rhs],
        )
