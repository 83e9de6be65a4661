"""MCP server `orders`: look up one order, or list a customer's orders, from built-in data.

Run with `python -m runtime.mcp.servers.orders`; it speaks MCP over stdin/stdout.
An unknown order is an answer (`found: false`), not an error: the caller asked a fair question,
and an error would count against the server's health.
"""

from __future__ import annotations

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
    instructions="Read-only access to customer orders.",
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


if __name__ == "__main__":
    server.run("stdio")
