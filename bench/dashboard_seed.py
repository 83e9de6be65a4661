"""The dashboard bench's seeding: template runs flown once, copied under fresh ids and stored.

Imported by bench/dashboard.py once Django is set up (it uses the ORM and the journal); it reads
no arguments and no environment: what it needs is passed in.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import DriverLeased, Event, LeaseGranted, LeaseRenewed, payload_json
from services import runs

DAYS = 30  # the runs' start times are spread over this many days before now
GROUP = 16  # runs per transaction, their events interleaved
SLICE = 12  # events of one run appended before the next run's turn (about a step)
# scenario, share of the runs; "running" is a first flight cut short (still flying).
MIX = [
    ("first-flight", 0.80),
    ("premature-done", 0.06),
    ("silent-dropout", 0.06),
    ("flaky-tool", 0.04),
    ("budget-starved", 0.02),
    ("running", 0.02),
]


@dataclass
class Template:
    """A run flown once: its events in position order, with what each copy must change."""

    run_id: str
    records: list[tuple[str, Event, bool]]  # (stream, event, payload mentions the run id)
    t0: float = field(init=False)

    def __post_init__(self) -> None:
        self.t0 = self.records[0][1].t


def fly_template(scenario: str) -> Template:
    """One repo-fix run flown as a worker flies it: every step a task (eager here)."""
    run_id = runs.start_run("repo-fix", scenario, by="bench")
    status = runs.status_of(run_id)
    assert status != "running", f"template {scenario} did not finish: {status}"
    recs = DjangoJournal().read_run(run_id)
    return Template(run_id, [(r.stream, r.event, run_id in payload_json(r.event)) for r in recs])


def copy_event(t: Template, e: Event, run_id: str, shift: float, mentions: bool) -> Event:
    update: dict[str, Any] = {"run_id": run_id, "id": uuid.uuid4().hex, "t": e.t + shift}
    if isinstance(e, DriverLeased | LeaseGranted | LeaseRenewed):
        update["expires"] = e.expires + shift
    if mentions:  # the run id inside the payload too (a workspace name): rewrite the text
        text = e.model_dump_json().replace(t.run_id, run_id)
        return type(e).model_validate_json(text).model_copy(update=update)
    return e.model_copy(update=update)


Stored = list[tuple[str, Event]]  # (stream, event) in the order they are appended


def copy_run(t: Template, start: float) -> Stored:
    run_id = "r-" + uuid.uuid4().hex[:12]
    shift = start - t.t0
    out = []
    for stream, e, mentions in t.records:
        out.append((stream.replace(t.run_id, run_id), copy_event(t, e, run_id, shift, mentions)))
    return out


def first_stream(events: Stored, limit: int) -> tuple[str, list[Event], Stored]:
    """The leading events of one stream (at most `limit`): one append; and the rest."""
    stream = events[0][0]
    n = next((i for i, (s, _) in enumerate(events[:limit]) if s != stream), len(events[:limit]))
    return stream, [e for _, e in events[:n]], events[n:]


def store_group(journal: DjangoJournal, group: list[Stored]) -> None:
    """The runs of a group in one transaction, a slice of each in turn."""
    versions: Counter[str] = Counter()
    with transaction.atomic():
        journal.serialize_appends()
        for offset in range(0, max(len(r) for r in group), SLICE):
            for run in group:
                part = run[offset : offset + SLICE]
                while part:
                    stream, events, part = first_stream(part, SLICE)
                    journal.append_locked(stream, events, versions[stream])
                    versions[stream] += len(events)


def seed(count: int, rng: random.Random) -> tuple[int, float, float, list[Stored]]:
    """Seed `count` runs; (events stored, seconds seeding, seconds rebuilding, and what the
    runs still flying have yet to append)."""
    started = time.perf_counter()
    names = [name for name, _ in MIX]
    templates = {
        name: fly_template("first-flight" if name == "running" else name) for name in names
    }
    now = time.time()
    journal = DjangoJournal()
    remaining = count - len(templates)
    picks = rng.choices(names, weights=[w for _, w in MIX], k=max(remaining, 0))
    tails = []
    for i in range(0, len(picks), GROUP):
        group = []
        for name in picks[i : i + GROUP]:
            t = templates[name]
            run = copy_run(t, now - rng.uniform(0, DAYS * 86_400))
            if name == "running":  # cut short: the rest is appended by keep_flying, if at all
                cut = rng.randrange(8, len(run) - 8)
                run, tail = run[:cut], run[cut:]
                tails.append(tail)
            group.append(run)
        store_group(journal, group)
        done = i + len(group)
        if done % 1000 < GROUP:
            print(f"  {done + len(templates):,} runs stored", flush=True)
    seeded = time.perf_counter() - started
    started = time.perf_counter()
    projection.rebuild()
    rebuilt = time.perf_counter() - started
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")  # what autovacuum does after a bulk load
    return StoredEvent.objects.count(), seeded, rebuilt, tails


def keep_flying(
    tails: list[Stored], interval: float, done: threading.Event, written: list[int]
) -> None:
    """What workers do meanwhile (--flying): the runs still flying go on, one append of up to
    SLICE events of one stream, in its own transaction, every `interval` seconds
    (--write-interval)."""
    journal = DjangoJournal()
    versions: dict[str, int] = {}
    todo = [t for t in tails if t]
    try:
        while todo and not done.is_set():
            stream, events, rest = first_stream(todo.pop(0), SLICE)
            if stream not in versions:
                versions[stream] = journal.version(stream)
            journal.append(stream, events, versions[stream])
            versions[stream] += len(events)
            written[0] += len(events)
            if rest:
                todo.append(rest)
            done.wait(interval)
    finally:
        connection.close()  # this thread's own
