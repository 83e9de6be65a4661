"""Merging the trigram indexes' segments, as a Celery task on the beat."""

from __future__ import annotations

from celery import shared_task

from services import indexes
from services.beat import TIDYING, round_of


@shared_task(name="tasks.indexes.tidy")
def tidy() -> list[str]:
    """Merge some of the segments of each index the searches read."""
    return round_of(TIDYING, indexes.tidy)
