"""The product's Celery app as bench/workers.py's workers run it: with the benchmark's own
no-op task, and transport options from the environment (BENCH_BROKER_OPTIONS, a JSON object).
The no-op task lives here, not in tasks/, so production workers never register a task that
appends to any path sent.
"""

from __future__ import annotations

import json
import os

from config.celery import app

app.conf.broker_transport_options = json.loads(os.environ.get("BENCH_BROKER_OPTIONS", "{}"))


@app.task(name="bench.noop", acks_late=True)
def noop(tally: str) -> None:
    """Say it ran (the broker's ceiling is measured in tasks a second)."""
    with open(tally, "a") as f:
        f.write(f"{os.getpid()}\n")


__all__ = ["app", "noop"]
