"""What parks a run in its control stream (Control.parked_on), folded as the stream grows.

Every step asks it, and the stream grows by every failed step, stall, request and letter a run
has had: read whole, a step of a long run with a flaky endpoint paid for all of its history.
The answer depends on every row (a row no event model reads may be anywhere), so it is folded
once per process and database, and each later look reads only what is new to it:

- the rows after the version last folded, and that version's row again (the same event, or
  the stream is not the one folded: a database emptied and filled again, a transaction rolled
  back, is folded anew);
- the rows the answer stands on now: each open letter (rewritten so it no longer reads, it is
  no letter but an unreadable row) and each unreadable row (mended, it may be a decision).
  Any of them changed, the stream is folded anew.

What is left out: a row already folded, neither an open letter nor unreadable, rewritten
behind the journal's back afterwards; this process goes on past it, and a process that folds
the stream anew (a worker started since) parks the run on it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from journal_store.journal import DjangoJournal
from journal_store.journal_rows import Readings, Unreadable, hex_id
from runtime.events import DeadLetterDiscarded, DeadLettered, DeadLetterRetried, EventFormatError
from runtime.journal import Recorded

KEPT = 4096  # streams whose fold a process keeps; each holds its open letters and spoilt rows
# Positions a statement of the re-check (`still`) asks for: PostgreSQL refuses a statement of
# more than 65,535 parameters, and a run may have more open letters and spoilt rows than that.
CHUNK = 500


@dataclass
class Fold:
    version: int = 0  # the last version folded
    ident: str = ""  # its row's event id: the same stream, not one of the same name since
    open: dict[str, Recorded] = field(default_factory=dict)  # letter id -> its DeadLettered
    # The unreadable rows' positions, and the newest one's error: the answer says that one
    # alone, and the re-check needs only where the others are. An error as raised holds the
    # raw rows (its traceback's frames: from_row's row, readings' every row read; the parser's
    # error it was raised from, with its input): each kept, the fold of a run with spoilt rows
    # held as much as the read that found them, for as long as the process kept the fold.
    unread: set[int] = field(default_factory=set)
    newest: tuple[int, EventFormatError] | None = None

    def take(self, read: Readings) -> None:
        """Fold these rows (all after `version`, in version order) in."""
        rows: list[tuple[int, int, Recorded | Unreadable]]
        rows = [(r.position, r.version, r) for r in read.records]
        rows += [(u.position, int(u.row[3]), u) for u in read.unreadable]
        for position, version, row in sorted(rows, key=lambda found: found[1]):
            self.version, self.ident = version, ident(row)
            if isinstance(row, Recorded):
                e = row.event
                if isinstance(e, DeadLettered):
                    self.open[e.letter_id] = row
                elif isinstance(e, DeadLetterRetried | DeadLetterDiscarded):
                    self.open.pop(e.letter_id, None)
            else:
                self.unread.add(position)
                if self.newest is None or position > self.newest[0]:
                    # Its message and row say all a letter needs; the rest held the raw row.
                    error = row.error.with_traceback(None)
                    error.__context__ = None
                    self.newest = position, error

    def answer(self) -> tuple[DeadLettered | None, EventFormatError | None]:
        """As Control.parked_on says."""
        at, unread = self.newest if self.newest is not None else (0, None)
        letters = list(self.open.values())
        if unread is not None and letters and letters[-1].position > at:
            unread = None  # parked since: a person decides the letter naming it
        letter = letters[0].event if letters else None
        return (letter if isinstance(letter, DeadLettered) else None), unread


_folds: OrderedDict[tuple[str, str, str], Fold] = OrderedDict()
_lock = threading.Lock()


def parked_on(
    journal: DjangoJournal, stream: str
) -> tuple[DeadLettered | None, EventFormatError | None]:
    """The open letter and the unreadable row that park the run of control stream `stream`
    (Control.parked_on): one or two statements, however long the stream (and one more for
    each CHUNK of open letters and unreadable rows past the first)."""
    key = (journal.using, str(journal.connection.settings_dict.get("NAME")), stream)
    with _lock:
        kept = _folds.pop(key, None)
    fold = looked_again(journal, stream, kept) if kept is not None else None
    if fold is None:
        fold = Fold()
        fold.take(journal.readings("WHERE stream = %s ORDER BY version", [stream]))
    with _lock:
        _folds[key] = fold
        while len(_folds) > KEPT:
            _folds.popitem(last=False)
    return fold.answer()


def looked_again(journal: DjangoJournal, stream: str, kept: Fold) -> Fold | None:
    """`kept` brought up to the stream's end, or None when it has to be folded anew."""
    standing = [r.position for r in kept.open.values()] + list(kept.unread)
    read = journal.readings(
        "WHERE stream = %s AND version >= %s ORDER BY version", [stream, kept.version]
    )
    if kept.version:
        first = [ident(r) for r in read.records if r.version == kept.version]
        first += [ident(u) for u in read.unreadable if int(u.row[3]) == kept.version]
        if first != [kept.ident]:
            return None  # not the stream folded: emptied, or another of the same name since
    if standing and not still(journal, kept, standing):
        return None
    fresh = Readings(
        [r for r in read.records if r.version > kept.version],
        [u for u in read.unreadable if int(u.row[3]) > kept.version],
    )
    fold = Fold(kept.version, kept.ident, dict(kept.open), set(kept.unread), kept.newest)
    fold.take(fresh)
    return fold


def ident(row: Recorded | Unreadable) -> str:
    return row.event.id if isinstance(row, Recorded) else hex_id(row.row[1])


def still(journal: DjangoJournal, kept: Fold, positions: list[int]) -> bool:
    """Whether the rows the answer stands on read as they did when folded."""
    letters: dict[int, Any] = {}
    spoilt: set[int] = set()
    ordered = sorted(positions)
    for start in range(0, len(ordered), CHUNK):
        chunk = ordered[start : start + CHUNK]
        marks = ", ".join(["%s"] * len(chunk))
        read = journal.readings(f"WHERE position IN ({marks})", chunk)
        letters.update((r.position, r.event) for r in read.records)
        spoilt.update(u.position for u in read.unreadable)
    for letter_id, r in kept.open.items():
        now = letters.get(r.position)
        if not isinstance(now, DeadLettered) or now.letter_id != letter_id:
            return False
    return spoilt == set(kept.unread)
