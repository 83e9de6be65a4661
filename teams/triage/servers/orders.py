"""MCP server `orders`: look up one order, or list a customer's orders, from built-in data;
and the two operations a refund takes (a return label, a store credit), each with its undo.

Run with `python -m teams.triage.servers.orders [--book PATH]`; it speaks MCP over stdin/stdout.
An unknown order is an answer (`found: false`), not an error: the caller asked a fair question,
and an error would count against the server's health.

The operations keep a book (SQLite, at `--book`; default: one in the temporary directory) and
deduplicate on the caller's idempotency key, as a payment provider does: the same key twice is
the same operation, done once, answered twice alike.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
from typing import Any

from mcp.server.mcpserver import MCPServer

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


def once(kind: str, key: str, ref: str, answer: dict[str, Any]) -> dict[str, Any]:
    """Do an operation under `key` once: a repeated key gets the first answer back, exactly,
    as an idempotent API answers a retry. Nothing is added to say it was repeated: a caller
    that asks again, not knowing whether its first call went through (it died before it
    recorded the answer), must get what the first call would have given it, or what it
    records then differs from what an uninterrupted caller recorded."""
    if not key.strip():
        raise ValueError("an idempotency key is required")
    db = book()
    try:
        db.execute("BEGIN IMMEDIATE")
        row = db.execute("SELECT kind, answer FROM operation WHERE key = ?", (key,)).fetchone()
        if row is not None:
            db.execute("COMMIT")
            if row[0] != kind:
                raise ValueError(f"key {key} was used for a {row[0]}, not a {kind}")
            first: dict[str, Any] = json.loads(row[1])
            return first
        db.execute(
            "INSERT INTO operation VALUES (?, ?, ?, ?, ?)",
            (key, kind, ref, json.dumps(answer), time.time()),
        )
        db.execute("COMMIT")
        return answer
    finally:
        db.close()


def known(order_id: str) -> dict[str, Any]:
    wanted = normalise(order_id)
    for order in ORDERS:
        if order["order_id"] == wanted:
            return order
    raise ValueError(f"no order with id {wanted}")


@server.tool()
def create_return_label(order_id: str, key: str) -> dict[str, Any]:
    """Create a prepaid return label for an order (idempotent on `key`)."""
    order = known(order_id)
    label = f"RL-{order['order_id']}-{key[-6:]}"
    return once("label", key, label, {"label_id": label, "order_id": order["order_id"]})


@server.tool()
def void_return_label(label_id: str, key: str) -> dict[str, Any]:
    """Void a return label (idempotent on `key`)."""
    return once("void", key, label_id, {"voided": label_id})


@server.tool()
def issue_credit(order_id: str, amount_cents: int, key: str) -> dict[str, Any]:
    """Issue a store credit on an order, at most its total (idempotent on `key`)."""
    order = known(order_id)
    if not 0 < amount_cents <= order["total_cents"]:
        raise ValueError(f"a credit must be between 1 and {order['total_cents']} cents")
    credit = f"CR-{order['order_id']}-{key[-6:]}"
    answer = {"credit_id": credit, "order_id": order["order_id"], "amount_cents": amount_cents}
    return once("credit", key, credit, answer)


@server.tool()
def reverse_credit(credit_id: str, key: str) -> dict[str, Any]:
    """Reverse a store credit (idempotent on `key`)."""
    return once("reversal", key, credit_id, {"reversed": credit_id})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m teams.triage.servers.orders")
    parser.add_argument("--book", default=BOOK, help="the SQLite file of credits and labels")
    BOOK = parser.parse_args().book
    server.run("stdio")
