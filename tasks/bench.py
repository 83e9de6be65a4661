"""A task that does nothing but say it ran: bench/workers.py measures the broker's ceiling with
it, in the same run as the flights it compares against."""

from __future__ import annotations

import os

from celery import shared_task


@shared_task(name="tasks.bench.noop", acks_late=True)
def noop(tally: str) -> None:
    with open(tally, "a") as f:
        f.write(f"{os.getpid()}\n")
