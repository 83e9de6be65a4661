"""What the stream-prefix index (migration 0050, PostgreSQL only) costs an append.

read_prefix seeks a second index on journal_event, `(stream COLLATE "C")`, so that a run's
specialists' streams are found without reading the whole table (bench/store_scans.py). Every
append now writes that index too. This measures appends on a durable private PostgreSQL
cluster (fsync on) with the index and without it, interleaved round by round in one process
(the index dropped and made again between rounds), one event per transaction and 100 per
transaction, the same ~300-byte event as bench/store.py. Medians of --repeats rounds.

    PYTHONPATH=. .venv/bin/python bench/prefix_index_appends.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402

setup("prefix-index", postgres=True)  # the index measured is PostgreSQL's alone

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.typical_event import event  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402

INDEX = "journal_stream_prefix"
MAKE = f'CREATE INDEX {INDEX} ON journal_event ((stream COLLATE "C"))'


def appends(total: int, batch: int) -> float:
    """Events a second, `batch` to a transaction, into a new stream."""
    journal = DjangoJournal()
    stream = f"run-{uuid.uuid4().hex[:8]}"
    events = [event(stream, i) for i in range(total)]
    started = time.perf_counter()
    for i in range(0, total, batch):
        journal.append(stream, events[i : i + batch], i)
    return total / (time.perf_counter() - started)


def indexed(on: bool) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {INDEX}")
        if on:
            cursor.execute(MAKE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--single", type=int, default=300, help="events, one per transaction")
    parser.add_argument("--batched", type=int, default=5_000, help="events, 100 per transaction")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    rates: dict[tuple[bool, int], list[float]] = {}
    for _ in range(args.repeats):
        for on in (True, False):
            indexed(on)
            for batch, total in ((1, args.single), (100, args.batched)):
                rates.setdefault((on, batch), []).append(appends(total, batch))
    indexed(True)  # as migrated
    print(f"PostgreSQL appends, events/s, medians of {args.repeats} interleaved rounds")
    print(f"{'per txn':>8}{'with index':>12}{'without':>10}{'ratio':>8}")
    for batch in (1, 100):
        with_, without = (statistics.median(rates[(on, batch)]) for on in (True, False))
        print(f"{batch:>8}{with_:>12,.0f}{without:>10,.0f}{with_ / without:>8.2f}")


if __name__ == "__main__":
    main()
