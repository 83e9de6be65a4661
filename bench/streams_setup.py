"""What the benches of a read's cost as its store grows share (call_checks.py,
conflict_cards.py, control_reads.py, effects_reconcile.py, pending_pushes.py, runs_pages.py,
store_scans.py, whole_reads.py): their common arguments, a database a size, the loads, the
statistics after them, the reads as they were, the timing of a read at each size and the table
of its medians, ratio and rows. Their store is bench/production_env.py's `setup`.

Nothing happens at import, and nothing of Django is imported here: a bench imports this before
`setup` has set Django up, and the helpers import what they use when called.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runtime.events import Event, RunStarted
from runtime.journal import Batch, Recorded

if TYPE_CHECKING:
    from bench.production_env import Store
    from journal_store.journal import DjangoJournal


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


def stores(store: Store, sizes: list[int]) -> dict[int, str]:
    """A database of its own for each size, migrated: their aliases. Called before any
    connection to them is made: Django reads the aliases once."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    base = settings.DATABASES["default"]
    aliases = {size: f"s{size}" for size in sizes}
    for alias in aliases.values():
        name = alias if store.postgres_url else str(store.work / f"{alias}.sqlite3")
        settings.DATABASES[alias] = {**base, "NAME": name}
    # The default database first: dashboard's migration 0003 reads its tokens there, whichever
    # database is being migrated.
    call_command("migrate", verbosity=0)
    for alias in aliases.values():
        if store.postgres_url:
            with connections["default"].cursor() as cursor:
                cursor.execute(f"CREATE DATABASE {alias}")
        call_command("migrate", database=alias, verbosity=0)
    return aliases


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


def analyze(alias: str = "default") -> None:
    """PostgreSQL's statistics after the load, as autovacuum would gather them."""
    from django.db import connections

    if connections[alias].vendor == "postgresql":
        with connections[alias].cursor() as cursor:
            cursor.execute("ANALYZE")


def settle(checkpoint: bool = False) -> None:
    """PostgreSQL: statistics and the visibility map brought up to date after a load, so that
    autovacuum does not do it during the rounds that follow; and checked, since the figures
    are only worth what the plans were made from (the journal's rows as the planner has them,
    against its count; n_mod_since_analyze is no check: this session's inserts reach the
    counters up to a second late, after the ANALYZE). SQLite, with `checkpoint`: the load's
    write-ahead log moved into the database, as a checkpoint leaves it between a store's
    writes."""
    from django.db import connection

    if checkpoint and connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
            cursor.execute(
                "SELECT reltuples, (SELECT count(*) FROM journal_event) FROM pg_class "
                "WHERE relname = 'journal_event'"
            )
            planned, rows = cursor.fetchone()
        if abs(planned - rows) > rows / 100:
            sys.exit(f"stale statistics: the planner has {planned:,.0f} journal rows of {rows:,}")


def like_prefix(journal: DjangoJournal, prefix: str) -> list[Recorded]:
    """read_prefix as it was before 2026-12-06: a LIKE on the stream's name, a scan of the
    table. On PostgreSQL the LIKE is on `stream || ''`, as no index can serve it: the planner
    would otherwise seek migration 0050's index in byte order with it, which the store did not
    have before."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    name = "stream || ''" if journal.connection.vendor == "postgresql" else "stream"
    return journal.select(f"WHERE {name} LIKE %s ESCAPE '\\' ORDER BY position", [escaped + "%"])


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


def timed(
    work: Callable[[int], Any], sizes: list[int], repeats: int
) -> tuple[dict[int, float], dict[int, int]]:
    """`work(size)` warmed at each size, then timed in `repeats` rounds, the sizes in turns: its
    medians in ms, and the journal rows one call turns into records, at each size."""
    for size in sizes:
        work(size)  # warm
    times: dict[int, list[float]] = {size: [] for size in sizes}
    for _ in range(repeats):
        for size in sizes:
            started = time.perf_counter()
            work(size)
            times[size].append((time.perf_counter() - started) * 1000)
    medians = {size: statistics.median(times[size]) for size in sizes}
    return medians, {size: rows_read(lambda size=size: work(size)) for size in sizes}  # type: ignore[misc]


def best_of(work: Callable[[], Any], calls: int = 3) -> float:
    """The fastest of `calls` calls of `work` in a row, in ms: another process on the machine
    preempts one now and then, and the best is the call it did not."""
    best = float("inf")
    for _ in range(calls):
        begun = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - begun)
    return best * 1000


def sized_stores(
    prefix: str, work: Path, postgres_url: str | None, sizes: list[int]
) -> Callable[[int], None]:
    """A database of its own for each size, created and migrated (`prefix_<size>`: a file in
    `work` on SQLite, a database of the private cluster on PostgreSQL); the function that
    makes a size's the connection's, which the bench calls before it seeds or reads one."""
    from django.core.management import call_command
    from django.db import connection

    def use(size: int) -> None:
        connection.close()
        if postgres_url:
            connection.settings_dict["NAME"] = f"{prefix}_{size}"
        else:
            connection.settings_dict["NAME"] = str(work / f"{prefix}_{size}.sqlite3")
        connection.ensure_connection()

    if postgres_url:
        with connection.cursor() as cursor:
            for size in sizes:
                cursor.execute(f"CREATE DATABASE {prefix}_{size}")
    for size in sizes:
        use(size)
        call_command("migrate", verbosity=0)
    return use


def ways_by_size(
    figures: dict[str, dict[str, Callable[[], Any]]],
    sizes: list[int],
    use: Callable[[int], None],
    repeats: int,
    backend: str,
    digits: int = 2,
) -> None:
    """Each figure's ways ("before", "now": a call each) timed on each store in turns (`use`
    makes a size's the connection's), `repeats` rounds, each the best of 3 calls; the medians
    printed in ms, with the ratio of the last size's to the first's."""
    times: dict[tuple[str, str, int], list[float]] = {}
    for _ in range(repeats):
        for size in sizes:
            use(size)
            for name, ways in figures.items():
                for way, read in ways.items():
                    times.setdefault((name, way, size), []).append(best_of(read))
    print(f"{backend}; medians of {repeats} rounds, each the best of 3 calls; ms")
    head = "".join(f"{size:>10,}" for size in sizes)
    print(f"{'runs in the store':<46}{head}{'ratio':>8}")
    for name, ways in figures.items():
        for way in ways:
            med = {s: statistics.median(times[name, way, s]) for s in sizes}
            row = "".join(f"{med[s]:>10.{digits}f}" for s in sizes)
            print(f"{name + ', ' + way:<46}{row}{med[sizes[-1]] / med[sizes[0]]:>8.2f}")


def caption(repeats: int) -> None:
    """What the table below it gives, on which database."""
    from django.db import connection

    print(
        f"\n{connection.vendor}, in-process, medians of {repeats} rounds; ms, and the "
        "journal rows one read turns into records"
    )


def head(label: str, sizes: list[int], width: int, rows_width: int = 16) -> None:
    """The table's head: `label` and the sizes, the ratio, the rows."""
    sized = "".join(f"{size:>10,}" for size in sizes)
    print(f"{label:<{width}}{sized}{'ratio':>8}{'rows':>{rows_width}}")


def line(
    name: str, medians: dict[int, float], rows: dict[int, int], width: int, rows_width: int = 16
) -> None:
    """A figure's line: its median at each size, the largest size's ratio to the smallest's (the
    sizes ascending), and its rows at each size."""
    sizes = list(medians)
    print(
        f"{name:<{width}}"
        + "".join(f"{medians[size]:>10.2f}" for size in sizes)
        + f"{medians[sizes[-1]] / medians[sizes[0]]:>8.2f}"
        + f"{'/'.join(str(rows[size]) for size in sizes):>{rows_width}}"
    )


def table(
    figures: dict[str, Callable[[int], Callable[[], Any]]],
    sizes: list[int],
    repeats: int,
    label: str,
    width: int,
) -> None:
    """Each figure's line (its work made once a size, then `timed`), below the head, printed as
    each is measured."""
    head(label, sizes, width)
    for name, make in figures.items():
        works = {size: make(size) for size in sizes}
        line(name, *timed(lambda size, works=works: works[size](), sizes, repeats), width)  # type: ignore[misc]
