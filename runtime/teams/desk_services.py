"""The support desk's world: an orders service and a payment provider.

Both are protocols so the same team flies from the command line (orders as subject streams in
the run's own journal, refunds in a small SQLite file standing in for the provider) and on the
workers (orders in the project's database, `desk.services`). What the team relies on:

    orders    `set_status` is a compare-and-swap on the version the caller read: it raises
              OrderMoved, carrying the order as it is now, instead of overwriting a change the
              caller never saw.
    payments  `refund` deduplicates on the idempotency key it is given, as payment APIs do: the
              same key twice is one refund and the same receipt. It may be slow.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from runtime import errors
from runtime.coordination.effects import ProviderStatus
from runtime.coordination.facts import Facts
from runtime.events import EffectStarted, ErrorInfo, FactChanged
from runtime.journal import Journal, WrongExpectedVersion
from runtime.tools import ToolFailure

OrderStatus = Literal["paid", "shipped", "delivered", "cancelled", "refunded"]
STATUSES: tuple[str, ...] = get_args(OrderStatus)


@dataclass(frozen=True)
class Order:
    order_id: str
    status: str
    amount_cents: int
    version: int
    updated_by: str = ""

    def public(self) -> dict[str, Any]:
        return {
            "order_id": self.order_id,
            "status": self.status,
            "amount_cents": self.amount_cents,
            "version": self.version,
            "updated_by": self.updated_by,
        }


@errors.replayable
class OrderMissing(ToolFailure):
    def __init__(self, order_id: str) -> None:
        super().__init__(f"there is no order {order_id!r}")


@errors.replayable
class OrderMoved(ToolFailure):
    """A compare-and-swap lost: the order is no longer at the version the caller decided from."""

    def __init__(self, based_on: int, current: Order, note: str = "") -> None:
        super().__init__(
            f"order {current.order_id} moved: you decided from version {based_on}, it is at "
            f"version {current.version} now (status {current.status!r}, set by "
            f"{current.updated_by or 'nobody'}); nothing was written"
            + (f". {note}" if note else "")
        )
        self.based_on = based_on
        self.current = current


@errors.replayable
class RefundRefused(ToolFailure):
    pass


class Orders(Protocol):
    def open(self, order_id: str, amount_cents: int, status: str, by: str) -> Order:
        """The order, created as given if it does not exist yet (an existing one is kept)."""
        ...

    def get(self, order_id: str) -> Order: ...

    def set_status(
        self, order_id: str, status: str, based_on: int, by: str, run_id: str = ""
    ) -> Order: ...


class Payments(Protocol):
    def refund(self, key: str, order_id: str, amount_cents: int) -> dict[str, Any]: ...

    def refunds(self, order_id: str) -> list[dict[str, Any]]: ...

    def status(self, key: str) -> ProviderStatus: ...


@dataclass
class Desk:
    """What one flight works with. `outcomes` is where effect outcomes are recorded: not fenced,
    because what the provider did is a fact whoever drives the run now. `release` gives back
    per-thread resources (database connections) when a tool's thread ends."""

    orders: Orders
    payments: Payments
    outcomes: Journal
    release: Callable[[], None] = field(default=lambda: None)


def subject(order_id: str) -> str:
    return f"order:{order_id}"


def opened(order_id: str, amount_cents: int, status: str, by: str) -> FactChanged:
    """An order's first fact, at version 1 of its subject stream: what it costs, where it is."""
    return FactChanged(
        subject=subject(order_id),
        predicate="opened",
        value={"amount_cents": amount_cents, "status": status},
        based_on=0,
        by=by,
    )


# --- on the command line: orders as facts in the journal ---------------------------------------


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
        return Order(
            order_id, str(values["status"]), int(values["amount_cents"]), records[-1].version, by
        )

    def set_status(
        self, order_id: str, status: str, based_on: int, by: str, run_id: str = ""
    ) -> Order:
        self.get(order_id)  # a missing order is "missing", not "moved"
        try:
            self.facts.write(subject(order_id), "status", status, based_on, by, run_id=run_id)
        except WrongExpectedVersion:
            raise OrderMoved(based_on, self.get(order_id)) from None
        return Order(order_id, status, self.get(order_id).amount_cents, based_on + 1, by)


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


def receipt(key: str, order_id: str, amount_cents: int, stored: tuple[str, int]) -> dict[str, Any]:
    """The provider's answer; a key already used for another refund is refused, as a payment
    API refuses an Idempotency-Key reused with different parameters."""
    if stored != (order_id, amount_cents):
        raise RefundRefused(
            f"idempotency key {key} was used for a refund of {stored[1]} cents on order "
            f"{stored[0]}, not {amount_cents} cents on order {order_id}"
        )
    return {
        "refund_id": "rf-" + key.removeprefix("fx-")[:16],
        "order_id": order_id,
        "amount_cents": amount_cents,
    }


def refund_status(payments: Payments, started: EffectStarted) -> ProviderStatus:
    """The effect ledger's status check for refunds: what the provider knows of the key."""
    if started.effect_type != "refund":
        return ProviderStatus(
            "unknown", error=ErrorInfo(type="UnknownEffect", message=started.effect_type)
        )
    return payments.status(started.key)


def local_desk(journal: Journal, root: Path, latency: float) -> Desk:
    """The command line's desk: orders in the journal, refunds in `<root>/payments.sqlite3`."""
    return Desk(JournalOrders(journal), FilePayments(root / "payments.sqlite3", latency), journal)
