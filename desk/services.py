"""The support desk's services in the project's database (SQLite or PostgreSQL).

An order's row and its subject stream (`subject-order:<id>`) change together in one transaction:
the row's `version` is the stream's version. The compare-and-swap is the row's
`UPDATE ... WHERE version = <read>`, and the journal's append at that expected version checks it
a second time; whichever refuses, nothing is written.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.db import IntegrityError, connections, transaction
from django.db.models import F

from desk.models import Order as OrderRow
from desk.models import Refund
from runtime.coordination.facts import Facts
from runtime.coordination.reconciler import ProviderStatus
from runtime.events import EffectStarted, FactChanged
from runtime.journal import Guard, Journal, WrongExpectedVersion
from teams.desk.services import (
    Desk,
    Order,
    OrderMissing,
    OrderMoved,
    Payments,
    changed_by,
    opened,
    receipt,
    refund_status,
    subject,
)
from teams.desk.settings import DeskSettings


def as_order(row: OrderRow) -> Order:
    return Order(row.order_id, row.status, row.amount_cents, row.version, row.updated_by)


class TableOrders:
    def __init__(self, journal: Journal, using: str = "default") -> None:
        self.journal = journal
        self.using = using

    def stream(self, order_id: str) -> str:
        return Facts.stream(subject(order_id))

    def open(self, order_id: str, amount_cents: int, status: str, by: str) -> Order:
        try:
            with transaction.atomic(using=self.using):
                _, created = OrderRow.objects.using(self.using).get_or_create(
                    order_id=order_id,
                    defaults={
                        "status": status,
                        "amount_cents": amount_cents,
                        "version": 1,
                        "updated_by": by,
                    },
                )
                if created:
                    first = opened(order_id, amount_cents, status, by)
                    self.journal.append(self.stream(order_id), [first], 0)
        except (IntegrityError, WrongExpectedVersion):
            pass  # opened by somebody else a moment ago: theirs stands
        return self.get(order_id)

    def get(self, order_id: str) -> Order:
        row = OrderRow.objects.using(self.using).filter(order_id=order_id).first()
        if row is None:
            raise OrderMissing(order_id)
        return as_order(row)

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
        changed = FactChanged(
            run_id=run_id,
            subject=subject(order_id),
            predicate="status",
            value=status,
            based_on=based_on,
            by=by,
            call=call,
        )
        rows = OrderRow.objects.using(self.using)
        try:
            with transaction.atomic(using=self.using):
                updated = rows.filter(order_id=order_id, version=based_on).update(
                    status=status, version=F("version") + 1, updated_by=by
                )
                if updated != 1:
                    raise WrongExpectedVersion(self.stream(order_id), based_on, -1)
                # The guards are checked in this append: refused, the row's update goes too.
                self.journal.append(self.stream(order_id), [changed], based_on, guards=guards)
                # The row as this change left it, read while the change holds it: read after,
                # it may hold a change made since, which the same call run again (made_by)
                # could not answer.
                row = rows.get(order_id=order_id)
        except WrongExpectedVersion as exc:
            if exc.stream != self.stream(order_id):
                raise  # a guard's stream moved (the intent), not the order
            raise OrderMoved(based_on, self.get(order_id)) from None
        return as_order(row)

    def made_by(self, order_id: str, based_on: int, call: str) -> Order | None:
        return changed_by(self.journal, self.get(order_id), based_on, call)


class TableRefunds:
    """The payment provider's side: slow, and one refund per idempotency key."""

    def __init__(self, using: str = "default", latency: float = 0.0) -> None:
        self.using = using
        self.latency = latency

    def refund(self, key: str, order_id: str, amount_cents: int) -> dict[str, Any]:
        time.sleep(self.latency)
        try:
            with transaction.atomic(using=self.using):
                row, _ = Refund.objects.using(self.using).get_or_create(
                    key=key, defaults={"order_id": order_id, "amount_cents": amount_cents}
                )
        except IntegrityError:  # a concurrent request with the same key got there first
            row = Refund.objects.using(self.using).get(key=key)
        return receipt(key, order_id, amount_cents, (row.order_id, row.amount_cents))

    def refunds(self, order_id: str) -> list[dict[str, Any]]:
        rows = Refund.objects.using(self.using).filter(order_id=order_id).order_by("created_at")
        return [{"key": r.key, "amount_cents": r.amount_cents} for r in rows]

    def status(self, key: str) -> ProviderStatus:
        row = Refund.objects.using(self.using).filter(key=key).first()
        if row is None:
            return ProviderStatus("unknown")
        result = receipt(key, row.order_id, row.amount_cents, (row.order_id, row.amount_cents))
        return ProviderStatus("succeeded", result)


def release() -> None:
    """Close the database connections of a tool's own thread (threads other than a worker's
    main one would otherwise leave theirs open)."""
    if threading.current_thread() is not threading.main_thread():
        connections.close_all()


def database_desk(using: str = "default") -> Callable[[Journal, Path, DeskSettings], Desk]:
    """The factory the workers fly the support desk with (`teams.desk.services.DeskServices`)."""
    from journal_store.journal import DjangoJournal

    def make(journal: Journal, root: Path, settings: DeskSettings) -> Desk:
        return Desk(
            TableOrders(journal, using),
            TableRefunds(using, settings.provider_latency),
            DjangoJournal(using),
            release,
        )

    return make


def effect_status(started: EffectStarted, using: str = "default") -> ProviderStatus:
    """What became of an effect stuck in flight, for the effect reconciler."""
    payments: Payments = TableRefunds(using)
    return refund_status(payments, started)
