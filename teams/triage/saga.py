"""The refund, carried out as a saga over the orders and policy servers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from runtime import errors, streams
from runtime.coordination.effects import Ledger
from runtime.coordination.mutation import Authority, Evidence, Mutation, MutationGate
from runtime.events import ErrorInfo, SagaSettled, SagaUndoFailed
from runtime.fanout.saga import CompensationFailed, Saga
from runtime.fenced import Fenced
from runtime.mcp.server import McpToolError
from runtime.session import Session
from teams.triage import eligible
from teams.triage.belt import Belt

# Who moves money for the triage team: the harness's refund saga, nobody's specialist.
AUTHORITY = Authority.of({"refund": {"refund-saga"}})
TASK = "refund"  # the dead letter's task, when an undo is outstanding


def refund(
    session: Session,
    belt: Belt,
    orders: list[str],
    intent: tuple[str, int] | None,
    customer: str | None,
    received_on: date,
    verdict: Evidence,
) -> SagaSettled | SagaUndoFailed:
    """Carry out the refund as a saga: a return label, a store credit, and the decision on
    record with the policy service. If a step fails, the steps before it are undone, last
    first, each once (the saga's ledger keys survive a crash and a replay). Each step passes
    the mutation gate: the run's intent (a person may have superseded it), the driver's lease,
    the saga's authority, the order looked up (evidence) and the step's derived key; a refused
    step turns the saga back like any other failure.

    The order's id is read from the ticket, which anyone may write: money moves only when the
    ticket names one order (`orders`, as named), which exists, is `customer`'s (the ticket's
    writer; None: the ticket names nobody, and nothing moves), was delivered, and was within
    its return window on `received_on`, the day the ticket came; and on the policy
    specialist's `verdict` (teams/triage/eligible.py). A refusal says each piece that failed,
    and the answer carries it to the customer.

    An undo that fails leaves the run parked on a dead letter saying what is still done (a
    SagaUndoFailed first): retried, the saga is tried again and the undo sent again; discarded,
    the SagaUndoFailed is returned and the run ends escalated (teams/triage/answer.py)."""

    order_id = " or ".join(orders)  # one, unless the ticket names more (refused)

    def work() -> dict[str, Any]:
        journal = session.journal
        gate = MutationGate(journal, AUTHORITY, f"gate-{session.run_id}")
        named = eligible.one_order(orders)
        # Two orders named: neither is looked up, and the one piece refused says which.
        found = belt.call("orders.lookup_order", {"order_id": order_id}) if named.holds else {}
        order = found.get("order") or {}
        owner = order.get("customer")
        looked_up = Evidence(
            f"order {order_id} looked up",
            "total_cents" in order,
            found.get("message") or f"orders.lookup_order found no total for {order_id}",
        )
        whose = Evidence(
            f"order {order_id} is the ticket writer's",
            customer is not None and owner == customer,
            f"order {order_id} is {owner}'s, not {customer}'s"
            if customer
            else f"the ticket names no customer (From <address>:) whose order {order_id} is",
        )
        mutation = Mutation(
            what=f"refunding order {order_id}",
            actor="refund-saga",
            capability="refund",
            intent=intent,
            lease=journal.fence if isinstance(journal, Fenced) else None,
            # An order not found has no owner, status or date to compare: its refusal says it
            # was not found.
            evidence=(
                (
                    named,
                    looked_up,
                    whose,
                    eligible.delivered(order_id, order),
                    eligible.within_window(order_id, order, received_on),
                    verdict,
                )
                if order
                else (named, looked_up)
                if named.holds
                else (named,)
            ),
            run_id=session.run_id,
        )
        saga = Saga(
            journal,
            streams.saga_id("refund", session.run_id),
            session.run_id,
            ledger=Ledger(journal, gate=gate),
            mutation=mutation,
        )
        # (name, action, undo, whether their provider deduplicates on the key). The orders
        # server does (its book answers a key's first answer, one operation per key): a label
        # or credit left unsettled by a driver that died is sent again by the one that took
        # the run over, not left at the server with the saga turned back around it. The policy
        # server is not relied on to (it is down in refund-saga): its step is never re-sent.
        steps = [
            (
                "label",
                lambda key: belt.call(
                    "orders.create_return_label", {"order_id": order_id, "key": key}
                ),
                lambda key, done: belt.call(
                    "orders.void_return_label", {"label_id": done["label_id"], "key": key}
                ),
                True,
            ),
            (
                "credit",
                lambda key: belt.call(
                    "orders.issue_credit",
                    {"order_id": order_id, "amount_cents": order["total_cents"], "key": key},
                ),
                lambda key, done: belt.call(
                    "orders.reverse_credit", {"credit_id": done["credit_id"], "key": key}
                ),
                True,
            ),
            (
                "record",
                lambda key: belt.call(
                    "policy.record_decision",
                    {"order_id": order_id, "decision": "refund in full", "key": key},
                ),
                lambda key, done: None,  # the last step: nothing after it to fail
                False,
            ),
        ]
        for name, action, undo, resend in steps:
            try:
                saga.step(name, action, undo, payload={"order_id": order_id}, resend=resend)
            except Exception as exc:  # any failure turns the saga back
                # A driver resuming a saga already turned back (its last one died while
                # undoing) is refused the next step (SagaClosed): what failed, and why, is what
                # the saga recorded when it turned back, as an uninterrupted run reports it.
                aborted = saga.state().aborted
                error = aborted.reason if aborted else f"{type(exc).__name__}: {exc}"
                failed = aborted.failed_step if aborted and aborted.failed_step else name
                try:
                    saga.compensate(reason=error, failed_step=failed, again=unreached)
                except CompensationFailed as undo:
                    state = saga.state()
                    standing = [s for s in reversed(state.completed) if s not in state.compensated]
                    raise UndoOutstanding(
                        saga_id=saga.saga_id,
                        step=undo.step,
                        key=undo.key,
                        error=undo.error,
                        refused=not unreached(undo.info),
                        standing=standing,
                        compensated=list(state.compensated),
                        failed_step=failed,
                        reason=error,
                    ) from undo
                return {
                    "saga_id": saga.saga_id,
                    "completed": saga.completed,
                    "compensated": saga.compensated,
                    "failed_step": failed,
                    "error": error,
                }
        return {"saga_id": saga.saga_id, "completed": saga.completed}

    attempts = 0
    while True:
        settled = attempt(session, work)
        if isinstance(settled, SagaSettled):
            return settled
        # An undo failed: steps are still done at the orders server (money may be moved), and
        # only a person can say when to try again (the server is back) or take it from here.
        attempts += 1
        decided = session.dead_letter(
            f"refund of order {order_id}: {settled.outstanding}",
            attempts,
            settled.error,
            task_id=TASK,
        )
        if decided == "discard":
            return settled


class UndoOutstanding(Exception):
    """A refund's undo failed: the fields of its SagaUndoFailed."""

    def __init__(self, **fields: Any) -> None:
        super().__init__(fields["error"])
        self.fields = fields


def attempt(session: Session, work: Callable[[], dict[str, Any]]) -> SagaSettled | SagaUndoFailed:
    """One try at the saga, as one activity whose outcome is either event: settled, or turned
    back with an undo outstanding (read back as recorded, as an activity is). Tried again (a
    person's retry of its letter), the saga's steps answer their recorded results, and each
    undo not yet done is sent: one that never reached the server under its same key."""
    session.flush()
    if isinstance(session.peek(), SagaUndoFailed):
        return session.activity(SagaUndoFailed, dict)  # the record's: `work` is not run
    try:
        return session.activity(SagaSettled, work)
    except UndoOutstanding as exc:
        fields = exc.fields
    return session.activity(SagaUndoFailed, lambda: fields)


def unreached(error: ErrorInfo) -> bool:
    """Whether a failed call to a server never got its answer (it was down, unreachable,
    degraded, its breaker open, or it did not answer in time): sent again under the same key,
    which the orders server deduplicates (if it did act, it answers its first answer). A
    McpToolError is the server's own answer (it refused: nothing to undo, undone already),
    which sending the key again would not change: a person settles it."""
    return not errors.recorded_as(error, McpToolError)
