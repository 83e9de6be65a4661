"""MCP server `orders`: look up one order, or list a customer's orders, from built-in data;
and the two operations a refund takes (a return label, a store credit), each with its undo.

Run with `python -P teams/triage/servers/orders.py [--book PATH]`; it speaks MCP over stdin/stdout.
An unknown order is an answer (`found: false`), not an error: the caller asked a fair question,
and an error would count against the server's health.

The operations keep a book (SQLite, at `--book`; default: one in the temporary directory) and
deduplicate on the caller's idempotency key, as a payment provider does: the same key twice is
the same operation, done once, answered twice alike.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

ORDERS: tuple[dict[str, Any], ...] = (
    {
        "order_id": "A1001",
        "customer": "ada@example.com",
        "status": "delivered",
        "placed_on": "2025-05-02",
        "delivered_on": "2025-05-06",
        "items": [{"sku": "KET-01", "name": "Electric kettle", "qty": 1, "price_cents": 4999}],
        "total_cents": 4999,
    },
    {
        "order_id": "A1002",
        "customer": "ada@example.com",
        "status": "shipped",
        "placed_on": "2025-05-20",
        "shipped_on": "2025-05-22",
        "carrier": "ParcelNet",
        "items": [
            {"sku": "MUG-04", "name": "Stoneware mug", "qty": 4, "price_cents": 1250},
            {"sku": "TEA-11", "name": "Loose-leaf tea sampler", "qty": 1, "price_cents": 1800},
        ],
        "total_cents": 6800,
    },
    {
        "order_id": "B2001",
        "customer": "grace@example.com",
        "status": "delivered",
        "placed_on": "2025-04-11",
        "delivered_on": "2025-04-18",
        "items": [{"sku": "LMP-02", "name": "Desk lamp", "qty": 1, "price_cents": 3900}],
        "total_cents": 3900,
        "note": "customer reported the lamp arrived with a cracked shade",
    },
    {
        "order_id": "B2002",
        "customer": "grace@example.com",
        "status": "processing",
        "placed_on": "2025-06-01",
        "items": [{"sku": "CHR-07", "name": "Office chair", "qty": 1, "price_cents": 18900}],
        "total_cents": 18900,
    },
    {
        "order_id": "C3001",
        "customer": "linus@example.com",
        "status": "delayed",
        "placed_on": "2025-05-15",
        "shipped_on": "2025-05-17",
        "carrier": "ParcelNet",
        "items": [{"sku": "KBD-09", "name": "Mechanical keyboard", "qty": 1, "price_cents": 11900}],
        "total_cents": 11900,
        "note": "carrier reports the parcel held at the regional depot",
    },
    {
        "order_id": "C3002",
        "customer": "linus@example.com",
        "status": "refunded",
        "placed_on": "2025-03-03",
        "delivered_on": "2025-03-07",
        "refunded_on": "2025-03-20",
        "items": [{"sku": "HDP-03", "name": "Headphones", "qty": 1, "price_cents": 8900}],
        "total_cents": 8900,
    },
)

server = MCPServer(
    "orders",
    instructions="Customer orders: look them up; return labels and store credits for refunds.",
    log_level="WARNING",  # stderr is the client's log file; INFO per call is noise there
)


def normalise(order_id: str) -> str:
    """`#a1001 ` and `A1001` are the same order: people paste ids with a hash and spaces."""
    return order_id.strip().lstrip("#").upper()


def summary(order: dict[str, Any]) -> dict[str, Any]:
    keep = ("order_id", "status", "placed_on", "total_cents")
    return {key: order[key] for key in keep} | {"item_count": len(order["items"])}


@server.tool()
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up one order by id: status, items, amounts (in cents) and dates."""
    wanted = normalise(order_id)
    for order in ORDERS:
        if order["order_id"] == wanted:
            return {"found": True, "order": order}
    return {"found": False, "order_id": wanted, "message": f"no order with id {wanted}"}


@server.tool()
def list_orders(customer: str) -> dict[str, Any]:
    """List a customer's orders (by email address), newest first, as short summaries."""
    wanted = customer.strip().lower()
    mine = [summary(order) for order in ORDERS if order["customer"] == wanted]
    mine.sort(key=lambda order: order["placed_on"], reverse=True)
    return {"customer": wanted, "orders": mine}


BOOK = os.path.join(tempfile.gettempdir(), "minutes-orders-book.sqlite3")


def book() -> sqlite3.Connection:
    db = sqlite3.connect(BOOK, timeout=30, isolation_level=None)
    db.execute(
        "CREATE TABLE IF NOT EXISTS operation (key TEXT PRIMARY KEY, kind TEXT NOT NULL, "
        "ref TEXT NOT NULL, answer TEXT NOT NULL, at REAL NOT NULL)"
    )
    return db


def once(
    kind: str,
    key: str,
    ref: str,
    answer: dict[str, Any],
    allowed: Callable[[sqlite3.Connection], None] | None = None,
) -> dict[str, Any]:
    """Do an operation under `key` once: a repeated key gets the first answer back, exactly,
    as an idempotent API answers a retry. Nothing is added to say it was repeated: a caller
    that asks again, not knowing whether its first call went through (it died before it
    recorded the answer), must get what the first call would have given it, or what it
    records then differs from what an uninterrupted caller recorded.

    `allowed` checks a new key's operation against the book (it raises to refuse), in the
    same transaction as its row is written: two servers on one book cannot both find room
    for a credit. A repeated key is not checked again: its own first operation is in the book."""
    if not key.strip():
        raise ToolError("an idempotency key is required")
    db = book()
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT kind, answer FROM operation WHERE key = ?", (key,)).fetchone()
            if row is not None:
                if row[0] != kind:
                    raise ToolError(f"key {key} was used for a {row[0]}, not a {kind}")
                first: dict[str, Any] = json.loads(row[1])
                return first
            if allowed is not None:
                allowed(db)
            db.execute(
                "INSERT INTO operation VALUES (?, ?, ?, ?, ?)",
                (key, kind, ref, json.dumps(answer), time.time()),
            )
        finally:
            db.execute("COMMIT")  # nothing written when refused: the read alone is committed
        return answer
    finally:
        db.close()


def credited(db: sqlite3.Connection, order_id: str) -> int:
    """What the book holds credited on an order: its credits not reversed."""
    (cents,) = db.execute(
        "SELECT COALESCE(SUM(json_extract(answer, '$.amount_cents')), 0) FROM operation "
        "WHERE kind = 'credit' AND json_extract(answer, '$.order_id') = ? AND ref NOT IN "
        "(SELECT ref FROM operation WHERE kind = 'reversal')",
        (order_id,),
    ).fetchone()
    return int(cents)


def undone_once(kind: str, made: str, what: str, ref: str) -> Callable[[sqlite3.Connection], None]:
    """The check of an undo (`kind`) of `what` `ref`: it was made (an operation of kind `made`
    under that id) and is not undone already under another key. Undone twice, a customer's
    credit would be taken back twice; undoing what was never made is a caller's mistake."""

    def allowed(db: sqlite3.Connection) -> None:
        if (
            db.execute("SELECT 1 FROM operation WHERE kind = ? AND ref = ?", (made, ref)).fetchone()
            is None
        ):
            raise ToolError(f"no {what} {ref} was {'issued' if made == 'credit' else 'created'}")
        done = db.execute(
            "SELECT key FROM operation WHERE kind = ? AND ref = ?", (kind, ref)
        ).fetchone()
        if done is not None:
            past = "reversed" if kind == "reversal" else "voided"
            raise ToolError(f"{what} {ref} was {past} already, under key {done[0]}")

    return allowed


def made_id(prefix: str, order_id: str, key: str) -> str:
    """A label's or credit's id: its order's and 16 hex characters of a hash of its key. The
    key's last 6 characters were too few: two keys alike at their end (keys derived alike, or
    a caller's own) made one id for two credits, and the undo-once rule then refused the
    second's reversal as done already, leaving it impossible to undo."""
    return f"{prefix}-{order_id}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def unused(kind: str, what: str, ref: str) -> Callable[[sqlite3.Connection], None]:
    """The check of a new label or credit (`kind`): its id names no other key's, whose undo
    would then undo both. 64 bits of a hash make this a refusal nobody should ever see."""

    def allowed(db: sqlite3.Connection) -> None:
        taken = db.execute(
            "SELECT key FROM operation WHERE kind = ? AND ref = ?", (kind, ref)
        ).fetchone()
        if taken is not None:
            raise ToolError(f"{what} id {ref} is taken by key {taken[0]}: use another key")

    return allowed


def known(order_id: str) -> dict[str, Any]:
    wanted = normalise(order_id)
    for order in ORDERS:
        if order["order_id"] == wanted:
            return order
    raise ToolError(f"no order with id {wanted}")


@server.tool()
def create_return_label(order_id: str, key: str) -> dict[str, Any]:
    """Create a prepaid return label for an order (idempotent on `key`)."""
    order = known(order_id)
    label = made_id("RL", order["order_id"], key)
    answer = {"label_id": label, "order_id": order["order_id"]}
    return once("label", key, label, answer, unused("label", "return label", label))


@server.tool()
def void_return_label(label_id: str, key: str) -> dict[str, Any]:
    """Void a return label that was created, once (idempotent on `key`)."""
    check = undone_once("void", "label", "return label", label_id)
    return once("void", key, label_id, {"voided": label_id}, check)


@server.tool()
def issue_credit(order_id: str, amount_cents: int, key: str) -> dict[str, Any]:
    """Issue a store credit on an order: its credits not reversed come to at most its total
    (idempotent on `key`)."""
    order = known(order_id)
    wanted, total = order["order_id"], order["total_cents"]
    if not 0 < amount_cents <= total:
        raise ToolError(f"a credit must be between 1 and {total} cents")
    if "refunded_on" in order:
        raise ToolError(f"order {wanted} was refunded on {order['refunded_on']}: no credit")

    credit = made_id("CR", wanted, key)

    def room(db: sqlite3.Connection) -> None:
        unused("credit", "credit", credit)(db)
        # Every caller's key is its own (two runs, a fork, a dead letter retried): what the
        # order can take is the book's to say, across them all.
        already = credited(db, wanted)
        if already + amount_cents > total:
            raise ToolError(
                f"order {wanted} was paid {total} cents, {already} are credited already: "
                f"{amount_cents} more is too much"
            )

    answer = {"credit_id": credit, "order_id": wanted, "amount_cents": amount_cents}
    return once("credit", key, credit, answer, room)


@server.tool()
def reverse_credit(credit_id: str, key: str) -> dict[str, Any]:
    """Reverse a store credit that was issued, once (idempotent on `key`)."""
    check = undone_once("reversal", "credit", "credit", credit_id)
    return once("reversal", key, credit_id, {"reversed": credit_id}, check)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="orders.py")
    parser.add_argument("--book", default=BOOK, help="the SQLite file of credits and labels")
    BOOK = parser.parse_args().book
    server.run("stdio")
    # The session is over: what the process made (the SDK's schemas, some 85,000 objects) is
    # not collected again on the way out, which took ~1 s that its client waited on
    # (servers/__init__.py).
    gc.freeze()
