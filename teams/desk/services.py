"""The support desk's services: an orders service and a payment provider, as protocols.

The same team flies from the command line (`teams.desk.local`: orders as subject streams in the
run's own journal, refunds in a small SQLite file standing in for the provider) and on the
workers (orders in the project's database, the Django app `desk.services`). What the team
relies on:

    orders    `set_status` is a compare-and-swap on the version the caller read: it raises
              OrderMoved, carrying the order as it is now, instead of overwriting a change the
              caller never saw; its guards (the intent the change serves) are checked in the
              same write. A change keeps the tool call that made it, and `made_by` finds it:
              the call run again (a resumed step's) answers as it did, not OrderMoved.
    payments  `refund` deduplicates on the idempotency key it is given, as payment APIs do: the
              same key twice is one refund and the same receipt. It may be slow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from runtime import errors
from runtime.coordination.facts import Facts
from runtime.coordination.reconciler import ProviderStatus
from runtime.events import EffectStarted, ErrorInfo, FactChanged
from runtime.journal import Guard, Journal
from runtime.tools import ToolFailure

if TYPE_CHECKING:  # the settings name the order statuses defined here
    from teams.desk.settings import DeskSettings

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
        self,
        order_id: str,
        status: str,
        based_on: int,
        by: str,
        run_id: str = "",
        guards: Sequence[Guard] = (),
        call: str | None = None,
    ) -> Order:
        """The compare-and-swap, answered the order as the change left it; with `guards`
        (runtime.journal), written only while those streams stand at their versions:
        WrongExpectedVersion naming the stream otherwise. `call`: the tool call making the
        change (runtime/tools.py `Call.ref`), kept with it for `made_by`."""
        ...

    def made_by(self, order_id: str, based_on: int, call: str) -> Order | None:
        """The order as the change `call` made from version `based_on` left it, or None if
        that call made no change (`changed_by`)."""
        ...


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


def changed_by(journal: Journal, order: Order, based_on: int, call: str) -> Order | None:
    """`Orders.made_by` for a store whose every change is also in the order's subject stream in
    `journal` (both are): `order` as the change `call` made from `based_on` left it (at version
    `based_on + 1`, the one a compare-and-swap from there writes), or None."""
    change = Facts(journal).made_by(subject(order.order_id), based_on, call)
    if change is None:
        return None
    return Order(order.order_id, str(change.value), order.amount_cents, based_on + 1, change.by)


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


@dataclass(frozen=True)
class DeskServices:
    """What the desk needs from its host, given in `Services.provided`: `desk` builds the
    desk's world for a flight (the workers': orders and refunds in the project's database,
    `desk.services.database_desk`). None: the command line's (`teams.desk.local`)."""

    desk: Callable[[Journal, Path, DeskSettings], Desk] | None = None
