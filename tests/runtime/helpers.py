"""Small builders the runtime tests share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runtime.events import Event

# The clock, the ids, and a retry's backoff (drawn at random, live): two flights of one
# scenario differ in these and in nothing else.
VOLATILE = ("t", "id", "delay")


def facts(path_or_events: Path | list[Event]) -> list[dict[str, Any]]:
    """A journal's events as dicts without their timestamps and ids: what "equal" means. A
    file's run's lease (lease-<run>: who drove it, from which process, until when) is left
    out: a run killed and resumed was driven twice, under two leases, and did the same."""
    if isinstance(path_or_events, Path):
        rows = [json.loads(line) for line in path_or_events.read_text().splitlines()]
        rows = [r for r in rows if r.get("stream") != f"lease-{r.get('run_id')}"]
    else:
        rows = [e.model_dump(mode="json") | {"kind": e.kind} for e in path_or_events]
    return [{k: v for k, v in row.items() if k not in VOLATILE} for row in rows]
