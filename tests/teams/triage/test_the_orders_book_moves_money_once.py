"""The orders server's book is the money's last word: whatever its callers send, an order is
never credited more than it was paid (two runs on one order, a fork that runs the refund again,
a dead letter retried under a new key each send a key of their own), an order refunded already
takes no credit, and a credit is reversed (a label voided) only if it was made, and only once.
Before, every new key was a new operation: two keys credited an order twice its total, and a
reversal of a credit never issued, or reversed already, went through. Over the real server."""

from __future__ import annotations

import pytest

from runtime.mcp.server import McpToolError
from tests.teams.triage.test_a_repeated_key_gets_the_first_answer import kinds

pytestmark = pytest.mark.slow


def credit(surface, key, cents, order_id="B2001"):
    args = {"order_id": order_id, "amount_cents": cents, "key": key}
    return surface.call("orders.issue_credit", args)


def test_two_keys_do_not_credit_an_order_more_than_its_total(orders):
    surface, book = orders
    credit(surface, "fx-run-1", 3900)
    with pytest.raises(McpToolError, match="B2001 was paid 3900 cents, 3900 are credited"):
        credit(surface, "fx-run-2", 3900)
    assert kinds(book) == ["credit"]


def test_credits_add_up_to_the_total_and_no_further(orders):
    surface, book = orders
    credit(surface, "fx-1", 2000)
    credit(surface, "fx-2", 1900)
    with pytest.raises(McpToolError, match="1 more is too much"):
        credit(surface, "fx-3", 1)
    assert kinds(book) == ["credit", "credit"]


def test_a_reversed_credit_frees_its_amount(orders):
    surface, book = orders
    first = credit(surface, "fx-1", 3900)
    surface.call("orders.reverse_credit", {"credit_id": first["credit_id"], "key": "fx-undo-1"})
    credit(surface, "fx-2", 3900)
    assert kinds(book) == ["credit", "reversal", "credit"]


def test_an_order_refunded_already_takes_no_credit(orders):
    surface, book = orders
    with pytest.raises(McpToolError, match="C3002 was refunded on 2025-03-20"):
        credit(surface, "fx-1", 100, order_id="C3002")
    assert kinds(book) == []


def test_the_same_key_still_answers_its_first_answer(orders):
    surface, _ = orders
    first = credit(surface, "fx-1", 3900)
    assert credit(surface, "fx-1", 3900) == first  # a retry is not a second credit


def test_a_credit_never_issued_is_not_reversed(orders):
    surface, book = orders
    with pytest.raises(McpToolError, match="no credit CR-B2001-000001 was issued"):
        surface.call("orders.reverse_credit", {"credit_id": "CR-B2001-000001", "key": "fx-1"})
    assert kinds(book) == []


def test_a_credit_is_reversed_once_whatever_the_key(orders):
    surface, book = orders
    made = credit(surface, "fx-1", 3900)
    undo = {"credit_id": made["credit_id"], "key": "fx-undo-1"}
    first = surface.call("orders.reverse_credit", undo)
    assert surface.call("orders.reverse_credit", undo) == first  # its retry: the same answer
    with pytest.raises(McpToolError, match="reversed already, under key fx-undo-1"):
        surface.call("orders.reverse_credit", {**undo, "key": "fx-undo-2"})
    assert kinds(book) == ["credit", "reversal"]


def test_a_label_is_voided_only_if_made_and_only_once(orders):
    surface, book = orders
    with pytest.raises(McpToolError, match="no return label RL-B2001-000001 was created"):
        surface.call("orders.void_return_label", {"label_id": "RL-B2001-000001", "key": "fx-1"})
    made = surface.call("orders.create_return_label", {"order_id": "B2001", "key": "fx-2"})
    void = {"label_id": made["label_id"], "key": "fx-3"}
    first = surface.call("orders.void_return_label", void)
    assert surface.call("orders.void_return_label", void) == first  # its resend: the same void
    with pytest.raises(McpToolError, match="voided already, under key fx-3"):
        surface.call("orders.void_return_label", {"label_id": made["label_id"], "key": "fx-4"})
    assert kinds(book) == ["label", "void"]


def test_two_credits_whose_keys_end_alike_are_each_reversed(orders):
    # Two callers' keys sharing their last 6 characters: their credits' ids were those 6
    # characters, one id for both, and the second reversal was refused as done already.
    surface, book = orders
    first = credit(surface, "fx-run-a-000001", 1900)
    second = credit(surface, "fx-run-b-000001", 1900)
    assert first["credit_id"] != second["credit_id"]
    for key, made in (("fx-undo-a", first), ("fx-undo-b", second)):
        surface.call("orders.reverse_credit", {"credit_id": made["credit_id"], "key": key})
    assert kinds(book) == ["credit", "credit", "reversal", "reversal"]


def test_two_labels_whose_keys_end_alike_are_each_voided(orders):
    surface, book = orders
    made = [
        surface.call("orders.create_return_label", {"order_id": "B2001", "key": key})
        for key in ("fx-run-a-000001", "fx-run-b-000001")
    ]
    for n, label in enumerate(made):
        surface.call("orders.void_return_label", {"label_id": label["label_id"], "key": f"v{n}"})
    assert kinds(book) == ["label", "label", "void", "void"]
