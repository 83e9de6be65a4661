"""Holds on a limited total shared by effects (the refunds of one order, which may not come to
more than it was paid): each effect holds its amount before it starts, an EffectReserved on
`reserved-<target>`, appended at the version the caller read the holds at, in the same write
as the EffectStarted (`Ledger.perform(..., reserve=)`, runtime/coordination/effects.py). Two
effects checking the total at once cannot both pass on the same reading (the second append
finds the stream moved, reads again, and checks again), and an effect in flight counts as much
as one done. A hold lasts until its effect is recorded as failed; since the hold and the start
are one write, a crash leaves either both (an effect in flight, settled by the reconciler) or
neither."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runtime.events import EffectReserved
from runtime.journal import Batch

if TYPE_CHECKING:
    from runtime.coordination.effects import Ledger


def reserved(target: str) -> str:
    """The stream of the holds on a target's total (EffectReserved)."""
    return f"reserved-{target}"


def holds(ledger: Ledger, target: str) -> tuple[int, dict[str, int]]:
    """What the effects on `target` hold of its total (key -> amount), but for those recorded as
    failed, and the version of the holds' stream that was read: a hold is appended at it
    (`hold`), so a hold taken since makes the caller read and check again."""
    records = ledger.journal.read(reserved(target))
    held: dict[str, int] = {}
    for rec in records:
        e = rec.event
        if isinstance(e, EffectReserved) and not ledger.failed(e.key):
            held[e.key] = e.amount
    return (records[-1].version if records else 0), held


def hold(target: str, key: str, amount: int, limit: int, at: int, run_id: str = "") -> Batch:
    """The hold a `reserve` returns: `amount` of `target`'s total of `limit`, for effect `key`,
    appended at version `at` of the holds' stream (the version `holds` read)."""
    made = EffectReserved(run_id=run_id, key=key, target=target, amount=amount, limit=limit)
    return (reserved(target), [made], at)
