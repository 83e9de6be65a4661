"""A batch's changes to the runs' read models, gathered from the folds and written as SQL.

The runs projector steps the runtime's folds (runtime.folds) over a batch; each (run, fold)
gets a `Pending`, the fold's `Out`, which nets what the fold says out within the batch (a row
added then changed is one insert; a finding added then dropped is nothing) and keeps its
notes. `Batch.write` then issues a few statements per table for the whole batch: deletes,
inserts, updates. Nothing here reads a run's rows: what a batch writes depends on the batch.

Statements are plain SQL through Django's connection, as the journal's hot paths are (the ORM's
per-field work cost more than the database did); the models own the schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connections
from django.db.models import Model

from journal_store.models import AuditEntry, BillLine, Finding, FoldNote, ThreadMessage
from runtime import folds
from runtime.diagnose import SIGNATURES
from runtime.folds import Key, Row, RowError

Columns = dict[str, Any]


def digest(key: Key) -> str:
    """A fold's key as a fixed-size column: a path an agent chose may be any length."""
    return hashlib.sha256(str(key).encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Table:
    """Where one fold's rows live: the model, the columns that find a row within a run, and
    how a fold's row (or some of its fields) become columns."""

    model: type[Model]
    keys: tuple[str, ...]
    where: Callable[[str, Key], tuple[Any, ...]]  # (fold, key) -> the key columns' values
    columns: Callable[[str, Key, Row], Columns]  # (fold, key, row) -> every column but run_id
    json: frozenset[str] = frozenset()  # columns stored as JSON

    @property
    def name(self) -> str:
        return str(self.model._meta.db_table)


def thread_columns(fold: str, key: Key, row: Row) -> Columns:
    return {
        "position": row["position"],
        "message_id": row["message_id"],
        "task_id": row["task_id"],
        "performative": row["performative"],
        "sender": row["sender"],
        "recipient": row["recipient"],
        "payload": row["payload"],
        "in_reply_to": row["in_reply_to"],
        "delivered": row["delivered"],
    }


AUDIT_OWN = ("position", "what", "who", "task_id", "human")


def audit_columns(fold: str, key: Key, row: Row) -> Columns:
    return {
        "position": row["position"],
        "what": row["what"],
        "who": row.get("who") or "",
        "task_id": row.get("task_id"),
        "human": bool(row.get("human")),
        "detail": {k: v for k, v in row.items() if k not in AUDIT_OWN},
    }


def bill_columns(fold: str, key: Key, row: Row) -> Columns:
    own = ("agent", "task_id", "tokens", "calls", "prompt", "completion")
    return {**{k: row.get(k) for k in own}, "estimated": row.get("estimated", 0)}


FINDING_OWN = ("kind", "summary", "positions")


def finding_columns(fold: str, key: Key, row: Row) -> Columns:
    return {
        "kind": row["kind"],
        "key": digest(key),
        "summary": row["summary"],
        "positions": row["positions"],
        "first_position": row["positions"][0],
        "detail": {k: v for k, v in row.items() if k not in FINDING_OWN},
    }


FINDINGS = Table(
    Finding,
    ("kind", "key"),
    lambda fold, key: (fold, digest(key)),
    finding_columns,
    frozenset(("positions", "detail")),
)
TABLES: dict[str, Table] = {
    "threads": Table(
        ThreadMessage,
        ("position",),
        lambda fold, key: (key,),
        thread_columns,
        frozenset(("payload",)),
    ),
    "audit": Table(
        AuditEntry, ("position",), lambda fold, key: (key,), audit_columns, frozenset(("detail",))
    ),
    "bill": Table(
        BillLine, ("agent", "task_id"), lambda fold, key: tuple(folds.unkey(str(key))), bill_columns
    ),
    **{s.name: FINDINGS for s in SIGNATURES},
}


# --- one (run, fold)'s changes within a batch ---------------------------------------------------

ADD, PUT, CHANGE, DROP = "add", "put", "change", "drop"


class Pending:
    """A fold's Out within a batch: its row changes, netted per key, and its notes. Reading a
    note goes to the database once per key and batch (`load`), then stays in memory."""

    def __init__(
        self, batch: Batch, run_id: str, fold: str, load: Callable[[str, str, str], list[int]]
    ) -> None:
        self.batch = batch
        self.run_id = run_id
        self.fold = fold
        self.load = load
        self.ops: dict[Key, tuple[str, Row]] = {}
        self.noted: list[tuple[str, int]] = []
        self.known: dict[str, list[int]] = {}
        self.parts: dict[str, Pending] = {}

    def add(self, key: Key, row: Row) -> None:
        before = self.ops.get(key)
        if before is None:
            self.ops[key] = (ADD, row)
        elif before[0] == DROP:
            self.ops[key] = (PUT, row)  # it was stored, and dropped earlier in this batch
        else:
            raise RowError(f"{self.fold}: row {key!r} added twice")

    def put(self, key: Key, row: Row) -> None:
        before = self.ops.get(key)
        if before is not None and before[0] == DROP:
            raise RowError(f"{self.fold}: row {key!r} replaced after it was dropped")
        self.ops[key] = (ADD if before is not None and before[0] == ADD else PUT, row)

    def change(self, key: Key, fields: Row) -> None:
        before = self.ops.get(key)
        if before is None:
            self.ops[key] = (CHANGE, dict(fields))
        elif before[0] == DROP:
            raise RowError(f"{self.fold}: row {key!r} changed after it was dropped")
        else:
            self.ops[key] = (before[0], {**before[1], **fields})

    def drop(self, key: Key) -> None:
        before = self.ops.get(key)
        if before is not None and before[0] == DROP:
            raise RowError(f"{self.fold}: row {key!r} dropped twice")
        if before is not None and before[0] == ADD:
            del self.ops[key]  # added and dropped within the batch: nothing to write
        else:
            self.ops[key] = (DROP, {})

    def note(self, key: str, position: int) -> None:
        self.noted.append((key, position))
        if key in self.known:
            self.known[key].append(position)

    def notes(self, key: str) -> list[int]:
        if key not in self.known:
            stored = self.load(self.run_id, self.fold, digest(key))
            self.known[key] = stored + [p for k, p in self.noted if k == key]
        return list(self.known[key])

    def part(self, name: str) -> Pending:
        found = self.parts.get(name)
        if found is None:
            found = self.parts[name] = self.batch.out(self.run_id, name)
        return found


# --- the whole batch ------------------------------------------------------------------------------


@dataclass
class Batch:
    """Every (run, fold)'s pending changes of one batch, and the statements that write them."""

    using: str
    outs: dict[tuple[str, str], Pending] = field(default_factory=dict)

    @property
    def connection(self) -> Any:
        return connections[self.using]

    def out(self, run_id: str, fold: str) -> Pending:
        found = self.outs.get((run_id, fold))
        if found is None:
            found = self.outs[(run_id, fold)] = Pending(self, run_id, fold, self.stored_notes)
        return found

    def stored_notes(self, run_id: str, fold: str, key: str) -> list[int]:
        table = FoldNote._meta.db_table
        with self.connection.cursor() as cursor:
            cursor.execute(
                f"SELECT position FROM {table} WHERE run_id = %s AND fold = %s AND key = %s "
                "ORDER BY position",
                [run_id, fold, key],
            )
            return [position for (position,) in cursor.fetchall()]

    def findings_delta(self) -> dict[str, int]:
        """Per run, how many findings the batch adds less how many it drops."""
        delta: dict[str, int] = {}
        for (run_id, fold), out in self.outs.items():
            if TABLES.get(fold) is not FINDINGS:
                continue
            for op, _ in out.ops.values():
                step = 1 if op == ADD else -1 if op == DROP else 0
                delta[run_id] = delta.get(run_id, 0) + step
        return delta

    def write(self) -> None:
        """Deletes, then inserts, then updates, a few statements per table; then the notes."""
        drops: dict[Table, list[tuple[Any, ...]]] = {}
        inserts: dict[Table, list[Columns]] = {}
        updates: dict[tuple[Table, tuple[str, ...]], list[tuple[Any, ...]]] = {}
        notes: list[tuple[Any, ...]] = []
        for (run_id, fold), out in self.outs.items():
            notes.extend((run_id, fold, digest(k), p) for k, p in out.noted)
            if not out.ops:
                continue
            table = TABLES[fold]
            for key, (op, row) in out.ops.items():
                where = (run_id, *table.where(fold, key))
                if op in (DROP, PUT):
                    drops.setdefault(table, []).append(where)
                if op in (ADD, PUT):
                    columns = table.columns(fold, key, row)
                    inserts.setdefault(table, []).append({"run_id": run_id, **columns})
                elif op == CHANGE:  # the fields a fold changes are named as their columns
                    names = tuple(row)
                    values = tuple(self.value(table, n, row[n]) for n in names)
                    updates.setdefault((table, names), []).append((*values, *where))
        q = self.connection.ops.quote_name
        with self.connection.cursor() as cursor:
            for table, wheres in drops.items():
                cursor.executemany(f"DELETE FROM {q(table.name)} WHERE {self.match(table)}", wheres)
            for table, rows in inserts.items():
                self.insert(cursor, table, rows)
            for (table, names), params in updates.items():
                sets = ", ".join(f"{q(n)} = %s" for n in names)
                cursor.executemany(
                    f"UPDATE {q(table.name)} SET {sets} WHERE {self.match(table)}", params
                )
            if notes:
                cursor.executemany(
                    f"INSERT INTO {q(FoldNote._meta.db_table)} "
                    f"({q('run_id')}, {q('fold')}, {q('key')}, {q('position')}) "
                    "VALUES (%s, %s, %s, %s)",
                    notes,
                )

    def match(self, table: Table) -> str:
        q = self.connection.ops.quote_name
        return " AND ".join(f"{q(c)} = %s" for c in ("run_id", *table.keys))

    def value(self, table: Table, column: str, value: Any) -> Any:
        if column in table.json:
            return self.connection.ops.adapt_json_value(value, None)
        return value

    def insert(self, cursor: Any, table: Table, rows: Sequence[Columns]) -> None:
        names = list(rows[0])
        q = self.connection.ops.quote_name
        placeholders = ", ".join(["%s"] * len(names))
        cursor.executemany(
            f"INSERT INTO {q(table.name)} ({', '.join(map(q, names))}) VALUES ({placeholders})",
            [tuple(self.value(table, n, row[n]) for n in names) for row in rows],
        )


def upsert(
    cursor: Any,
    table: str,
    conflict: Iterable[str],
    rows: Sequence[Sequence[Any]],
    names: Sequence[str],
    update: Iterable[str],
    extra: str = "",
) -> None:
    """INSERT the rows (values in the order of `names`), or on a conflict set the `update`
    columns from them, and `extra` (SQL) beside; SQLite 3.24+ and PostgreSQL speak the same
    ON CONFLICT."""
    q = cursor.db.ops.quote_name
    sets = ", ".join([*(f"{q(n)} = excluded.{q(n)}" for n in update), *([extra] if extra else [])])
    action = f"DO UPDATE SET {sets}" if sets else "DO NOTHING"
    cursor.executemany(
        f"INSERT INTO {q(table)} ({', '.join(map(q, names))}) "
        f"VALUES ({', '.join(['%s'] * len(names))}) "
        f"ON CONFLICT ({', '.join(map(q, conflict))}) {action}",
        rows,
    )
