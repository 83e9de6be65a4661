"""The coordination metrics over many stored runs, against the bill's fold on the same rows.

    seed      --runs runs (10,000) as the dashboard bench seeds them (bench/dashboard_seed.py:
              six repo-fix template runs flown once, stored again under new ids, ~100 events
              each), then the read models rebuilt from the journal (timed).
    fold      for --sample runs picked at random: the run's rows read once, then the metrics
              fold and the bill fold each run over the same records (runtime.folds.run),
              --repeats times; medians per run, and per event.
    read      per run, the API's path: the fold's stored state read and its result computed
              (dashboard.queries.metrics against dashboard.queries.bill), for the same runs.
    all runs  every run's stored metrics state in one query and its result computed (what a
              page across runs would do without the read model's columns), against the bill's;
              beside them the metrics page's sums in SQL over the same rows
              (services.metrics.across: every run, one team, a 7-day window).
    page      the metrics page and /api/metrics under load: --clients concurrent clients
              against gunicorn (--workers sync workers), --requests requests per page,
              --repeats times (medians), each request with filters picked at random (none, a
              team, a scenario, a model, a 7-day window); beside /healthz, the floor. Target:
              p95 under 150 ms at 8 clients. Also one request in-process: its queries, its SQL
              time and its wall time (the best of 9).
    rebuild   the runs projector rebuilt from position 0 with every fold, then without the
              metrics fold: what keeping the metrics current costs the projector.

SQLite (a file in a temp dir, WAL), production settings. Run from the worktree:

    PYTHONPATH=. .venv/bin/python bench/coordination_metrics.py [--runs 10000] [--sample 500]
        [--no-rebuild]    # skip the projector's rebuilds (two minutes on 10,000 runs)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import require, setup  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--runs", type=int, default=10_000, help="runs to seed")
PARSER.add_argument("--sample", type=int, default=500, help="runs timed one by one")
PARSER.add_argument("--repeats", type=int, default=5, help="measurements (medians)")
PARSER.add_argument("--seed", type=int, default=1, help="random seed")
PARSER.add_argument("--keep", action="store_true", help="keep the temp dir (database)")
PARSER.add_argument("--no-rebuild", action="store_true", help="skip the rebuild timings")
PARSER.add_argument("--clients", type=int, default=8, help="concurrent clients (page)")
PARSER.add_argument("--workers", type=int, default=4, help="gunicorn worker processes (page)")
PARSER.add_argument("--requests", type=int, default=200, help="requests per page and repeat")
ARGS = PARSER.parse_args()
require("gunicorn", "serve", "the metrics page is measured against it")

# The templates are flown in-process (not in gunicorn).
STORE = setup("metrics", sqlite="metrics.sqlite3", env={"MINUTES_EAGER": "1"}, keep=ARGS.keep)
WORK, ENV = STORE.work, STORE.env

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from bench.dashboard_load import (  # noqa: E402
    Result,
    cpu_seconds,
    load,
    session_cookie,
    start_gunicorn,
    stop,
)
from bench.dashboard_seed import seed  # noqa: E402
from dashboard import queries  # noqa: E402
from journal_store import metrics_days, projection  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from journal_store.models import RunState, RunSummary, StoredEvent  # noqa: E402
from runtime import folds  # noqa: E402
from runtime.bill import Bill  # noqa: E402
from runtime.metrics import Metrics  # noqa: E402
from services.metrics import MetricsFilter, across  # noqa: E402
from tests.services import free_port  # noqa: E402

TARGET_MS = 150.0


def median_of(repeats: int, work: Callable[[], Any]) -> float:
    """The median seconds of `repeats` calls of `work`."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def fold_times(run_ids: list[str]) -> dict[str, float]:
    """Per run and per event (µs): each fold over the same records, read once beforehand."""
    journal = DjangoJournal()
    runs = [journal.read_run(r) for r in run_ids]
    events = sum(len(r) for r in runs)
    out = {}
    for fold in (Metrics(), Bill()):
        folds.run(fold, runs[0])  # warm: the first TeamStarted imports the installed teams
        total = median_of(ARGS.repeats, lambda f=fold: [folds.run(f, records) for records in runs])
        out[fold.name] = total
        print(
            f"  {fold.name:<8} {total / len(runs) * 1e6:8.1f} µs per run, "
            f"{total / events * 1e6:6.2f} µs per event ({events / len(runs):.0f} events per run)"
        )
    print(f"  metrics / bill: {out['metrics'] / out['bill']:.2f}")
    return out


def read_times(run_ids: list[str]) -> dict[str, float]:
    """Per run (µs): the stored state read and its result computed, as the API does."""
    out = {}
    for name, read in (("metrics", queries.metrics), ("bill", queries.bill)):
        total = median_of(ARGS.repeats, lambda r=read: [r(run_id) for run_id in run_ids])
        out[name] = total
        print(f"  {name:<8} {total / len(run_ids) * 1e6:8.1f} µs per run")
    print(f"  metrics / bill: {out['metrics'] / out['bill']:.2f}")
    return out


def all_runs() -> dict[str, float]:
    """Every run's stored state in one query, results computed (ms for all)."""
    out = {}
    for fold in (Metrics(), Bill()):

        def work(f: folds.Fold = fold) -> None:
            states = RunState.objects.filter(fold=f.name).values_list("state", flat=True)
            for text in states.iterator(chunk_size=2_000):
                f.result(json.loads(text), folds.Rows())

        total = median_of(ARGS.repeats, work)
        out[fold.name] = total
        count = RunState.objects.filter(fold=fold.name).count()
        print(
            f"  {fold.name:<8} {total * 1e3:8.1f} ms for {count:,} runs "
            f"({total / max(count, 1) * 1e6:.1f} µs per run)"
        )
    print(f"  metrics / bill: {out['metrics'] / out['bill']:.2f}")
    return out


def sums_in_sql() -> None:
    """The metrics page's sums over the read model's columns (ms, median)."""
    newest = RunSummary.objects.exclude(started_at=None).order_by("-started_at").first()
    assert newest is not None and newest.started_at is not None
    week = newest.started_at.date() - datetime.timedelta(days=6)
    for label, chosen in (
        ("every run", MetricsFilter()),
        ("one team", MetricsFilter(team="repo-fix")),
        ("a 7-day window", MetricsFilter(since=week, until=newest.started_at.date())),
    ):
        runs = across(chosen).totals["runs"]
        total = median_of(ARGS.repeats, lambda c=chosen: across(c))
        print(f"  sums in SQL, {label:<15} {total * 1e3:8.1f} ms for {runs:,} runs")


def filters(rng: random.Random) -> str:
    """A query string as people would pick one: none, a team, a scenario, a model, a week."""
    newest = RunSummary.objects.exclude(started_at=None).order_by("-started_at").first()
    assert newest is not None and newest.started_at is not None
    end = newest.started_at.date() - datetime.timedelta(days=rng.randrange(0, 24))
    return rng.choice(
        [
            "",
            "?team=repo-fix",
            f"?scenario={rng.choice(['first-flight', 'flaky-tool', 'premature-done'])}",
            "?model=scripted",
            f"?since={end - datetime.timedelta(days=6)}&until={end}",
        ]
    )


def in_process(user: Any, path: str) -> tuple[int, int, float, float]:
    """One request through Django here: status, queries, their SQL ms, the best of 9 wall ms."""
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    client.get(path)
    times: list[float] = []

    def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            times.append(time.perf_counter() - started)

    with connection.execute_wrapper(timed):
        status = client.get(path).status_code
    walls = []
    for _ in range(9):
        started = time.perf_counter()
        client.get(path)
        walls.append(time.perf_counter() - started)
    return status, len(times), sum(times) * 1e3, min(walls) * 1e3


def page_load(rng: random.Random) -> None:
    """The metrics page and its API under load, beside the floor."""
    user, cookie = session_cookie()
    pages: list[tuple[str, Callable[[], str]]] = [
        ("floor: /healthz", lambda: "/healthz"),
        ("metrics page", lambda: "/metrics" + filters(rng)),
        ("/api/metrics", lambda: "/api/metrics" + filters(rng)),
    ]
    port = free_port()
    machine_before, own_before = cpu_seconds(False)
    started = time.perf_counter()
    server = start_gunicorn(port, ARGS.workers, ENV, WORK)
    results: dict[str, list[Result]] = {name: [] for name, _ in pages}
    try:
        for _, make in pages:  # every worker loads Django and each page first
            load(port, cookie, [make() for _ in range(ARGS.clients * 4)], ARGS.clients)
        for _ in range(ARGS.repeats):
            for name, make in pages:
                paths = [make() for _ in range(ARGS.requests)]
                results[name].append(load(port, cookie, paths, ARGS.clients))
    finally:
        stop(server)
    machine, own = cpu_seconds(False)
    capacity = (time.perf_counter() - started) * (os.cpu_count() or 1)
    others = max(0.0, (machine - machine_before) - (own - own_before)) / capacity
    print(
        f"  gunicorn {ARGS.workers} sync workers, {ARGS.clients} clients, medians of "
        f"{ARGS.repeats} x {ARGS.requests} requests; {os.cpu_count()} CPUs shared with the "
        f"load generator; other processes took {others:.0%} of them meanwhile"
    )
    print(
        f"  {'page':<18}{'p50 ms':>8}{'p95 ms':>8}{'req/s':>8}{'< 150 ms':>10}{'non-200':>9}"
        f"{'queries':>9}{'SQL ms':>8}{'alone ms':>10}"
    )
    for name, make in pages:
        rs = results[name]
        p50 = statistics.median(r.p(50) for r in rs)
        p95 = statistics.median(r.p(95) for r in rs)
        rate = statistics.median(r.rate for r in rs)
        status, queries, sql, alone = in_process(user, make().split("?")[0])  # every run
        assert status == 200, f"{name} answered {status} in-process"
        print(
            f"  {name:<18}{p50:>8.1f}{p95:>8.1f}{rate:>8.1f}"
            f"{'yes' if p95 < TARGET_MS else 'NO':>10}{sum(len(r.failures) for r in rs):>9}"
            f"{queries:>9}{sql:>8.1f}{alone:>10.1f}"
        )
    failures = [f for rs in results.values() for r in rs for f in r.failures]
    for path, status, body in failures[:5]:
        print(f"  not 200: {path} -> {status}: {body!r}")


def rebuild_share() -> None:
    """The runs projector's rebuild with every fold and the metrics page's rollup, without
    the rollup, and without the metrics fold either (seconds, one each)."""
    events = StoredEvent.objects.count()
    timed = {}
    every = projection.RUN_FOLDS
    move, before = metrics_days.move, metrics_days.before
    for label, chosen, rollup in (
        ("every fold", every, True),
        ("without rollup", every, False),
        ("without metrics", tuple(f for f in every if f.name != "metrics"), False),
    ):
        projection.RUN_FOLDS = chosen
        metrics_days.move = move if rollup else (lambda cursor, old, new: None)  # type: ignore[assignment]
        metrics_days.before = before if rollup else (lambda using, run_ids: {})  # type: ignore[assignment]
        runs = projection.PROJECTORS["runs"]
        assert isinstance(runs, projection.Runs)
        runs.routes.clear()  # the folds each kind goes to, cached
        started = time.perf_counter()
        projection.rebuild(["runs"])
        timed[label] = time.perf_counter() - started
        print(f"  {label:<16} {timed[label]:6.1f} s ({events / timed[label]:,.0f} events/s)")
    projection.RUN_FOLDS = every
    metrics_days.move, metrics_days.before = move, before  # type: ignore[assignment]
    projection.PROJECTORS["runs"].routes.clear()  # type: ignore[attr-defined]
    projection.rebuild(["runs"])
    rollup_share = timed["every fold"] / timed["without rollup"] - 1
    fold_share = timed["without rollup"] / timed["without metrics"] - 1
    print(
        f"  the rollup adds {rollup_share:.0%} to the rebuild; the metrics fold and its columns "
        f"{fold_share:.0%}"
    )


def main() -> None:
    rng = random.Random(ARGS.seed)
    try:
        call_command("migrate", verbosity=0)
        print(f"seeding {ARGS.runs:,} runs on SQLite in {WORK}", flush=True)
        events, seeded, rebuilt, _ = seed(ARGS.runs, rng)
        print(
            f"seeded {events:,} events in {seeded:.0f} s; read models rebuilt in {rebuilt:.0f} s "
            f"({events / rebuilt:,.0f} events/s, every fold including the metrics)"
        )
        run_ids = list(RunSummary.objects.values_list("run_id", flat=True))
        sample = rng.sample(run_ids, min(ARGS.sample, len(run_ids)))
        states = RunState.objects.filter(fold="metrics").values_list("state", flat=True)
        sizes = [len(s) for s in states]
        print(
            f"metrics state per run: median {statistics.median(sizes):.0f} bytes, "
            f"largest {max(sizes):,} bytes"
        )
        print(f"\nfold over a run's records, {len(sample)} runs, median of {ARGS.repeats}:")
        fold_times(sample)
        print(f"\nread from the read model (the API's path), {len(sample)} runs:")
        read_times(sample)
        print(f"\nevery run's stored state at once, median of {ARGS.repeats}:")
        all_runs()
        sums_in_sql()
        print("\nthe metrics page under load (/metrics, /api/metrics):")
        page_load(rng)
        if not ARGS.no_rebuild:
            print("\nthe runs projector rebuilt from position 0:")
            rebuild_share()
    finally:
        if ARGS.keep:
            print(f"kept {WORK}")
        else:
            shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
