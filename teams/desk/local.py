"""The command line's desk: orders as facts in the run's journal, and a stand-in payment
provider (refunds in a SQLite file, slow on purpose)."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runtime.coordination.facts import Facts
from runtime.coordination.reconciler import ProviderStatus
from runtime.events import FactChanged
from runtime.flight import FlightError
from runtime.journal import Guard, Journal, WrongExpectedVersion
from teams.desk.services import (
    Desk,
    Order,
    OrderMissing,
    OrderMoved,
    changed_by,
    opened,
    receipt,
    subject,
)


class JournalOrders:
    """Orders as subject streams (`subject-order:<id>`): the stream's version is the order's."""

    def __init__(self, journal: Journal) -> None:
        self.facts = Facts(journal)

    def open(self, order_id: str, amount_cents: int, status: str, by: str) -> Order:
        # If it exists, somebody opened it first and theirs stands.
        with contextlib.suppress(WrongExpectedVersion):
            self.facts.journal.append(
                self.facts.stream(subject(order_id)),
                [opened(order_id, amount_cents, status, by)],
                0,
            )
        return self.get(order_id)

    def get(self, order_id: str) -> Order:
        records = self.facts.journal.read(self.facts.stream(subject(order_id)))
        if not records:
            raise OrderMissing(order_id)
        values: dict[str, Any] = {}
        by = ""
        for rec in records:
            if isinstance(rec.event, FactChanged):
                if rec.event.predicate == "opened":
                    values.update(rec.event.value)
                else:
                    values[rec.event.predicate] = rec.event.value
                by = rec.event.by
        if "status" not in values or "amount_cents" not in values:
            # A run exported from a store carries its own writes to the order, not the order's
            # opening (no run's): read as an order it was a KeyError and a traceback.
            raise FlightError(
                f"order {order_id}: this journal holds changes to the order but not its opening "
                "(a run exported from a store carries only its own writes to the order's facts), "
                "so its desk cannot go on here; views, diagnose, diff, otlp and replay read it"
            )
        return Order(
            order_id, str(values["status"]), int(values["amount_cents"]), records[-1].version, by
        )

    def set_status(
        self,
        order_id: str,
        status: str,
        based_on: int,
        by: str,
        run_id: str = "",
        guards: Sequence[Guard] = (),
        call: str | None = None,
    ) -> Order:
        self.get(order_id)  # a missing order is "missing", not "moved"
        about = subject(order_id)
        try:
            self.facts.write(
                about, "status", status, based_on, by, run_id=run_id, guards=guards, call=call
            )
        except WrongExpectedVersion as exc:
            if exc.stream != self.facts.stream(about):
                raise  # a guard's stream moved, not the order
            raise OrderMoved(based_on, self.get(order_id)) from None
        return Order(order_id, status, self.get(order_id).amount_cents, based_on + 1, by)

    def made_by(self, order_id: str, based_on: int, call: str) -> Order | None:
        return changed_by(self.facts.journal, self.get(order_id), based_on, call)


# --- a stand-in payment provider ----------------------------------------------------------------


class FilePayments:
    """Refunds in a SQLite file: slow on purpose, and deduplicating on the idempotency key."""

    def __init__(self, path: Path, latency: float = 0.0) -> None:
        self.path = path
        self.latency = latency

    def connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30)
        db.execute(
            "CREATE TABLE IF NOT EXISTS refund (key TEXT PRIMARY KEY, order_id TEXT NOT NULL, "
            "amount_cents INTEGER NOT NULL, created REAL NOT NULL)"
        )
        return db

    def refund(self, key: str, order_id: str, amount_cents: int) -> dict[str, Any]:
        time.sleep(self.latency)  # the provider thinks; the caller may give up waiting
        with self.connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO refund VALUES (?, ?, ?, ?)",
                (key, order_id, amount_cents, time.time()),
            )
            row = db.execute(
                "SELECT order_id, amount_cents FROM refund WHERE key = ?", (key,)
            ).fetchone()
        return receipt(key, order_id, amount_cents, (row[0], row[1]))

    def refunds(self, order_id: str) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        with self.connect() as db:
            rows = db.execute(
                "SELECT key, amount_cents FROM refund WHERE order_id = ? ORDER BY created",
                (order_id,),
            ).fetchall()
        return [{"key": k, "amount_cents": a} for k, a in rows]

    def status(self, key: str) -> ProviderStatus:
        if not self.path.exists():
            return ProviderStatus("unknown")
        with self.connect() as db:
            row = db.execute(
                "SELECT order_id, amount_cents FROM refund WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return ProviderStatus("unknown")
        return ProviderStatus("succeeded", receipt(key, row[0], row[1], (row[0], row[1])))


def local_desk(journal: Journal, root: Path, latency: float) -> Desk:
    """The command line's desk: orders in the journal, refunds in `<root>/payments.sqlite3`."""
    return Desk(JournalOrders(journal), FilePayments(root / "payments.sqlite3", latency), journal)
