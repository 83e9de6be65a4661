"""Searches for a piece of text anywhere in a few columns, served by an index of their
trigrams: the runs list's Search (a task, a run id) and a review queue's words (a dead letter's
reason, error and id; a conflict's subject, predicate and id: queues.Queue.searched). Each is a
substring match in any case (`icontains`; in every alphabet on SQLite too: anycase.py), which no
b-tree index serves: a search that matched nothing read every row to say so (the runs list at
20,000 runs: 23 ms a page, and 21 ms more at each poll of the list while open).

An index of the columns' three-character pieces finds the few rows that can hold the text, and
the substring match is checked on those rows alone, as before: the index finds, the match
decides, so what a search finds is what it found before.

The index is kept in a table of its own beside the searched one, holding a copy of the searched
columns, which triggers on the searched table keep: every writer keeps it (the projectors, an
import, a rebuild's clear), and only when a searched column changes. On the searched table
itself, PostgreSQL's trigram indexes would take an entry for every trigram of the task at each
of the projectors' updates of a run (a new row version, since other columns are indexed).

- SQLite: an FTS5 table with the trigram tokenizer (SQLite 3.34 and later). A search asks it
  for a phrase of the text (its trigrams in a row, case folded). A row's copy is found again by
  a phrase of its key, itself a searched column, where a row id would change under VACUUM.
- PostgreSQL: a table with pg_trgm's GIN indexes of each column in upper case, asked with the
  LIKE that Django's `icontains` is.

A text in fewer than FEW rows is rare: the rows are looked up by the keys the index names. A
more common one is found by walking the page's order, where it soon fills a page.

Text shorter than three characters has no trigram of its own, and one that few rows held read
every row to say so (25 ms a page at 20,000 runs on SQLite, 42 on PostgreSQL). It is looked up
too: on SQLite by the trigrams it starts, read by range in FTS5's vocabulary (every occurrence
starts one, since the copy keeps each column's last two characters again, followed by a control
character no search holds: TAIL); on PostgreSQL by a GIN index of each column's pieces of one
and two characters. The range is of the text as FTS5 folds it, which the match on SQLite
folds as too (anycase.fold), so the rows it names are every row the match finds.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import F, Q

from journal_store.anycase import TOKENIZER, AnyCase, escaped, fold
from journal_store.search import folded
from journal_store.unindexed import Unweighed

SHORTEST = 3  # characters: a trigram
# SQLite: the copy's column of each searched column's last two characters, each followed by
# two SEPs (a control character, which no search holds), so that a text of one or two
# characters that ends a column starts a trigram too (`starting`).
TAIL = "tail"
SEP = "\x1f"
# PostgreSQL: every piece of one and of two characters of a text, which a GIN index of each
# column keeps (in upper case) for a text too short for a trigram.
PIECES = "minutes_pieces"
PIECES_FUNCTION = (
    f"CREATE OR REPLACE FUNCTION {PIECES}(t text) RETURNS text[] "
    "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ "
    "SELECT coalesce(array_agg(DISTINCT piece), '{}') FROM ("
    "SELECT substr(t, n, 1) AS piece FROM generate_series(1, length(t)) AS n UNION ALL "
    "SELECT substr(t, n, 2) FROM generate_series(1, length(t) - 1) AS n) AS pieces $$"
)
# PostgreSQL: the probe of a copy (`few`). Once VACUUM had counted a trigram index's pages,
# the planner weighed the probe of a text whose words are short (a letter's id,
# "r-f43e26ee84c5:1": "r" and "1" are in every row) dearer than reading the copy, though it
# guessed the text in two rows: 0.26 ms became 14 at 20,000 letters. So the planner guesses how
# many rows hold the texts; a text it guesses in COMMON times the bound is common (NULL: found
# by walking a page's order, where reading the copy for keys would be wasted), and any other is
# looked up with sequential scans off. Forced, a common text's probe read every row of the
# index (3 ms at 20,000 letters, where reading the copy stopped at the bound in 0.6).
# PL/pgSQL plans a dynamic query at each call, for the texts it is given. With sequential
# scans off, the LIMIT no longer tempts the planner to read the copy from its start until it
# has the bound's rows, which a MATERIALIZED query used to stop.
PROBE = "minutes_held"
COMMON = 10
PROBE_FUNCTION = (
    f"CREATE OR REPLACE FUNCTION {PROBE}(probe text, texts text[], bound integer) "
    "RETURNS text[] LANGUAGE plpgsql VOLATILE SET enable_seqscan = on AS $$ "
    "DECLARE plan json; keys text[]; "
    "BEGIN "
    "EXECUTE 'EXPLAIN (FORMAT JSON) ' || probe USING texts INTO plan; "
    f"IF (plan->0->'Plan'->>'Plan Rows')::float >= {COMMON} * bound THEN RETURN NULL; END IF; "
    "PERFORM set_config('enable_seqscan', 'off', true); "
    "EXECUTE 'SELECT array_agg(key) FROM (' || probe || ' LIMIT $2) AS held (key)' "
    "USING texts, bound INTO keys; "
    "RETURN coalesce(keys, '{}'); "
    "END $$"
)
# Rows a text may be in for it to be rare: they are looked up by their keys, and sorted for a
# page, where a more common text is found by walking the page's order.
FEW = 128
TRIGGERS = ("insert", "delete", "update", "truncate")  # SQLite has no TRUNCATE
# Pages of an FTS5 index a round of the beat merges (services/indexes.py): the 3,000 dead
# letters' index as the store guard's writes leave it took two rounds of 64.
TIDY_PAGES = 256


@dataclass(frozen=True)
class Searched:
    """A table's columns a search looks in, its key among them."""

    table: str
    key: str
    columns: tuple[str, ...]

    @property
    def words(self) -> str:
        """The table of the copy and its trigrams (on SQLite an FTS5 table)."""
        return f"{self.table}_words"

    @property
    def terms(self) -> str:
        """SQLite's view of the FTS5 table's trigrams (fts5vocab), read by range (`starting`)."""
        return f"{self.words}_terms"

    def tail(self, row: str = "") -> str:
        """SQLite's expression of the copy's TAIL column of `row` (`new.`, or the table's own
        row): each searched column's last two characters, each followed by two SEPs."""
        seps = f"char({ord(SEP)}, {ord(SEP)})"
        return " || ".join(f"substr({row}{c}, -2) || {seps}" for c in self.columns)

    def sqlite(self) -> list[str]:
        """The FTS5 table, its vocabulary, and the triggers that keep it, filled from the
        table as it stands."""
        words, columns = self.words, ", ".join(self.columns)
        new = ", ".join(f"new.{c}" for c in self.columns)
        # Only when a searched column changed: the projectors rewrite a row's every column.
        changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in self.columns)
        return [
            f"CREATE VIRTUAL TABLE {words} USING fts5({columns}, {TAIL}, {TOKENIZER})",
            f"CREATE VIRTUAL TABLE {self.terms} USING fts5vocab({words}, 'row')",
            f"INSERT INTO {words} ({columns}, {TAIL}) SELECT {columns}, {self.tail()} "
            f"FROM {self.table}",
            f"CREATE TRIGGER {words}_insert AFTER INSERT ON {self.table} BEGIN "
            f"INSERT INTO {words} ({columns}, {TAIL}) VALUES ({new}, {self.tail('new.')}); END",
            f"CREATE TRIGGER {words}_delete AFTER DELETE ON {self.table} BEGIN "
            f"{self.forget_old()} END",
            f"CREATE TRIGGER {words}_update AFTER UPDATE OF {columns} ON {self.table} "
            f"WHEN {changed} BEGIN {self.forget_old()} "
            f"INSERT INTO {words} ({columns}, {TAIL}) VALUES ({new}, {self.tail('new.')}); END",
        ]

    def forget_old(self) -> str:
        """A trigger's statements that delete the copy of the row `old`: found by a phrase of
        its key in the key's column, or, for a key too short for a trigram, by reading them
        all (a condition on `old` alone, which SQLite weighs once, before any row is read)."""
        words, key = self.words, self.key
        phrase = f"'{key} : \"' || replace(old.{key}, '\"', '\"\"') || '\"'"
        return (
            f"DELETE FROM {words} WHERE rowid IN (SELECT rowid FROM {words} "
            f"WHERE {words} MATCH {phrase} AND {key} = old.{key}); "
            f"DELETE FROM {words} WHERE length(old.{key}) < {SHORTEST} AND {key} = old.{key};"
        )

    def sqlite_drop(self) -> list[str]:
        return [
            *(f"DROP TRIGGER IF EXISTS {self.words}_{what}" for what in TRIGGERS[:3]),
            f"DROP TABLE IF EXISTS {self.terms}",
            f"DROP TABLE IF EXISTS {self.words}",
        ]

    def postgres(self) -> list[str]:
        """The table, its trigram indexes (written once per row, so without GIN's pending list:
        a plan weighs no list of rows not yet in the index), and the triggers that keep it,
        filled from the table as it stands."""
        words, columns, table = self.words, ", ".join(self.columns), self.table
        new = ", ".join(f"NEW.{c}" for c in self.columns)
        changed = " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in self.columns)
        kinds = ", ".join(
            f"{c} text NOT NULL" + (" PRIMARY KEY" if c == self.key else "") for c in self.columns
        )
        function = f"{words}_kept"
        return [
            f"CREATE TABLE {words} ({kinds})",
            f"INSERT INTO {words} ({columns}) SELECT {columns} FROM {table}",
            *(
                f"CREATE INDEX {words}_{c} ON {words} USING gin (UPPER({c}) gin_trgm_ops) "
                "WITH (fastupdate = off)"
                for c in self.columns
            ),
            PIECES_FUNCTION,
            PROBE_FUNCTION,
            *(
                f"CREATE INDEX {words}_{c}_pieces ON {words} USING gin ({PIECES}(UPPER({c}))) "
                "WITH (fastupdate = off)"
                for c in self.columns
            ),
            # OR REPLACE: the restore docs/journal.md gives drops a store's tables, and with
            # them its triggers, not its functions; a backup older than this migration is
            # migrated over that.
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN "
            f"IF TG_OP = 'TRUNCATE' THEN DELETE FROM {words}; RETURN NULL; END IF; "
            f"IF TG_OP <> 'INSERT' THEN DELETE FROM {words} WHERE {self.key} = OLD.{self.key}; "
            "END IF; "
            f"IF TG_OP <> 'DELETE' THEN INSERT INTO {words} ({columns}) VALUES ({new}); END IF; "
            "RETURN NULL; END $$",
            f"CREATE TRIGGER {words}_insert AFTER INSERT ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()",
            f"CREATE TRIGGER {words}_delete AFTER DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()",
            f"CREATE TRIGGER {words}_update AFTER UPDATE OF {columns} ON {table} "
            f"FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION {function}()",
            f"CREATE TRIGGER {words}_truncate AFTER TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        ]

    def postgres_drop(self) -> list[str]:
        return [
            f"DROP TABLE IF EXISTS {self.words}",
            *(f"DROP TRIGGER IF EXISTS {self.words}_{what} ON {self.table}" for what in TRIGGERS),
            f"DROP FUNCTION IF EXISTS {self.words}_kept()",
        ]

    def holding(self, said: Sequence[str], vendor: str, using: str = "default") -> Q:
        """The rows holding any of `said` (any case) in one of the columns: the match itself,
        and where the text is rare, the rows the index names, by their keys (`few`). A common
        text is the match alone, checked on each row as the page's order is read, where it
        soon fills a page. Without a vendor (a walk, which checks each row it reads), the
        match alone."""
        return self.found(said, self.few(said, vendor, using), vendor)

    def found(self, said: Sequence[str], keys: list[str] | None, vendor: str) -> Q:
        """`holding`, with `few`'s answer (`keys`) asked already.

        A common text's match is unweighed on PostgreSQL (journal_store/unindexed.py), for its
        planner to walk the page's order: it guesses how many rows a LIKE matches from the
        length of its pattern (a fifth for each letter), so that a longer word seemed in no
        run at all, and it read and sorted every run for a page (a word one run in fifty
        holds: 22.7 ms at 20,000 runs, 4.0 walked)."""
        if keys is not None:
            return self.matched(said) & Q(**{f"{self.key}__in": keys})
        if vendor == "postgresql":
            return Q(Unweighed(self.matched(said)))
        return self.matched(said)

    def matched(self, said: Sequence[str]) -> Q:
        """The rows holding any of `said` (any case) in one of the columns: the match itself."""
        found = Q()
        for text in said:
            for column in self.columns:
                found |= Q(AnyCase(F(column), text))
        return found

    def indexed(self, said: Sequence[str], vendor: str) -> bool:
        """Whether the index can name the rows holding `said`: a text of three characters or
        more by its trigrams; a shorter one by the trigrams it starts (SQLite) or by its pieces
        (PostgreSQL)."""
        if vendor not in ("sqlite", "postgresql") or not said:
            return False
        return all(said)

    def few(
        self, said: Sequence[str], vendor: str, using: str = "default", fewer_than: int = 0
    ) -> list[str] | None:
        """The keys of the rows that may hold `said` when fewer than `fewer_than` (FEW) do (a
        rare text: the rows are looked up by their keys, not found in a walk of a page's
        order); None when as many do, or where the index cannot tell.

        PostgreSQL is asked too, where its planner could weigh a subquery of the table against
        a walk: it misjudged how many rows a common text is in, and read every one (the
        newest start of the runs holding "the", 44 ms at 20,000 runs, where a walk took 0.8)."""
        if not self.indexed(said, vendor):
            return None
        bound = fewer_than or FEW
        with connections[using].cursor() as cursor:
            if vendor == "postgresql":
                cursor.execute(*self.held(said, bound))
                (keys,) = cursor.fetchone()
                return None if keys is None or len(keys) >= bound else keys
            phrases: list[str] = []
            for text in said:
                starts = [text] if len(text) >= SHORTEST else self.starting(cursor, text, bound)
                if starts is None:
                    return None
                phrases += starts
            if not phrases:
                return []
            # Their row ids first: the FTS5 table reads its copy of a row for its columns
            # (0.42 ms for 256 rows of 20,000, the row ids alone 0.12), which a common text
            # needs none of.
            cursor.execute(
                f"SELECT rowid FROM {self.words} WHERE {self.words} MATCH %s LIMIT %s",
                [match(phrases), bound],
            )
            rows = [row for (row,) in cursor.fetchall()]
            if len(rows) >= bound or not rows:
                return None if rows else []
            marks = ", ".join(["%s"] * len(rows))
            cursor.execute(f"SELECT {self.key} FROM {self.words} WHERE rowid IN ({marks})", rows)
            return [key for (key,) in cursor.fetchall()]

    def starting(self, cursor: Any, text: str, bound: int) -> list[str] | None:
        """SQLite's trigrams that start with `text` (of one or two characters), which every
        row holding it holds: in a column, or, where it ends a column, in TAIL. None once the
        rows holding them, counted a trigram at a time (a row holding two of them twice), are
        `bound`: a text that common is found in a walk of a page's order. Read by range in
        FTS5's vocabulary, whose terms are folded as `fold` folds the text (its code points'
        order is their UTF-8's, which SQLite compares)."""
        low = fold(text)
        after = ord(low[-1]) + 1
        if after == 0xD800:  # no text holds a surrogate
            after = 0xE000
        if after > sys.maxunicode:
            cursor.execute(f"SELECT term, doc FROM {self.terms} WHERE term >= %s", [low])
        else:
            high = low[:-1] + chr(after)
            cursor.execute(
                f"SELECT term, doc FROM {self.terms} WHERE term >= %s AND term < %s", [low, high]
            )
        terms, rows = [], 0
        for term, doc in cursor:  # read only as far as needed: a common text's are many
            terms.append(term)
            rows += doc
            if rows >= bound:
                return None
        return terms

    def held(self, said: Sequence[str], bound: int) -> tuple[str, list[Any]]:
        """PostgreSQL's query of the keys of up to `bound` rows holding any of `said`, or NULL
        where the planner guesses the texts common: `probe`, run by PROBE."""
        return f"SELECT {PROBE}(%s, %s::text[], %s)", [*self.probe(said), bound]

    def probe(self, said: Sequence[str]) -> tuple[str, list[str]]:
        """PostgreSQL's query of the copy's rows holding any of `said`, and its texts ($1, an
        array)."""
        where, texts = self.liked(said)
        return f"SELECT {self.key} FROM {self.words} WHERE {where}", texts

    def liked(self, said: Sequence[str]) -> tuple[str, list[str]]:
        """PostgreSQL's condition of the rows holding any of `said` (any case), as its indexes
        hold the columns (UPPER), its texts ($1[1], $1[2], ...): a LIKE, where LIKE's
        wildcards and its escape in a text are the text's own, as `icontains` has them; or
        for a text too short for a trigram, its being one of the column's pieces."""
        found, texts = [], []
        for text in said:
            for c in self.columns:
                texts.append(text if len(text) < SHORTEST else escaped(text))
                n = len(texts)
                if len(text) < SHORTEST:
                    found.append(f"{PIECES}(UPPER({c})) @> ARRAY[UPPER($1[{n}])]")
                else:
                    found.append(f"UPPER({c}) LIKE UPPER('%' || $1[{n}] || '%')")
        return " OR ".join(found), texts


def postgres_shared_drop() -> list[str]:
    """The functions every copy on PostgreSQL shares (PIECES, PROBE), dropped once the last
    copy is (0058's way back): `postgres_drop` leaves them to the copies still standing."""
    return [
        f"DROP FUNCTION IF EXISTS {PIECES}(text)",
        f"DROP FUNCTION IF EXISTS {PROBE}(text, text[], integer)",
    ]


def compact(tables: Sequence[Searched], using: str = "default") -> list[str]:
    """Each copy's indexes made again in one go, on PostgreSQL, after a rebuild of the views
    wrote every row of the copy again (the copies written by name: a table's own rows' deletes
    and inserts, by its triggers). Their GIN indexes had kept the first writing's entries
    beside the second's, and VACUUM does not give that back: a letter's id at 20,000 letters
    read the id's index in 3.3 ms, 0.23 once made again (2.2 MB -> 1.4 MB). Concurrently, so
    that searches and writes go on meanwhile; it cannot run in a transaction, so none is
    asked of it there. Nothing on SQLite, whose FTS5 segments the beat merges (`tidy`). The
    copies made again, by name."""
    connection = connections[using]
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return []
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"REINDEX TABLE CONCURRENTLY {table.words}")
    return [table.words for table in tables]


def tidy(tables: Sequence[Searched], using: str = "default") -> list[str]:
    """Merge some of the segments each FTS5 table's writes left (up to TIDY_PAGES pages of
    each), on SQLite; nothing on PostgreSQL, whose indexes keep no pending list. The tables
    merged, by name.

    An FTS5 index is written as segments, which FTS5 merges as it writes only once several
    pile up on a level: a look-up reads every segment, so it cost more as the table grew (the
    probe of a dead letter's id, 1,487 SQLite steps with 200 letters, 3,629 with 3,000), and
    297 at both once they are merged. A 'merge' with a negative count merges any level of two
    segments or more, and does nothing once the index is one."""
    if connections[using].vendor != "sqlite":
        return []
    with connections[using].cursor() as cursor:
        for table in tables:
            cursor.execute(
                f"INSERT INTO {table.words} ({table.words}, rank) VALUES ('merge', %s)",
                [-TIDY_PAGES],
            )
    return [table.words for table in tables]


def variants(text: str) -> list[str]:
    """What a search looks for: the text as typed and in NFKC (journal_store/search.py
    `folded`), so that full-width letters typed by an input method find the text an agent
    wrote in ASCII, as the search page's index finds it."""
    return list(dict.fromkeys((text, folded(text))))


def match(said: Sequence[str]) -> str:
    """An FTS5 query of the rows holding any of `said`: each a phrase, which takes anything
    between its double quotes (a quote doubled) as the text itself, never as query syntax."""
    return " OR ".join('"' + text.replace('"', '""') + '"' for text in said)


RUNS = Searched("projection_run", "run_id", ("run_id", "task"))
