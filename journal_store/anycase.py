"""A substring match in any case, in every alphabet, on SQLite too.

Django's `icontains` is a LIKE on SQLite, and SQLite's LIKE folds the case of ASCII letters
only: "émile" did not find "Émile", nor "привет" "ПРИВЕТ", in the runs list's Search or a
review queue's words, though the trigram index (FTS5 folds the case of every letter) had
named the rows. A text with a letter beyond ASCII is matched by a function of ours instead,
registered on each SQLite connection as it opens, which folds each side a letter at a time as
the index does (`folds`). An ASCII text keeps the LIKE, which SQLite runs without calling back
into Python for each row it checks.

PostgreSQL's match is its own UPPER ... LIKE UPPER, which folds as the database's locale
does: every letter under a UTF-8 locale (the usual one), ASCII alone under the C locale.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from typing import Any

from django.db.models.lookups import IContains

# FTS5 folds the code points below this and Deseret's (its tokenizer's fold); no others.
FOLDED_BELOW = 0x10000
DESERET = range(0x10400, 0x10428)
# Python's `lower` changes no code point from here on (Adlam's are its last; a test checks).
LOWERED_BELOW = 0x1F000
# The tokenizer of SQLite's copies (journal_store/substrings.py), whose fold the match takes.
TOKENIZER = "tokenize = 'trigram'"
FUNCTION = "minutes_holds"


def holds(text: str | None, part: str | None) -> bool | None:
    """Whether `text` holds `part`, in any case (SQL's NULL for a NULL)."""
    if text is None or part is None:
        return None
    return fold(part) in fold(text)


def fold(text: str) -> str:
    """`text` folded a letter at a time as FTS5's trigram index folds the rows it keeps: as
    `lower` folds it (in C: a tenth of the time of a translation), but for a text holding
    one of the few letters `lower` folds otherwise (`unlike_lower`)."""
    if text.isascii() or unlike_lower().isdisjoint(text):
        return text.lower()
    return text.translate(folds())


@functools.cache
def unlike_lower() -> frozenset[str]:
    """The letters FTS5 folds otherwise than `lower` does, and Σ, which `lower` folds as the
    letters around it say (a final ς at a word's end)."""
    changed = {c for c in range(LOWERED_BELOW) if chr(c).lower() != chr(c)} | set(folds())
    odd = {chr(c) for c in changed if chr(c).lower() != chr(folds().get(c, c))}
    return frozenset(odd | {"\u03a3"})


@functools.cache
def folds() -> dict[int, int]:
    """Each code point FTS5 folds, and what to: asked of FTS5 itself, once a process.

    A search on SQLite folds case as its index does, so that every row it finds is a row the
    index names. Python's `lower` does not fold as FTS5 does: it made the last Σ of "ΟΣ" a
    final ς, so "ΟΣ" did not find "ΟΣΑ", and it folds letters newer than FTS5's tables, so
    "ანა" was found in "ᲐᲜᲐ" (Georgian Mtavruli) by a walk of the list and not when the index
    named the runs. FTS5 folds Unicode's simple case folding as its tables have it (the final
    sigma and the capital to the small sigma, the long s to s, the Kelvin sign to k), and, as
    invalid, U+FFFE and U+FFFF to U+FFFD. The code points asked are those Python gives a case,
    and those two; a test asks every one FTS5 could fold."""
    asked = [
        c
        for c in (*range(FOLDED_BELOW), *DESERET)
        if not 0xD800 <= c <= 0xDFFF
        and (c in (0xFFFE, 0xFFFF) or chr(c).lower() != chr(c) or chr(c).upper() != chr(c))
    ]
    return {c: f for c, f in fts5_folds(asked).items() if c != f}


def fts5_folds(points: list[int]) -> dict[int, int]:
    """What FTS5's trigram tokenizer folds each of `points` to (a table of each, three times)."""
    index = sqlite3.connect(":memory:")
    try:
        index.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, {TOKENIZER})")
        index.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        index.executemany(
            "INSERT INTO t (rowid, x) VALUES (?, ?)", ((c, chr(c) * 3) for c in points)
        )
        found = {doc: ord(term[0]) for term, doc in index.execute("SELECT term, doc FROM v")}
    finally:
        index.close()
    assert len(found) == len(points), "FTS5 made no trigram of some code points"
    return found


@functools.cache
def loose() -> frozenset[str]:
    """The ASCII letters a letter beyond ASCII folds to (s: the long s; k: the Kelvin sign),
    in either case: SQLite's LIKE, which folds ASCII only, would not let those rows through."""
    ascii = {chr(f) for c, f in folds().items() if c > 127 and f < 128}
    return frozenset(ascii | {c.upper() for c in ascii})


def register(sender: Any, connection: Any, **kwargs: Any) -> None:
    """`connection_created`'s receiver: the function on each new SQLite connection."""
    if connection.vendor == "sqlite":
        connection.connection.create_function(FUNCTION, 2, holds, deterministic=True)


def shape(text: str) -> str:
    """A LIKE pattern every row holding `text` in any case matches (SQLite's LIKE folds the
    case of ASCII letters): each of its letters beyond ASCII is any one letter (`_`), as are
    the ASCII letters a letter beyond ASCII folds to (`loose`); the rest is itself. SQLite
    checks it without calling into Python, so the function is called only on the rows that
    have the text's shape. Exact: every letter folds to one letter, and none beyond ASCII to
    an ASCII one but those (every code point checked)."""
    return "%" + "".join("_" if c in loose() or not c.isascii() else escaped(c) for c in text) + "%"


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
