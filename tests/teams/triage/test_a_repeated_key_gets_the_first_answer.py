"""The orders server's operations under a key it already holds answer exactly what they
answered the first time, as an idempotent API does, and do nothing more: they answered with
`"repeated": true` added, so a caller that sent the key again, not knowing whether its first
call went through, journalled another answer than an uninterrupted caller. Over the real
server, on its book."""

from __future__ import annotations

import sqlite3

import pytest

from runtime.mcp.server import McpToolError
from teams.triage.servers.orders import made_id

pytestmark = pytest.mark.slow


def kinds(book):
    """The book's operations, oldest first (tests/teams/triage/*orders_book* use it too)."""
    if not book.exists():  # the server opens its book at its first operation
        return []
    rows = sqlite3.connect(book).execute("SELECT kind FROM operation ORDER BY at")
    return [kind for (kind,) in rows]


# An undo is of something made: the label or credit it undoes is made first, under its own key.
MADE = {
    "void": ("orders.create_return_label", {"order_id": "B2001", "key": "fx-000001"}, "label"),
    "reversal": (
        "orders.issue_credit",
        {"order_id": "B2001", "amount_cents": 3900, "key": "fx-000001"},
        "credit",
    ),
}


@pytest.mark.parametrize(
    ("tool", "args", "kind"),
    [
        ("orders.create_return_label", {"order_id": "B2001"}, "label"),
        ("orders.void_return_label", {"label_id": made_id("RL", "B2001", "fx-000001")}, "void"),
        ("orders.issue_credit", {"order_id": "B2001", "amount_cents": 3900}, "credit"),
        ("orders.reverse_credit", {"credit_id": made_id("CR", "B2001", "fx-000001")}, "reversal"),
    ],
)
def test_an_operation_asked_again_under_its_key_answers_as_the_first_time(orders, tool, args, kind):
    surface, book = orders
    made = []
    if kind in MADE:
        tool_made, args_made, made = MADE[kind][0], MADE[kind][1], [MADE[kind][2]]
        surface.call(tool_made, args_made)
    first = surface.call(tool, {**args, "key": "fx-000002"})
    again = surface.call(tool, {**args, "key": "fx-000002"})
    assert again == first  # nothing added: the same answer, as the journal kept it
    assert kinds(book) == [*made, kind]  # and done once


def test_a_key_used_for_another_operation_is_still_refused(orders):
    surface, book = orders
    surface.call("orders.create_return_label", {"order_id": "B2001", "key": "fx-000002"})
    with pytest.raises(McpToolError, match="returned an error"):
        surface.call(
            "orders.issue_credit", {"order_id": "B2001", "amount_cents": 3900, "key": "fx-000002"}
        )
    assert kinds(book) == ["label"]
