"""Settling side effects left in flight, as a Celery task on the beat."""

from __future__ import annotations

from celery import shared_task

from services import effects
from services.beat import SETTLING, round_of


@shared_task(name="tasks.effects.reconcile_effects")
def reconcile_effects() -> list[tuple[str, str]]:
    """Ask the provider about effects in flight too long, and record its answers."""
    return round_of(SETTLING, effects.reconcile)
