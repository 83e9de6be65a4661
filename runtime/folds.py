"""Folds: views as reducers that keep only what later events need, and say what each event
changes.

A fold starts from an empty state and takes one event at a time. `step(state, rec, out)` does
two things: it updates the state — small JSON holding only what later events still need (the
messages not yet delivered, the tool calls not yet returned), never the view itself — and it
tells `out` what the event changes in the rows the fold owns (a thread's new message, a
message's delivery, an audit entry, a bill line's new totals, a finding found, grown or gone).
`result(state, rows)` is the view, read from the state and the rows.

Two sinks take the changes, and both run the same step code:

- `Rows` applies them in memory. The pure functions in `views` and `diagnose` run a fold over
  a whole list with one (`run`), so the CLI, replay and the API's pure views see exactly what
  the step code says.
- The runs projector (journal_store/projection.py) turns them into SQL: it stores each fold's
  state in a row of its own per run, loads only the folds whose `kinds` a batch holds, and
  writes only what the batch changed. A batch therefore costs what it holds, not what the run
  has grown to, and a rebuild from the first event gives exactly the incremental rows.

Positions a fold must cite later but that no state should carry (every REJECT of a task until
the round cap escalates it, every write to a file until a second agent writes it too) are
notes: `out.note(key, position)` appends one, `out.notes(key)` reads them back, and the
projector keeps them as rows it reads only when a fold asks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from json.encoder import encode_basestring_ascii as _quote
from typing import Any, ClassVar, Protocol, cast

from runtime.journal import Recorded

State = dict[str, Any]
Row = dict[str, Any]
Key = int | str  # a row's identity among its fold's rows: a position, a path, a json key


class RowError(Exception):
    """A fold changed its rows inconsistently: added a row it has, or changed or dropped one it
    has not. Always a bug in the fold, never in the journal."""


class Out(Protocol):
    """Where a fold's step says what an event changes in its rows."""

    def add(self, key: Key, row: Row) -> None:
        """A new row."""

    def put(self, key: Key, row: Row) -> None:
        """A row replaced as a whole."""

    def change(self, key: Key, fields: Row) -> None:
        """Some fields of a row."""

    def drop(self, key: Key) -> None:
        """A row gone."""

    def note(self, key: str, position: int) -> None:
        """Remember a position to cite later."""

    def notes(self, key: str) -> list[int]:
        """The positions noted under `key`, oldest first."""

    def part(self, name: str) -> Out:
        """The sink of a part of this fold, which keeps rows of its own (a diagnosis's
        signatures)."""


class Rows:
    """Changes applied in memory: a fold's rows in the order they were added, its notes, and
    its parts'. A fold that changes a row it does not have is refused (RowError)."""

    def __init__(self) -> None:
        self.rows: dict[Key, Row] = {}
        self._notes: dict[str, list[int]] = {}
        self._parts: dict[str, Rows] = {}

    def add(self, key: Key, row: Row) -> None:
        if key in self.rows:
            raise RowError(f"row {key!r} added twice")
        self.rows[key] = dict(row)

    def put(self, key: Key, row: Row) -> None:
        if key not in self.rows:
            raise RowError(f"row {key!r} replaced before it was added")
        self.rows[key] = dict(row)

    def change(self, key: Key, fields: Row) -> None:
        row = self.rows.get(key)
        if row is None:
            raise RowError(f"row {key!r} changed before it was added")
        row.update(fields)

    def drop(self, key: Key) -> None:
        if self.rows.pop(key, None) is None:
            raise RowError(f"row {key!r} dropped before it was added")

    def note(self, key: str, position: int) -> None:
        self._notes.setdefault(key, []).append(position)

    def notes(self, key: str) -> list[int]:
        return list(self._notes.get(key, ()))

    def part(self, name: str) -> Rows:
        found = self._parts.get(name)
        if found is None:
            found = self._parts[name] = Rows()
        return found


class Fold:
    """A view as a reducer. Subclasses keep every piece of state JSON-serializable and small:
    what the view shows goes to `out` as rows, not into the state."""

    name: ClassVar[str] = "fold"
    kinds: ClassVar[frozenset[str] | None] = None  # the kinds `step` looks at; None: all

    def start(self) -> State:
        return {}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        raise NotImplementedError

    def result(self, state: State, rows: Rows) -> Any:
        raise NotImplementedError


def run(fold: Fold, records: Iterable[Recorded]) -> Any:
    """The fold's view of these records: stepped over all of them, its rows kept in memory."""
    state = fold.start()
    rows = Rows()
    feed(fold, state, records, rows)
    return fold.result(state, rows)


def feed(fold: Fold, state: State, records: Iterable[Recorded], out: Out) -> None:
    """Step the fold through the records it looks at."""
    kinds = fold.kinds
    for rec in records:
        if kinds is None or rec.event.kind in kinds:
            fold.step(state, rec, out)


_encode = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps builds one per call


def key(*parts: object) -> str:
    """A JSON object key made of several parts (JSON keys must be strings): the text
    json.dumps(parts, separators=(",", ":")) gives, built directly when every part is a string
    (names and ids, nearly every key a fold makes, for every event it steps)."""
    for part in parts:
        if type(part) is not str:
            # a list of arguments, a number, None: the encoder (raising TypeError from _quote
            # and catching it cost more than the encoding)
            return _encode(parts)
    return "[" + ",".join(map(_quote, cast(tuple[str, ...], parts))) + "]"


def unkey(text: str) -> list[Any]:
    parts: list[Any] = json.loads(text)
    return parts
