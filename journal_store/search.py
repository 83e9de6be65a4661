"""Full-text search over what runs said and did: messages, tool arguments and results, model
answers, tasks, reasons. A read model like the others, kept by its own projector.

One document per event, holding the string values of its payload (ids, lease bookkeeping and
budget arithmetic are not prose, and their kinds are not indexed). SQLite keeps the documents
in an FTS5 table; PostgreSQL in a table with a `simple`-configuration tsvector and a GIN index
(`simple`: run ids, order numbers and file names are matched as written, never stemmed).

What a person types is never query syntax: it is split into words, and every word must occur
(in order within a word such as DHL-7731), on both databases.
"""

from __future__ import annotations

import json
import re
import secrets
import unicodedata
from dataclasses import dataclass
from typing import Any

from django.db import connections

from journal_store.journal_rows import Row
from runtime.unseen import code_point

TABLE = "search_event"
# A document keeps this many characters of an event's text (a tool that read a large file
# returned all of it; the head of it is what a search would find).
DOC_MAX = 16_000
QUERY_MAX = 200  # characters of what a person types
WORDS_MAX = 12
HITS_MAX = 200
RECENT = 2_000  # matching events the runs list is gathered from, newest first
# Kinds with no prose to find: the loop's arithmetic and the drivers' bookkeeping.
SKIPPED = frozenset(
    {
        "BudgetAllocated",
        "BudgetDebited",
        "DriverLeased",
        "DriverReleased",
        "LeaseGranted",
        "LeaseReleased",
        "LeaseRenewed",
        "MessageDelivered",
        "ModelCalled",
        "RunResumed",
    }
)
POSITION, RUN_ID, KIND, DATA = 0, 4, 5, 10  # columns of journal_rows.SELECT
# A word: no space, no control character (a NUL would end SQLite's query text, and
# PostgreSQL refuses it), none of the query syntax's characters.
WORD = re.compile(r"[^\s\x00-\x1f\x7f\"'()*:^+\-]+(?:[-.:/][^\s\x00-\x1f\x7f\"'()*:^+\-]+)*")
# What both indexes keep of a word: letters and digits (SQLite's unicode61 and PostgreSQL's
# `simple` parser split on everything else). A "word" without one (`%`, `_`, `...`) would be
# searched for as nothing and find nothing, where `*` or `^` is refused as no word.
INDEXED = re.compile(r"[^\W_]")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# The joiners shape the letters beside them (Persian writes U+200C inside words, an emoji's
# sequence U+200D) and the indexes split words at them as they split the text's own: searched.
JOINERS = "\u200c\u200d"


class BadQuery(ValueError):
    """What was typed holds no word to search for, or too many."""


# Where a snippet's matched words begin and end: control characters the page turns into
# <mark> once the text is escaped (and the API into brackets, as before), where brackets in
# the snippet could not be told from brackets in the text ("textparse/[parser].py"). The text
# may hold them too (a tool's output, a file read): the database marks a snippet with markers
# of the search's own, which no text holds, and the snippet is given with the text's START and
# STOP dropped and those written as START and STOP (`own_marks`). Documents indexed before are
# read so too: nothing stored changes.
START, STOP = "\x02", "\x03"
DROPPED = str.maketrans("", "", START + STOP)


@dataclass(frozen=True)
class Hit:
    run_id: str
    position: int
    kind: str
    snippet: str  # the matched words between START and STOP

    @property
    def bracketed(self) -> str:
        """The snippet with its matched words in brackets (the API's, as it always was)."""
        return self.snippet.replace(START, "[").replace(STOP, "]")


def markers() -> tuple[str, str]:
    """A search's own markers of a snippet's matched words: START, a nonce, STOP; and STOP, the
    nonce, START. Neither can be read in the text around it (it begins with a character it
    holds nowhere else), and no text holds a nonce made for one search."""
    nonce = secrets.token_hex(8)
    return f"{START}{nonce}{STOP}", f"{STOP}{nonce}{START}"


def own_marks(snippet: str, opened: str, closed: str) -> str:
    """The database's snippet with its matched words between START and STOP, and no other
    START or STOP: those the text held are dropped (they were never shown)."""
    return START.join(
        STOP.join(text.translate(DROPPED) for text in part.split(closed))
        for part in snippet.split(opened)
    )


def text_of(data: str) -> str:
    """The string values of an event's payload (its JSON text), in order, one per line."""
    found: list[str] = []
    size = 0

    def walk(value: Any) -> None:
        nonlocal size
        if size >= DOC_MAX:
            return
        if isinstance(value, str):
            if value:
                found.append(value)
                size += len(value) + 1
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(data))
    return folded("\n".join(found))[:DOC_MAX]


def folded(text: str) -> str:
    """`text` as both indexes keep it and a search's words are read: in NFKC, so that a
    full-width letter, a ligature or another compatibility character finds its plain letters
    and is found by them (neither SQLite's unicode61 nor PostgreSQL's `simple` folds them:
    "foo" in full-width letters and "ﬁle" were words of their own). The case is folded by the
    indexes, as before."""
    # The quick check first: most text (ASCII) is NFKC already and is not copied.
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def words(query: str) -> list[str]:
    """The words of what a person typed; BadQuery when there is none to search for."""
    if len(query) > QUERY_MAX:
        raise BadQuery(f"search for at most {QUERY_MAX} characters (this has {len(query)})")
    if why := unsearchable(query):
        raise BadQuery(f"the search {why}")
    # Folded as the text was indexed (after the checks: NFKC keeps a control, and makes none).
    found = [word for word in WORD.findall(folded(query)) if INDEXED.search(word)]
    if not found:
        raise BadQuery("type a word to search for (letters or digits)")
    if len(found) > WORDS_MAX:
        raise BadQuery(f"search for at most {WORDS_MAX} words (this has {len(found)})")
    return found


def unsearchable(text: str) -> str | None:
    """Why `text` cannot be searched for as typed ("holds ..."), or None: the search page's
    words and a review queue's `q` (dashboard/asked.queue_filter) are held to this one check."""
    # A control character was read as a word break and the answer echoed it back as the
    # query searched for.
    if CONTROL.search(text):
        return "holds a control character"
    # A format character draws nothing, or shows text in another order than it is written
    # (U+202E): a word break to the indexes, and "alert\u202e" echoed back as the query
    # searched read otherwise. Refused naming it, as the metrics filter refuses its kin.
    if unseen := next((ch for ch in text if format_character(ch)), None):
        return (
            f"holds {code_point(unseen)}, a character that is not shown or that changes the "
            "order text is shown in: type the words without it"
        )
    return None


def format_character(ch: str) -> bool:
    return ch not in JOINERS and unicodedata.category(ch) == "Cf"


def index(rows: list[Row], using: str) -> None:
    """Add the documents of a batch of journal rows (journal_rows.SELECT's columns)."""
    docs = []
    for row in rows:
        # Shared streams' events (a desk order's facts, a customer's intent) belong to no run:
        # a hit must name the run whose timeline shows it.
        if row[KIND] in SKIPPED or not row[RUN_ID]:
            continue
        body = text_of(row[DATA])
        if body:
            docs.append((row[POSITION], row[RUN_ID], row[KIND], body))
    if not docs:
        return
    key = "rowid" if connections[using].vendor == "sqlite" else "position"
    with connections[using].cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {TABLE} ({key}, run_id, kind, body) VALUES (%s, %s, %s, %s)", docs
        )


def clear(using: str) -> None:
    with connections[using].cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE}")


def search(
    query: str, run_id: str | None = None, limit: int = 50, using: str = "default"
) -> list[Hit]:
    """The events whose text holds every word of `query`, newest first (in one run, or all)."""
    terms = words(query)
    # HITS_MAX shown, and one more asked by a caller that says whether there are more.
    limit = max(1, min(limit, HITS_MAX + 1))
    vendor = connections[using].vendor
    opened, closed = markers()
    span = None if run_id is None else span_of(run_id, using)
    if run_id is not None and span is None:
        return []  # the journal holds no event of the run
    if vendor == "postgresql":
        sql, params = postgres_query(terms, run_id, limit, (opened, closed))
    else:
        sql, params = sqlite_query(terms, run_id, limit, (opened, closed), span)
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)
        return [
            Hit(run, position, kind, own_marks(snippet, opened, closed))
            for run, position, kind, snippet in cursor.fetchall()
        ]


def span_of(run_id: str, using: str) -> tuple[int, int] | None:
    """The first and last positions of the run's events (None: it has none), from the
    journal's index of run and position."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT MIN(position), MAX(position) FROM journal_event WHERE run_id = %s", [run_id]
        )
        first, last = cursor.fetchone()
    return None if first is None else (first, last)


def sqlite_query(
    terms: list[str],
    run_id: str | None,
    limit: int,
    marks: tuple[str, str],
    span: tuple[int, int] | None = None,
) -> tuple[str, list[Any]]:
    where = f"{TABLE} MATCH %s"
    params: list[Any] = [fts_match(terms)]
    if run_id is not None:
        where += " AND run_id = %s"
        params.append(run_id)
    if span is not None:
        # FTS5 cannot narrow by run_id (not indexed): every match of a word all runs use was
        # read, newest first, to find one run's few. Its rowids (positions) bound the read.
        where += " AND rowid BETWEEN %s AND %s"
        params.extend(span)
    sql = (
        f"SELECT run_id, rowid, kind, snippet({TABLE}, 2, %s, %s, '…', 16) "
        f"FROM {TABLE} WHERE {where} ORDER BY rowid DESC LIMIT %s"
    )
    return sql, [*marks, *params, limit]


def postgres_query(
    terms: list[str], run_id: str | None, limit: int, marks: tuple[str, str]
) -> tuple[str, list[Any]]:
    query = ts_query(len(terms))
    where = f"tsv @@ ({query})"
    params: list[Any] = list(terms)
    if run_id is not None:
        where += " AND run_id = %s"
        params.append(run_id)
    options = f"StartSel={marks[0]}, StopSel={marks[1]}, MaxFragments=1, MaxWords=24, MinWords=8"
    sql = (
        f"SELECT run_id, position, kind, ts_headline('simple', body, ({query}), %s) "
        f"FROM {TABLE} WHERE {where} ORDER BY position DESC LIMIT %s"
    )
    return sql, [*terms, options, *params, limit]


def runs_mentioning(query: str, limit: int = 50, using: str = "default") -> list[tuple[str, int]]:
    """The runs among the newest RECENT events that hold every word of `query`, most recent
    first, with how many of those events each holds. Bounded so that a word every run uses
    costs what a rare one does."""
    terms = words(query)
    if connections[using].vendor == "postgresql":
        inner = (
            f"SELECT run_id, position FROM {TABLE} WHERE tsv @@ ({ts_query(len(terms))}) "
            "ORDER BY position DESC LIMIT %s"
        )
        params: list[Any] = [*terms, RECENT]
    else:
        inner = (
            f"SELECT run_id, rowid AS position FROM {TABLE} WHERE {TABLE} MATCH %s "
            "ORDER BY rowid DESC LIMIT %s"
        )
        params = [fts_match(terms), RECENT]
    sql = (
        f"SELECT run_id, COUNT(*), MAX(position) FROM ({inner}) AS hits "
        "GROUP BY run_id ORDER BY MAX(position) DESC LIMIT %s"
    )
    with connections[using].cursor() as cursor:
        cursor.execute(sql, [*params, limit])
        return [(run_id, count) for run_id, count, _ in cursor.fetchall()]


def fts_match(terms: list[str]) -> str:
    """FTS5's query: each word a quoted phrase, so nothing in it is an operator, and a word such
    as DHL-7731 must appear as its parts in order."""
    return " ".join('"' + t.replace('"', '""') + '"' for t in terms)


def ts_query(count: int) -> str:
    """PostgreSQL's query for `count` words (given as parameters): phraseto_tsquery per word,
    so a word such as DHL-7731 matches its parts in order, and nothing typed is syntax."""
    return " && ".join(["phraseto_tsquery('simple', %s)"] * count)
