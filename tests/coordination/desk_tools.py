"""A desk agent's tools on the project's database, built by hand for one order: what a test
needs to call `issue_refund` or `set_order_status` at the moment it chooses, from any thread."""

from __future__ import annotations

import types

from desk.services import TableOrders, TableRefunds, release
from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Intents
from runtime.events import OrderPrepared, ToolReturned
from teams.desk.services import Desk, Payments
from teams.desk.settings import DeskSettings
from teams.desk.tools import SUPPORT_AGENT, DeskTools


def open_order(alias: str, order_id: str, amount_cents: int = 4999) -> tuple[str, int]:
    """The order, opened, and its ticket's intent, declared: (intent id, version)."""
    journal = DjangoJournal(alias)
    TableOrders(journal, alias).open(order_id, amount_cents, "delivered", "setup")
    intents = Intents(journal)
    try:
        intent = intents.current(f"ticket-{order_id}")
    except KeyError:
        intent = intents.declare(f"ticket-{order_id}", "refund the broken parcel", "customer")
    return intent.intent_id, intent.version


def desk_tools(
    alias: str,
    order_id: str,
    run_id: str | None = None,
    payments: Payments | None = None,
    amount_cents: int = 4999,
) -> tuple[DjangoJournal, str, DeskTools]:
    """The support agent's tools in run `run_id` (one of its own by default) on task T2, after
    it read the order (the refund's evidence)."""
    intent_id, version = open_order(alias, order_id, amount_cents)
    journal = DjangoJournal(alias)
    run_id = run_id or "r-" + order_id
    read = ToolReturned(
        run_id=run_id, agent=SUPPORT_AGENT, task_id="T2", tool="read_order", result={}
    )
    session = types.SimpleNamespace(journal=journal, run_id=run_id, emitted=[read])
    desk = Desk(
        TableOrders(journal, alias),
        payments or TableRefunds(alias),
        DjangoJournal(alias),
        release,
    )
    prepared = OrderPrepared(
        run_id=run_id,
        order_id=order_id,
        status="delivered",
        amount_cents=amount_cents,
        order_version=1,
        intent_id=intent_id,
        intent_version=version,
    )
    tools = DeskTools(session, desk, DeskSettings(), prepared, SUPPORT_AGENT, "T2")
    return journal, run_id, tools
