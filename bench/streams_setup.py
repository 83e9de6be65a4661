"""What the benches of a read's cost as its streams grow share (call_checks.py,
conflict_cards.py, pending_pushes.py, runs_pages.py): their common arguments, a store of their
own under production settings (SQLite in a temp dir, or a private PostgreSQL cluster with fsync
on), and the loads and the table of medians they make on it.

Nothing happens at import, and nothing of Django is imported here before `setup` has run: a
bench calls it before its own imports of Django, and the helpers import what they use when
called.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.production_env import production_env
from runtime.events import Event, RunStarted
from runtime.journal import Batch

if TYPE_CHECKING:
    from journal_store.journal import DjangoJournal


@dataclass(frozen=True)
class Store:
    work: Path  # the bench's temp dir: its SQLite files and the store's home
    postgres_url: str | None  # the private cluster's, with --postgres


def parser(
    doc: str | None, sizes: str, sizes_help: str, repeats: int | None = 15, others: bool = False
) -> Any:
    """--sizes (comma separated), --postgres, unless None --repeats (rounds of medians), with
    `others` --others (the other runs' events `others` appends); the bench adds its own."""
    found = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    found.add_argument("--sizes", default=sizes, help=f"{sizes_help}, comma separated")
    if repeats is not None:
        found.add_argument("--repeats", type=int, default=repeats, help="rounds (medians)")
    found.add_argument("--postgres", action="store_true", help="a private PostgreSQL, not SQLite")
    if others:
        found.add_argument(
            "--others",
            type=int,
            default=200_000,
            help="other runs' events in the journal (100 a run)",
        )
    return found


def sizes_of(text: str) -> list[int]:
    return [int(s) for s in text.split(",")]


def setup(name: str, postgres: bool, database: str = "bench.sqlite3") -> Store:
    """A temp dir of the bench's own, production's settings over SQLite's `database` in it or
    a private PostgreSQL cluster (exits saying so where PostgreSQL is not installed), and
    Django set up on them."""
    from tests.services import start_postgres  # the private PostgreSQL cluster

    work = Path(tempfile.mkdtemp(prefix=f"minutes-bench-{name}-"))
    url = start_postgres(durable=True) if postgres else None
    if postgres and not url:
        sys.exit("--postgres: PostgreSQL's initdb and pg_ctl are not installed")
    os.environ.update(production_env(url or f"sqlite:///{work / database}", work / "home"))
    import django

    django.setup()
    return Store(work, url)


def append(journal: DjangoJournal, stream: str, events: list[Event]) -> None:
    """The events at the end of the stream, a thousand a batch."""
    for start in range(0, len(events), 1_000):
        journal.append(stream, events[start : start + 1_000], journal.version(stream))


def others(journal: DjangoJournal, count: int) -> None:
    """`count` events of other runs, 100 a run: what a store holds beside the streams a bench
    grows. Without them those streams are most of the journal, and PostgreSQL's planner, from
    those statistics, walked the journal after a conflict by its primary key rather than the
    decisions' index (23.7 ms a card at 20,000 events, where the index takes under a
    millisecond: conflict_cards.py)."""
    runs = [f"r-other{n:05d}" for n in range(count // 100)]
    for start in range(0, len(runs), 50):
        batches: list[Batch] = [
            (f"run-{run}", [RunStarted(run_id=run, agent="coder", task="t") for _ in range(100)], 0)
            for run in runs[start : start + 50]
        ]
        journal.append_batches(batches)


def analyze() -> None:
    """PostgreSQL's statistics after the load, as autovacuum would gather them."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def rows_read(work: Callable[[], Any]) -> int:
    """The journal rows `work` turned into records."""
    import journal_store.journal as stored

    real, counted = stored.from_row, [0]

    def counting(row: Any) -> Any:
        counted[0] += 1
        return real(row)

    stored.from_row = counting
    try:
        work()
    finally:
        stored.from_row = real
    return counted[0]


def table(
    figures: dict[str, Callable[[int], Callable[[], Any]]],
    sizes: list[int],
    repeats: int,
    label: str,
    width: int,
) -> None:
    """Each figure's medians in ms at each size (its work made once a size, warmed, then timed
    in `repeats` rounds, the sizes in turns), the largest size's ratio to the smallest's, and
    the journal rows one call turns into records at each size."""
    head = "".join(f"{size:>10,}" for size in sizes)
    print(f"{label:<{width}}{head}{'ratio':>8}{'rows':>16}")
    for name, make in figures.items():
        works = {size: make(size) for size in sizes}
        for work in works.values():
            work()  # warm
        times: dict[int, list[float]] = {size: [] for size in sizes}
        for _ in range(repeats):
            for size in sizes:
                started = time.perf_counter()
                works[size]()
                times[size].append((time.perf_counter() - started) * 1000)
        medians = {size: statistics.median(times[size]) for size in sizes}
        rows = "/".join(str(rows_read(works[size])) for size in sizes)
        print(
            f"{name:<{width}}"
            + "".join(f"{medians[size]:>10.2f}" for size in sizes)
            + f"{medians[sizes[-1]] / medians[sizes[0]]:>8.2f}{rows:>16}"
        )
