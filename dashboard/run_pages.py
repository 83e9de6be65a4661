"""The runs list a page at a time, for its page and GET /api/runs: the runs after a cursor, the
place in the list's order of the last run the page before showed, where a page was an offset.

An offset read and threw away every run before the page (the 400th page of 50 read 20,000 runs
to show 50), so a page cost more the further into the list it was and the more runs the store
held. A cursor is that last run's value in the sort's column and its run id: the list is
ordered by both (listing.Sort), and the next page is the runs after that pair, a seek in the
index of the column and the run id (migrations 0035, 0038) and a read of the rows it shows, however
far in. It carries the sort's name too, since a place in one order is no place in another.

Why no run is shown twice or skipped. The pages follow one total order (a run id is unique, so
runs that tie on the column are ordered by it), each starting strictly after the last run of
the one before. A run that existed when the paging began, and whose value in the column has
not changed since, is at or before a page's cursor (shown already) or after it (shown on a
later page): once. Runs that arrive meanwhile take their own places without moving the
others, where under an offset a run new at the top pushed every run one place down and the
next page began with the last run of the one before; newest first, a new run comes before
every cursor and is not shown (the list's poll for newer runs announces it). As far as the
sort allows: a run's start never changes, so newest and oldest first are exact; tokens, cost,
findings and status change while a run flies, and a run whose value moves across a cursor
between two pages is shown on both or on neither, as under an offset. A duration is kept once
a run's clock stops (journal_store/run_columns.py stopped_after): a run that finishes while
somebody pages leaves the runs without one, at the end, for its place among the others.

A filter no index of its own serves in the order (a status by tokens, a tag) is checked on
windows of the order's index first (`walked`), where the filter's index and a sort of every
run it selected grew with the store; the poll's reads (`newest_start`, `started_since`) walk
the latest starts alike.

Runs without a value (no known start or cost; no duration: still running, or without a start)
come last in either direction: they are read apart once those with one are exhausted, by run
id, each part a range of the same index. The condition `value <= v AND (value < v OR run_id <
id)` is written with its first half alone as well, which both databases seek by; the OR alone
they would not.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Max, Q, QuerySet

from dashboard import listing
from journal_store.models import RunSummary
from services.asked import BadQuery, shown

CURSOR_CHARS = 400  # what this module makes is ~100 characters; a longer one is none of them
TOKEN = re.compile(r"[A-Za-z0-9_-]+")


def _time(value: Any) -> datetime:
    moment = datetime.fromisoformat(value)  # TypeError for anything but a string
    if moment.tzinfo is None:
        raise ValueError("a time without its offset")
    return moment


def _whole(value: Any) -> int:
    if type(value) is not int or abs(value) >= 2**63:  # not bool; what a bigint holds
        raise TypeError(value)
    return value


def _number(value: Any) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise TypeError(value)
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise TypeError(value)
    return value


def _micros(value: Any) -> timedelta:
    return timedelta(microseconds=_whole(value))  # OverflowError past timedelta's range


# Each column a list is sorted by: its value as a cursor writes it in JSON, and read back (a
# TypeError, ValueError or OverflowError when it cannot be one).
VALUES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "started_at": (datetime.isoformat, _time),
    "status": (str, _text),
    "tokens": (int, _whole),
    "findings_count": (int, _whole),
    "cost": (float, _number),
    "duration": (lambda d: d // timedelta(microseconds=1), _micros),
}


@dataclass(frozen=True)
class Cursor:
    """The place a page goes on after: the sort, and the last run shown's value in its column
    (None: it had none) and run id."""

    sort: str
    value: Any
    run_id: str

    def token(self) -> str:
        """As a parameter carries it: opaque, URL-safe (base64 of JSON, without padding)."""
        write, _ = VALUES[listing.SORTS[self.sort].column]
        value = None if self.value is None else write(self.value)
        packed = json.dumps([self.sort, value, self.run_id], separators=(",", ":"))
        return base64.urlsafe_b64encode(packed.encode()).decode().rstrip("=")

    @classmethod
    def read(cls, text: str, sort: str) -> Cursor | None:
        """The cursor `text` is, for a list sorted by `sort`; None when blank (the first page).
        BadQuery at `after` when it is none this module made, or one of another order."""
        text = text.strip()
        if not text:
            return None
        found = _unpacked(text)
        if found is None:
            why = f"{shown(text)} is no place in the runs list: give the `next` a page answered"
            raise BadQuery({"after": f"{why}, as it was given (nothing: the first page)"})
        made_for, value, run_id = found
        if made_for != sort:
            why = f"a place in the list sorted by {made_for}, not by {sort}"
            raise BadQuery({"after": f"{why}: start again from the first page"})
        return cls(sort, value, run_id)


def _unpacked(text: str) -> tuple[str, Any, str] | None:
    """What a cursor holds, checked: its sort, value and run id; None for anything else."""
    if len(text) > CURSOR_CHARS or not TOKEN.fullmatch(text):
        return None
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        sort, value, run_id = json.loads(packed)
        if sort not in listing.SORTS or not isinstance(run_id, str) or not 0 < len(run_id) <= 64:
            return None
        key = listing.SORTS[sort]
        if value is None:
            return (sort, None, run_id) if key.nullable else None
        _, read = VALUES[key.column]
        return sort, read(value), run_id
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, OverflowError):
        return None  # json.JSONDecodeError is a ValueError; a wrong shape fails to unpack


@dataclass(frozen=True)
class Page:
    runs: list[RunSummary]
    next: str | None  # the cursor of the page after this one; None on the last


# A filter walked over the list's order (listing.walked) is checked on a first window of it,
# FIRST_WINDOW pages' worth, then on one as long as the filter, as common as it was so far,
# needs to fill the page (twice as long), while all of them come to WINDOW pages' worth
# at most; a page they did not fill goes on by the filter's own index, as without a walk. At
# 20,000 runs a page of 50 failed by tokens took 48,203 SQLite steps, and about 8,000 now; a
# filter none of the first window holds goes to its own index straight after it. Each window
# is two queries, and Django's building of a query costs more than SQLite's reading a few
# hundred rows: the first window is long enough that one in eight runs fills the page in it.
FIRST_WINDOW = 8
WINDOW = 20
NEWEST_WINDOW = 256  # the latest started runs the poll walks (newest_start, started_since)


def page(
    runs: QuerySet[RunSummary],
    sort: str,
    after: Cursor | None,
    limit: int,
    walk: QuerySet[RunSummary] | None = None,
) -> Page:
    """Up to `limit` of `runs` (unordered: listing.matching, or narrower) in the list's order
    by `sort`, after the cursor (from the start without one), and the cursor of the next page
    when more follow. At most two range reads of limit + 1 rows each; with `walk` (the same
    runs as listing.walked writes them), the first a walk of the order (`walked`)."""
    key = listing.SORTS[sort]
    column, way = key.column, "lt" if key.descending else "gt"
    order = key.order(nulls_last=False)
    found: list[RunSummary] = []
    if after is None or after.value is not None:
        mark = None if after is None else (after.value, after.run_id)
        if walk is not None:
            found = walked(runs, walk, key, mark, limit)
        else:
            found = list(beyond(runs, key, mark).order_by(*order)[: limit + 1])
    if key.nullable and len(found) <= limit:
        # The runs with a value are exhausted: those without one follow, by run id. Ordered
        # by the column too (NULL in each), as the index is: PostgreSQL takes `IS NULL` for no
        # equality, and ordered by the run id alone it walked the primary key for them.
        blank = runs.filter(**{f"{column}__isnull": True})
        if after is not None and after.value is None:
            blank = blank.filter(**{f"run_id__{way}": after.run_id})
        found += blank.order_by(*order)[: limit + 1 - len(found)]
    shown_here = found[:limit]
    if len(found) <= limit:
        return Page(shown_here, None)
    last_shown = shown_here[-1]
    return Page(shown_here, Cursor(sort, getattr(last_shown, column), last_shown.run_id).token())


def walked(
    runs: QuerySet[RunSummary],
    walk: QuerySet[RunSummary],
    key: listing.Sort,
    mark: tuple[Any, str] | None,
    limit: int,
) -> list[RunSummary]:
    """Up to limit + 1 of the runs with a value after `mark`, in `key`'s order: the filter
    checked on the runs of windows of the order (`walk`), then read by its own index
    (`runs`) beyond the last."""
    order = key.order(nulls_last=False)
    wanted = limit + 1
    everything = RunSummary.objects.using(runs.db)
    found: list[RunSummary] = []
    size, walked_over = FIRST_WINDOW * wanted, 0
    while True:
        # The window's last run, from the order's index alone (its column and the run id).
        edge = beyond(everything, key, mark).order_by(*order)
        last = edge.values_list(key.column, "run_id")[size - 1 : size].first()
        near = beyond(walk, key, mark)
        if last is not None:
            near = near.filter(up_to(key, last))
        found += near.order_by(*order)[: wanted - len(found)]
        if last is None or len(found) == wanted:
            return found  # the order ends in the window, or the page is full
        mark, walked_over = last, walked_over + size
        if not found:
            break  # none in the first window, eight pages' worth: a rare filter
        # Twice what the filter, as common as it was so far, needs: a window that falls short
        # costs two more queries, and each costs Django more than SQLite a hundred rows.
        size = max(wanted, math.ceil(2 * (wanted - len(found)) * walked_over / len(found)))
        if walked_over + size > WINDOW * wanted:
            break
    return found + list(beyond(runs, key, mark).order_by(*order)[: wanted - len(found)])


def beyond(
    runs: QuerySet[RunSummary], key: listing.Sort, mark: tuple[Any, str] | None
) -> QuerySet[RunSummary]:
    """Of `runs`, those with a value in `key`'s column after `mark` (a value and a run id) in
    its order: all of them without one."""
    column, way = key.column, "lt" if key.descending else "gt"
    valued = runs.filter(**{f"{column}__isnull": False}) if key.nullable else runs
    if mark is None:
        return valued
    value, run_id = mark
    # v <= x AND (v < x OR id < y): the first half is an index range
    seek = Q(**{f"{column}__{way}e": value})
    return valued.filter(seek, Q(**{f"{column}__{way}": value}) | Q(**{f"run_id__{way}": run_id}))


def up_to(key: listing.Sort, mark: tuple[Any, str]) -> Q:
    """The runs at or before `mark` in `key`'s order (those with a value: `beyond`'s others),
    with the half an index ranges over written alone, as `beyond` does."""
    back = "gt" if key.descending else "lt"
    value, run_id = mark
    seek = Q(**{f"{key.column}__{back}e": value})
    return seek & (Q(**{f"{key.column}__{back}": value}) | Q(**{f"run_id__{back}e": run_id}))


def newest_start(chosen: listing.RunFilter) -> datetime | None:
    """The latest start among the runs the filter selects: what the list's poll for newer
    runs counts from. Runs are projected in the journal's order, and a run's start is its
    first event's time, so a run the list did not have yet starts after every run it had.

    Where no index of the filter's serves the order by start, the first of its runs among the
    NEWEST_WINDOW latest started, walked: asked as a maximum, the latest start of the runs a
    tag selects read every one of them (17,007 SQLite steps at 3,000 runs, a third tagged)."""
    chose = listing.selection(dataclasses.replace(chosen, sort="started"), caught_up=False)
    runs, walk = chose.runs.filter(started_at__isnull=False), chose.walk
    if walk is not None:
        key = listing.SORTS["started"]
        order = key.order(nulls_last=False)
        edge = beyond(RunSummary.objects.using(runs.db), key, None).order_by(*order)
        window = NEWEST_WINDOW
        bound = edge.values_list("started_at", "run_id")[window - 1 : window].first()
        near = beyond(walk, key, None)
        if bound is not None:
            near = near.filter(up_to(key, bound))
        first = near.order_by(*order).values_list("started_at", flat=True).first()
        if first is not None or bound is None:  # found, or the window held every run
            return first
    # A seek in the index of the start (the status's, the team's: migration 0053), or the
    # filter's own runs where the window had none.
    newest: datetime | None = runs.aggregate(newest=Max("started_at"))["newest"]
    return newest


def started_since(chosen: listing.RunFilter, mark: datetime | None) -> int:
    """How many runs the filter selects that started after `mark` (with no mark, the list had
    no run with a start: every one that has one): what the list's poll announces. A seek in
    the start's index, not a read of the list again.

    Where no index of the filter's serves the start, the runs started since the mark are
    walked, each checked, when no more than NEWEST_WINDOW of them started (a poll of a list
    drawn a moment ago: none or a few): counted by the filter's index, the runs since of a
    tag read every run the tag selects, at every poll."""
    chose = listing.selection(dataclasses.replace(chosen, sort="started"))
    runs, walk = chose.runs.filter(started_at__isnull=False), chose.walk
    if mark is None:
        return runs.count()
    if walk is not None:
        since = RunSummary.objects.using(runs.db).filter(started_at__gt=mark)
        order = listing.SORTS["oldest"].order(nulls_last=False)
        many = since.order_by(*order).values_list("run_id")[NEWEST_WINDOW : NEWEST_WINDOW + 1]
        if many.first() is None:
            return walk.filter(started_at__gt=mark).count()
    return runs.filter(started_at__gt=mark).count()
