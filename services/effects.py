"""Settling side effects whose outcome was never recorded.

A worker can die after the provider accepted an effect and before the ledger said so. Every
effect carries its idempotency key to the provider, so the provider knows; `reconcile` (run
on the beat by `tasks.effects.reconcile_effects`) asks it about each effect in flight for
longer than EFFECT_PENDING_SECONDS and records the answer (marked `reconciled`). An effect
the provider never saw is recorded as failed: it did not happen, and trying again is the
agent's decision, under a new key.

The effects asked about are the table of open effects' (journal_store/open_effects.py), each
read again from its own stream, which decides: a round costs what is in flight, not the
store's whole history of effects.
"""

from __future__ import annotations

import logging

from django.conf import settings

from desk.services import effect_status
from journal_store import open_effects, projection
from journal_store.journal import DjangoJournal
from runtime.coordination import reconciler
from runtime.coordination.effects import Ledger

log = logging.getLogger(__name__)


def reconcile(older_than: float | None = None, using: str = "default") -> list[tuple[str, str]]:
    """Settle effects pending longer than `older_than` seconds; returns (key, status) pairs."""
    ledger = Ledger(DjangoJournal(using))
    wait = settings.EFFECT_PENDING_SECONDS if older_than is None else older_than
    settled = reconciler.reconcile(
        ledger,
        lambda started: effect_status(started, using),
        wait,
        open_effects.candidates(using),
    )
    for key, status in settled:
        log.warning("effect %s was in flight past %s s: the provider says %s", key, wait, status)
    if settled:
        projection.catch_up(using=using)
    return [(key, str(status)) for key, status in settled]
