"""How a reviewer's decision on a parked order conflict is committed: the desk's commit target.

The support desk parks a conflict when two agents claim different statuses for one order (its
`commit` is {"service": "orders", "key": <order id>, "version": <the order's version then>}).
The review service knows no orders: DeskConfig.ready() registers `commit_status` under
"orders", and a decision writes through it by compare-and-swap, in the decision's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desk.models import Order as OrderRow
from desk.services import TableOrders, as_order
from journal_store.journal import DjangoJournal
from runtime.events import ConflictParked
from services.conflict_errors import ConflictError, ConflictMoved
from services.review import Current
from teams.desk.services import STATUSES, OrderMoved

KIND = "orders"


def commit_status(
    parked: ConflictParked, value: Any, by: str, journal: DjangoJournal
) -> dict[str, Any]:
    """Set the order's status to the chosen value, from the version the conflict was parked at."""
    target = parked.commit or {}
    version = int(target.get("version", 0))
    if parked.predicate != "status" or value not in STATUSES:
        raise ConflictError(f"{value!r} is not an order status ({', '.join(STATUSES)})")
    try:
        order = TableOrders(journal, journal.using).set_status(
            str(target["key"]), str(value), version, f"reviewer:{by}", parked.run_id
        )
    except OrderMoved as exc:
        raise ConflictMoved(
            f"{exc}. The conflict was parked at version {version}: look at the order again"
        ) from None
    return {"service": KIND, "key": target["key"], "version": order.version}


def current_status(commit: dict[str, Any], subject: str, predicate: str) -> Current:
    """The order's status and version now (version 0: no such order here)."""
    return current_statuses([(commit, subject, predicate)])[0]


def current_statuses(asked: Sequence[tuple[dict[str, Any], str, str]]) -> list[Current]:
    """`current_status` of each (commit, subject, predicate), the orders read in one query: a
    page of conflict cards asks for each card's order."""
    keys = [str(commit.get("key")) for commit, _, _ in asked]
    rows = OrderRow.objects.in_bulk(set(keys))  # by the primary key, the order's id
    orders = {key: as_order(row) for key, row in rows.items()}
    return [
        Current(orders[key].status, orders[key].version, orders[key].updated_by)
        if key in orders
        else Current(None, 0, known=False)
        for key in keys
    ]
