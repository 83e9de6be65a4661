"""The event store's speed, side by side with baselines measured in the same run.

    appends   events/s through DjangoJournal, one event per transaction and 100 per transaction,
              against the raw driver doing the same work (sqlite3 / psycopg: check the version,
              insert, commit, with the same locking and durability) and against the
              `eventsourcing` library's application recorder on the same database
    catch-up  projection events/s (the runs projector, all six folds, read models written)
              against a plain fold of the same rows (json.loads and a sum per kind)
    export    events/s and peak memory

SQLite runs with WAL and synchronous=FULL; PostgreSQL is a private cluster with fsync on,
started here from the installed binaries. Medians of --repeats runs.

    .venv/bin/pip install -e '.[bench]' && .venv/bin/python bench/store.py
"""

from __future__ import annotations

import argparse
import io
import json
import sqlite3
import statistics
import sys
import time
import tracemalloc
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402

# SQLite, and the private PostgreSQL cluster beside it where it is installed.
STORE = setup("store", beside=True)
WORK, PG_URL = STORE.work, STORE.postgres_url

from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402

from bench.typical_event import event  # noqa: E402
from journal_store import projection  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from journal_store.journal_rows import from_row  # noqa: E402
from journal_store.models import StoredEvent  # noqa: E402
from journal_store.transfer import export  # noqa: E402
from runtime import flight  # noqa: E402
from runtime.journal import MemoryJournal  # noqa: E402

ALIASES = ["default"] + (["postgres"] if PG_URL else [])


def rate(count: int, seconds: float) -> float:
    return count / seconds


# --- appends -----------------------------------------------------------------------------------


def ours(alias: str, total: int, batch: int) -> float:
    journal = DjangoJournal(alias)
    stream = f"run-{uuid.uuid4().hex[:8]}"
    events = [event(stream, i) for i in range(total)]
    started = time.perf_counter()
    for i in range(0, total, batch):
        journal.append(stream, events[i : i + batch], i)
    return rate(total, time.perf_counter() - started)


def rows_for(total: int) -> tuple[str, list[tuple[Any, ...]]]:
    """Rows for the raw drivers, the payload still a dict: encoding it is timed, as it is ours."""
    stream = f"run-{uuid.uuid4().hex[:8]}"
    rows = []
    for i in range(total):
        e = event(stream, i)
        body = e.model_dump(mode="json")
        data = {k: body[k] for k in ("text", "tool_calls", "usage")}
        rows.append(
            (uuid.uuid4().hex, stream, i + 1, e.run_id, e.kind, 2, "coder", "T1", i, data, e.t)
        )
    return stream, rows


def encoded(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(*r[:9], json.dumps(r[9], separators=(",", ":")), r[10]) for r in rows]


RAW_TABLE = """CREATE TABLE IF NOT EXISTS raw_event (
    position INTEGER PRIMARY KEY AUTOINCREMENT, id CHAR(32) UNIQUE NOT NULL,
    stream VARCHAR(200) NOT NULL, version INTEGER NOT NULL, run_id VARCHAR(64) NOT NULL,
    kind VARCHAR(64) NOT NULL, v SMALLINT NOT NULL, agent VARCHAR(64), task_id VARCHAR(64),
    turn INTEGER, data TEXT NOT NULL, t DOUBLE PRECISION NOT NULL, UNIQUE (stream, version))"""
INSERT = (
    "INSERT INTO raw_event (id, stream, version, run_id, kind, v, agent, task_id, turn, data, t)"
    " VALUES ({0})"
)


def raw_sqlite(total: int, batch: int) -> float:
    db = sqlite3.connect(WORK / "raw.sqlite3", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(RAW_TABLE)
    stream, rows = rows_for(total)
    sql = INSERT.format(", ".join("?" * 11))
    started = time.perf_counter()
    for i in range(0, total, batch):
        db.execute("BEGIN IMMEDIATE")
        (current,) = db.execute(
            "SELECT max(version) FROM raw_event WHERE stream = ?", (stream,)
        ).fetchone()
        assert (current or 0) == i
        db.executemany(sql, encoded(rows[i : i + batch]))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - started
    db.close()
    return rate(total, elapsed)


def raw_psycopg(total: int, batch: int) -> float:
    import psycopg

    assert PG_URL
    with psycopg.connect(PG_URL.replace("postgres://", "postgresql://")) as db:
        db.execute(RAW_TABLE.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"))
        db.commit()
        stream, rows = rows_for(total)
        sql = INSERT.format(", ".join(["%s"] * 11))
        started = time.perf_counter()
        for i in range(0, total, batch):
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(42)")
                (current,) = db.execute(
                    "SELECT max(version) FROM raw_event WHERE stream = %s", (stream,)
                ).fetchone()  # type: ignore[misc]
                assert (current or 0) == i
                with db.cursor() as cur:
                    cur.executemany(sql, encoded(rows[i : i + batch]))
        return rate(total, time.perf_counter() - started)


def eventsourcing_recorder(alias: str) -> Any:
    if alias == "default":
        from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

        recorder = SQLiteApplicationRecorder(SQLiteDatastore(str(WORK / "es.sqlite3")))
    else:
        from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore

        settings = connections["postgres"].settings_dict
        recorder = PostgresApplicationRecorder(
            PostgresDatastore(
                dbname=settings["NAME"],
                host=settings["HOST"],
                port=settings["PORT"],
                user=settings["USER"],
                password=settings["PASSWORD"] or "",
            )
        )
    recorder.create_table()
    return recorder


def library(recorder: Any, total: int, batch: int) -> float:
    from eventsourcing.persistence import StoredEvent as LibraryEvent

    originator = uuid.uuid4()
    _, rows = rows_for(total)
    started = time.perf_counter()
    for i in range(0, total, batch):
        recorder.insert_events(
            [
                LibraryEvent(
                    originator,
                    n + 1,
                    "runtime.events:ModelResponded",
                    json.dumps(row[9], separators=(",", ":")).encode(),
                )
                for n, row in enumerate(rows[i : i + batch], start=i)
            ]
        )
    return rate(total, time.perf_counter() - started)


# --- catch-up and export -------------------------------------------------------------------------


def seed(alias: str, runs: int) -> int:
    """Fly one first flight in memory and store it `runs` times under new ids."""
    memory = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", "r-seed")
    flight.fly(memory, config, "r-seed", WORK / "workspaces")
    template = [r.event for r in memory.read("run-r-seed")]
    journal = DjangoJournal(alias)
    for n in range(runs):
        run = f"r-seed{n:05d}"
        events = [e.model_copy(update={"run_id": run, "id": uuid.uuid4().hex}) for e in template]
        journal.append(f"run-{run}", events, 0)
    return runs * len(template)


def catch_up_rate(alias: str) -> tuple[float, float, float, int]:
    started = time.perf_counter()
    applied = projection.rebuild(["runs"], using=alias)
    ours_rate = rate(applied, time.perf_counter() - started)
    started = time.perf_counter()
    typed = sum(1 for row in DjangoJournal(alias).rows("ORDER BY position", []) if from_row(row))
    typed_rate = rate(typed, time.perf_counter() - started)
    started = time.perf_counter()
    folded: Counter[str] = Counter()
    rows = (
        StoredEvent.objects.using(alias)
        .order_by("position")
        .values_list("kind", "data")
        .iterator(chunk_size=2000)
    )
    count = 0
    for kind, data in rows:
        folded[kind] += len(json.loads(data))
        count += 1
    plain = rate(count, time.perf_counter() - started)
    return ours_rate, typed_rate, plain, applied


def export_rate(alias: str) -> tuple[float, int]:
    run = f"r-big-{alias}"
    journal = DjangoJournal(alias)
    for i in range(0, 100_000, 5_000):
        journal.append(f"run-{run}", [event(run, i + k) for k in range(5_000)], i)

    class Discard(io.TextIOBase):
        def write(self, s: str) -> int:
            return len(s)

    started = time.perf_counter()
    count = export(run, Discard(), alias)
    elapsed = time.perf_counter() - started
    tracemalloc.start()  # a second pass for memory: tracing slows Python down several times
    export(run, Discard(), alias)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return rate(count, elapsed), peak


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--single", type=int, default=500, help="events for 1-per-transaction")
    parser.add_argument(
        "--batched", type=int, default=10_000, help="events for 100-per-transaction"
    )
    parser.add_argument("--runs", type=int, default=300, help="first flights seeded for catch-up")
    args = parser.parse_args()
    for alias in ALIASES:
        call_command("migrate", database=alias, verbosity=0)
    names = {"default": "SQLite", "postgres": "PostgreSQL"}
    print(
        f"appends, events/s, medians of {args.repeats} "
        f"({args.single} single, {args.batched} batched)"
    )
    print(
        f"{'database':<11}{'per txn':>8}{'Minutes':>10}{'raw driver':>12}{'eventsourcing':>15}"
        f"{'vs raw':>8}{'vs lib':>8}"
    )
    for alias in ALIASES:
        recorder = eventsourcing_recorder(alias)
        raw = raw_sqlite if alias == "default" else raw_psycopg
        for batch, total in ((1, args.single), (100, args.batched)):
            m = statistics.median(ours(alias, total, batch) for _ in range(args.repeats))
            r = statistics.median(raw(total, batch) for _ in range(args.repeats))
            lib = statistics.median(library(recorder, total, batch) for _ in range(args.repeats))
            print(
                f"{names[alias]:<11}{batch:>8}{m:>10,.0f}{r:>12,.0f}{lib:>15,.0f}"
                f"{m / r:>8.2f}{m / lib:>8.2f}"
            )
    print()
    print("catch-up (runs projector, rebuild from 0) vs a plain json.loads fold of the same rows;")
    print("'typed read' is reading and validating the events alone, without folds or writes")
    print(
        f"{'database':<11}{'events':>8}{'Minutes ev/s':>14}{'typed read':>12}"
        f"{'plain fold':>12}{'ratio':>8}"
    )
    for alias in ALIASES:
        seed(alias, args.runs)
        ours_rate, typed, plain, applied = catch_up_rate(alias)
        print(
            f"{names[alias]:<11}{applied:>8,}{ours_rate:>14,.0f}{typed:>12,.0f}{plain:>12,.0f}"
            f"{ours_rate / plain:>8.2f}"
        )
    print()
    print("export of a 100,000-event run")
    for alias in ALIASES:
        ev_s, peak = export_rate(alias)
        print(f"{names[alias]:<11}{ev_s:>10,.0f} events/s   peak traced memory {peak / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
