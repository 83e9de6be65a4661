"""The dashboard's latency with 10,000 runs, side by side with a trivial view in the same run.

    seed      --runs runs (10,000) of ~100 events each (~1M events). Six template runs are
              flown once, step by step as a Celery worker flies them (each step takes and
              gives back its lease, so a first flight is 76 events in its own stream and 20 in
              its lease stream), then stored again under new run ids with fresh event ids,
              timestamps spread over 30 days, several runs interleaved per transaction as
              concurrent runs interleave. The mix: mostly repo-fix first flights, some
              premature-done, silent-dropout, flaky-tool and budget-starved runs, and 2% still
              running (a first flight's journal cut short). Then the read models are rebuilt
              from the journal. Both are timed.
    pages     p50 and p95 latency and requests/s over --requests requests per page from
              --clients concurrent clients (threads, one connection each, kept alive where the
              server allows: gunicorn's sync workers close it after every response) against
              gunicorn: the runs list (first page), a run's page (its timeline tab is rendered
              on the server), its bill and threads tabs, and the events API (100 events), each
              for a run picked at random among all of them, the compare page (that run and
              another, ~100 events each) and the search page (a word every run holds, some
              hold, or none), and the runs list by a kind of finding (one many runs have,
              some have, or none), and the list's poll for runs started since it was drawn
              (from the newest start: nothing new), and the dead letters' first page and its
              poll for letters opened since (from the newest); next to /healthz, the floor
              (gunicorn, the middleware and one SELECT 1). Target: p95 under 150 ms.
              With --flying, the same while the runs still flying go on, as workers would:
              an append of a step's events every --write-interval seconds.
    queries   per page, the SQL statements one request runs and their total time, and one
              request's wall time, in-process (no HTTP, no concurrency); for each page over the
              target (every page with --profile) its slowest statements and a cProfile.

    trace     with --trace, instead of all the above: the run page's trace tab for a run of 100
              events and one of 20,000 (grown as the compare page's long runs are), side by
              side in one process: its first window, its latest, a call opened, the whole page,
              and the timeline tab beside them; medians of --repeats x 15 requests taken in
              turns, with the ratio of the 20,000-event figure to the 100-event one (target
              1.5).

Production settings (MINUTES_DEBUG=0, plain HTTP). SQLite by default (WAL, synchronous=FULL, a
file in a temp dir, not ANALYZEd: Django never runs it); --postgres for a private PostgreSQL
cluster with fsync on, VACUUM ANALYZEd after the load as autovacuum would. The load generator
shares the machine with the server; the floor, measured the same way, shows what that costs.
The share of the CPUs that other processes took during the load is printed: figures taken
while it is well above 0% say more about the neighbours than about the dashboard.

    .venv/bin/pip install -e '.[serve]' && .venv/bin/python bench/dashboard.py [--runs 500]
    .venv/bin/python bench/dashboard.py --keep        # then: --reuse <its dir>, no new seed
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import shutil
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.services: the private PostgreSQL cluster

from bench.production_env import require, setup  # noqa: E402
from tests.services import free_port  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--runs", type=int, default=10_000, help="runs to seed")
PARSER.add_argument("--postgres", action="store_true", help="a private PostgreSQL, not SQLite")
PARSER.add_argument("--requests", type=int, default=300, help="measured requests per page")
PARSER.add_argument("--clients", type=int, default=8, help="concurrent clients")
PARSER.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
PARSER.add_argument("--repeats", type=int, default=3, help="measurements per page (medians)")
PARSER.add_argument("--profile", action="store_true", help="profile every page, not only slow ones")
PARSER.add_argument("--seed", type=int, default=1, help="random seed (run ids, mix)")
PARSER.add_argument("--keep", action="store_true", help="keep the temp dir (database, logs)")
PARSER.add_argument(
    "--flying", action="store_true", help="measure while the runs still flying go on appending"
)
PARSER.add_argument(
    "--write-interval", type=float, default=0.05, help="--flying: seconds between appends"
)
PARSER.add_argument(
    "--reuse", type=Path, help="measure the SQLite database a --keep run left in this dir"
)
PARSER.add_argument(
    "--trace", action="store_true", help="only the trace tab at 100 and 20,000 events"
)
ARGS = PARSER.parse_args()
if not ARGS.trace:
    require("gunicorn", "serve", "the pages are measured against it")
if ARGS.reuse and ARGS.postgres:
    sys.exit("--reuse is for a kept SQLite database; PostgreSQL is stopped at exit")
if ARGS.reuse and ARGS.flying:
    sys.exit("--flying needs a fresh seed: what the flying runs append is not kept")

# The templates are flown here, each step run in-process as soon as it is enqueued.
STORE = setup(
    "dashboard",
    ARGS.postgres,
    sqlite="dashboard.sqlite3",
    work=ARGS.reuse,
    env={"MINUTES_EAGER": "1"},
    keep=ARGS.keep,
)
WORK, PG_URL, ENV = STORE.work, STORE.postgres_url, STORE.env

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Max  # noqa: E402
from django.test import Client  # noqa: E402

# What the bench does is in its parts: the seeding, and the server and the load.
from bench.dashboard_load import (  # noqa: E402
    Result,
    cpu_seconds,
    load,
    session_cookie,
    start_gunicorn,
    stop,
)
from bench.dashboard_seed import SLICE, Stored, keep_flying, seed  # noqa: E402
from journal_store import projection  # noqa: E402
from journal_store.models import DeadLetter, RunSummary, StoredEvent  # noqa: E402

TARGET_MS = 150.0


# --- pages --------------------------------------------------------------------------------------

Page = tuple[str, Callable[[str], str]]
FLOOR: Page = ("floor: /healthz", lambda run: "/healthz")
PAGES: list[Page] = [
    ("runs list /", lambda run: "/"),
    ("run page (timeline)", lambda run: f"/runs/{run}/"),
    ("bill tab", lambda run: f"/runs/{run}/?tab=bill"),
    ("threads tab", lambda run: f"/runs/{run}/?tab=threads"),
    ("events API (100)", lambda run: f"/api/runs/{run}/events?limit=100"),
    # Two runs side by side: `run` against the run seeded after it (its pair, PAIRS).
    ("compare page", lambda run: f"/runs/compare?a={run}&b={PAIRS.get(run, run)}"),
    # Words every run holds, some runs hold, and none: what a common word costs matters most.
    ("search page", lambda run: f"/search?q={quote(WORDS[hash(run) % len(WORDS)])}"),
    # A finding many runs have, some runs have, and none has (the list's Finding box).
    ("runs list by finding", lambda run: f"/?finding={FOUND[hash(run) % len(FOUND)]}"),
    # The list's poll for runs started since it was drawn, as an open list asks it every 5 s:
    # from the newest run's start (nothing new, the usual answer), without a filter and with
    # a search word, which no index serves.
    ("newer-runs poll", lambda run: f"/runs/newer?newer_than={quote(NEWEST[0])}"),
    ("newer-runs poll, word", lambda run: f"/runs/newer?q=parser&newer_than={quote(NEWEST[0])}"),
    # The dead letters' first page and its poll for letters opened since, from the newest.
    ("dead letters page", lambda run: "/review/dead-letters"),
    ("dead letters poll", lambda run: f"/review/dead-letters/newer?after={NEWEST[1]}"),
    # The same queue and the metrics narrowed to the runs of the scenario that holds every
    # dead letter (6% of the runs), as the metrics' count of what is undecided links to them.
    ("dead letters, scenario", lambda run: "/review/dead-letters?scenario=silent-dropout"),
    ("metrics, scenario", lambda run: "/metrics?scenario=silent-dropout"),
    # The queue searched for the words of a cause every letter has, and for words none has.
    ("dead letters, words", lambda run: f"/review/dead-letters?q={quote(CAUSES[hash(run) % 2])}"),
]
# Filled in main: the newest run's start and the newest dead letter's position, as the
# polls carry them.
NEWEST = ["", ""]
PAIRS: dict[str, str] = {}  # filled in main: each run's partner for the compare page
WORDS = ("parser", "textparse/parser.py", "empty line", "REJECT", "DHL-7731")
FOUND = ("done_without_evidence", "budget_exhausted", "deadlock")
CAUSES = ("did not reply", "no such words")


def in_process(user: Any, path: str) -> tuple[int, list[tuple[float, str]]]:
    """One request through Django in this process: its status and (seconds, SQL) per query."""
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    queries: list[tuple[float, str]] = []

    def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            queries.append((time.perf_counter() - started, sql))

    with connection.execute_wrapper(timed):
        response = client.get(path)
    return response.status_code, queries


def profile(user: Any, name: str, path: str) -> None:
    """The slowest statements and the hottest functions of one request, for a slow page."""
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    client.get(path)  # warm: templates compiled, connections open
    _, queries = in_process(user, path)
    sql = sum(q[0] for q in queries)
    print(f"\n--- {name}: {path}  ({len(queries)} statements, {sql * 1000:.1f} ms of SQL)")
    for seconds, statement in sorted(queries, reverse=True)[:6]:
        print(f"  {seconds * 1000:7.2f} ms  {statement[:220]}")
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(10):
        client.get(path)
    profiler.disable()
    for order, restriction, title in (
        ("tottime", [14], "the hottest functions, by own time"),
        ("cumulative", [rf"^{ROOT}/(?!\.venv)", 14], "this project's code, by cumulative time"),
    ):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(*restriction)
        lines = out.getvalue().splitlines()
        first = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
        print(f"  cProfile of 10 requests, {title}:")
        print("\n".join("  " + line for line in lines[first:] if line.strip()))


def measure(
    run_ids: list[str], cookie: str, rng: random.Random, tails: list[Stored]
) -> tuple[dict[str, list[Result]], float, int]:
    """Every page --repeats times, the pages taking turns, against one gunicorn (with --flying,
    while the runs still flying go on); the share of the machine's CPU that other processes
    took meanwhile (0 on a quiet machine), and the events the flying runs appended."""
    port = free_port()
    machine_before, own_before = cpu_seconds(PG_URL is not None)
    started = time.perf_counter()
    server = start_gunicorn(port, ARGS.workers, ENV, WORK)
    results: dict[str, list[Result]] = {name: [] for name, _ in [FLOOR, *PAGES]}
    done, written = threading.Event(), [0]
    writer = threading.Thread(target=keep_flying, args=(tails, ARGS.write_interval, done, written))
    try:
        for _, make in [FLOOR, *PAGES]:  # every worker loads Django and each page first
            warm = [make(rng.choice(run_ids)) for _ in range(ARGS.clients * 4)]
            load(port, cookie, warm, ARGS.clients)
        if ARGS.flying:
            writer.start()
        for _ in range(ARGS.repeats):
            for name, make in [FLOOR, *PAGES]:
                paths = [make(rng.choice(run_ids)) for _ in range(ARGS.requests)]
                results[name].append(load(port, cookie, paths, ARGS.clients))
    finally:
        done.set()
        if writer.is_alive():
            writer.join()
        stop(server)
    machine, own = cpu_seconds(PG_URL is not None)
    capacity = (time.perf_counter() - started) * (os.cpu_count() or 1)
    others = max(0.0, (machine - machine_before) - (own - own_before)) / capacity
    return results, others, written[0]


def in_process_ms(user: Any, path: str) -> float:
    """One request's wall time through Django in this process, no HTTP and no concurrency: the
    best of 9, as the least disturbed by whatever else runs on the machine."""
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    client.get(path)
    times = []
    for _ in range(9):
        started = time.perf_counter()
        client.get(path)
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def report(results: dict[str, list[Result]], user: Any, run_ids: list[str]) -> list[Page]:
    """The table; the pages over the target."""

    def median(name: str, figure: Callable[[Result], float]) -> float:
        return statistics.median(figure(r) for r in results[name])

    floor = median(FLOOR[0], lambda r: r.p(95))
    print(
        f"{'page':<22}{'p50 ms':>8}{'p95 ms':>8}{'req/s':>8}{'p95/floor':>11}{'< 150 ms':>10}"
        f"{'non-2xx':>9}{'queries':>9}{'SQL ms':>8}{'alone ms':>10}"
    )
    slow = []
    for page in [FLOOR, *PAGES]:
        name, make = page
        p95 = median(name, lambda r: r.p(95))
        path = make(run_ids[len(run_ids) // 3])
        status, queries = in_process(user, path)
        assert 200 <= status < 300, f"{name}: {path} answered {status} in-process"
        if p95 >= TARGET_MS and page is not FLOOR:
            slow.append(page)
        print(
            f"{name:<22}{median(name, lambda r: r.p(50)):>8.1f}{p95:>8.1f}"
            f"{median(name, lambda r: r.rate):>8.1f}{p95 / floor:>11.1f}"
            f"{'yes' if p95 < TARGET_MS else 'NO':>10}"
            f"{sum(len(r.failures) for r in results[name]):>9}{len(queries):>9}"
            f"{sum(q[0] for q in queries) * 1000:>8.1f}{in_process_ms(user, path):>10.1f}"
        )
    failures = [(name, f) for name, rs in results.items() for r in rs for f in r.failures]
    if failures:
        print(f"\n{len(failures)} responses were not 2xx; the first few:")
        for name, (path, status, body) in failures[:5]:
            print(f"  {name}: {path} -> {status}: {body!r}")
    else:
        print("\nevery response was 2xx (the polls' 204: nothing new)")
    return slow


def two_long_runs(events: int = 1_000) -> list[str]:
    """Two runs of `events` events each (a coder reading a file turn after turn, as
    bench/long_run.py grows them), for the compare page: alike, so it reads every decision."""
    from bench.long_run import TURN_EVENTS, grow, new_run, register_scenario

    register_scenario(events // TURN_EVENTS)
    pair = [new_run(events // TURN_EVENTS + 5) for _ in range(2)]
    for run_id in pair:
        grow(run_id, events)
    return pair


def grown(events: int) -> str:
    """A run of about `events` events (a coder reading a file turn after turn), flown at once."""
    from bench.long_run import TURN_EVENTS, grow, new_run, register_scenario

    register_scenario(events // TURN_EVENTS)
    run_id = new_run(events // TURN_EVENTS + 5)
    grow(run_id, events)
    return run_id


def agree(run_id: str, size: int) -> None:
    """Check that the tab's windows, side by side, hold every call of the OTLP export once with
    its timings, and say how many rows the most costly window read."""
    from dashboard import trace
    from journal_store.journal import DjangoJournal
    from runtime import flight, trace_view
    from runtime.otel.encode import build
    from runtime.otel.spans import span_id_of

    records = flight.run_records(DjangoJournal(), run_id)
    exported = build(records)
    assert exported is not None
    calls = {
        s.span_id: (s.start, s.end)
        for s in exported.spans
        if s.attributes.get("gen_ai.operation.name") in ("chat", "execute_tool")
    }
    drawn: dict[str, tuple[int, int]] = {}
    after: int | None = 0
    windows = most = 0
    while after is not None:
        window = trace.window(run_id, after, size=trace.WINDOW)
        drawn |= {b.span_id: (b.start, b.end) for b in window.view(run_id, [], False).bars}
        windows, most, after = windows + 1, max(most, window.read), window.later
    same = "the export's, span for span" if drawn == calls else "NOT the export's"
    print(
        f"{size:,}-event run: {windows} windows of {trace.WINDOW} events hold {len(drawn):,} "
        f"calls, {same}; the most rows one window read: {most}"
    )
    # Calls opened across the run (every 97th), against the export's spans: prompt, answer,
    # arguments, result and timings.
    spans = {s.span_id: s for s in exported.spans}
    opened = [r for r in records if r.event.kind in ("ModelCalled", "ToolReturned")][::97]
    differ = 0
    for rec in opened:
        role = "chat" if rec.event.kind == "ModelCalled" else "tool"
        span, call = spans[span_id_of(run_id, rec, role)], trace.call(run_id, rec.position)
        a = span.attributes
        differ += call is None or (
            (call.start, call.end, call.prompt, call.answer, call.arguments, call.result)
            != (
                span.start,
                span.end,
                trace_view.messages(a.get("gen_ai.input.messages")),
                trace_view.messages(a.get("gen_ai.output.messages")),
                trace_view.pretty(a.get("gen_ai.tool.call.arguments", "")),
                trace_view.pretty(a.get("gen_ai.tool.call.result", "")),
            )
        )
    print(f"  {len(opened)} calls opened across it, {differ} unlike the export's span")


def trace_figures(sizes: tuple[int, ...] = (100, 20_000)) -> None:
    """The trace tab at each size, in-process, the sizes taking turns request by request."""
    from journal_store.journal import DjangoJournal

    user, _ = session_cookie()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    runs = {}
    if ARGS.reuse:  # the runs a --trace --keep left, smallest first
        kept = RunSummary.objects.filter(team="solo").order_by("event_count")
        runs = dict(zip(sizes, kept.values_list("run_id", flat=True), strict=True))
    for size in sizes:
        if size in runs:
            continue
        started = time.perf_counter()
        runs[size] = grown(size)
        print(f"grew a run of {size:,} events in {time.perf_counter() - started:.0f} s", flush=True)
    partial = {"HX-Request": "true", "HX-Target": "tab"}

    def call_at(run_id: str, which: int | None) -> int:
        """The position of the run's `which`th model call (its middle one for None)."""
        calls = DjangoJournal().select(
            "WHERE run_id = %s AND kind = 'ModelCalled' ORDER BY position", [run_id]
        )
        return calls[len(calls) // 2 if which is None else which].position

    pages: dict[str, Callable[[str], tuple[str, dict[str, str]]]] = {
        "trace tab, first window": lambda r: (f"/runs/{r}/tabs/trace", partial),
        "trace tab, latest window": lambda r: (f"/runs/{r}/tabs/trace?latest=1", partial),
        # The 10th call's prompt window is the same in both runs; the middle call's holds all
        # the turns that fit (three times as many in the long run): what it shows grows.
        "trace tab, 10th call opened": lambda r: (
            f"/runs/{r}/tabs/trace?call={call_at(r, 9)}",
            partial,
        ),
        "trace tab, middle call open": lambda r: (
            f"/runs/{r}/tabs/trace?call={call_at(r, None)}",
            partial,
        ),
        "run page on its trace tab": lambda r: (f"/runs/{r}/?tab=trace", {}),
        "timeline tab (beside it)": lambda r: (f"/runs/{r}/tabs/timeline", partial),
    }
    events = {
        size: StoredEvent.objects.filter(run_id=run_id).count() for size, run_id in runs.items()
    }
    for size, run_id in runs.items():
        agree(run_id, size)
    print(
        f"\nin-process (Django's test client, no HTTP), medians of {ARGS.repeats} x 15 "
        f"requests, ms; runs of {', '.join(f'{n:,}' for n in events.values())} stored events"
    )
    print(f"{'page':<28}" + "".join(f"{size:>10,}" for size in sizes) + f"{'ratio':>8}")
    for name, make in pages.items():
        asked = {size: make(run_id) for size, run_id in runs.items()}
        times: dict[int, list[float]] = {size: [] for size in sizes}
        for size in sizes:  # warm: templates compiled, caches a second look would find warm
            path, headers = asked[size]
            assert 200 <= client.get(path, headers=headers).status_code < 300, path
        for _ in range(ARGS.repeats * 15):
            for size in sizes:
                path, headers = asked[size]
                started = time.perf_counter()
                client.get(path, headers=headers)
                times[size].append((time.perf_counter() - started) * 1000)
        medians = {size: statistics.median(times[size]) for size in sizes}
        print(
            f"{name:<28}"
            + "".join(f"{medians[size]:>10.1f}" for size in sizes)
            + f"{medians[sizes[-1]] / medians[sizes[0]]:>8.2f}"
        )


def main() -> None:
    rng = random.Random(ARGS.seed)
    if ARGS.trace:
        try:
            call_command("migrate", verbosity=0)
            trace_figures()
        finally:
            if ARGS.keep:
                print(f"kept {WORK}: measure it again with --trace --reuse {WORK}")
            elif not ARGS.reuse:
                shutil.rmtree(WORK, ignore_errors=True)
        return
    backend = "PostgreSQL" if ARGS.postgres else "SQLite"
    try:
        call_command("migrate", verbosity=0)  # a kept database gets migrations added since
        if ARGS.reuse:
            print(f"reusing the database in {WORK}")
            events, tails = StoredEvent.objects.count(), []
        else:
            print(f"seeding {ARGS.runs:,} runs on {backend} in {WORK}", flush=True)
            events, seeded, rebuilt, tails = seed(ARGS.runs, rng)
            print(
                f"seeded {ARGS.runs:,} runs, {events:,} events ({events / ARGS.runs:.0f} per run) "
                f"in {seeded:.0f} s ({events / seeded:,.0f} events/s); read models rebuilt in "
                f"{rebuilt:.0f} s ({events / rebuilt:,.0f} events/s)"
            )
        long_pair = two_long_runs()
        PAGES.append(
            (
                "compare, 1,000-event runs",
                lambda run: f"/runs/compare?a={long_pair[0]}&b={long_pair[1]}",
            )
        )
        run_ids = list(RunSummary.objects.values_list("run_id", flat=True))
        NEWEST[0] = RunSummary.objects.aggregate(newest=Max("started_at"))["newest"].isoformat()
        NEWEST[1] = str(DeadLetter.objects.aggregate(newest=Max("position"))["newest"] or 0)
        PAIRS.update(zip(run_ids, run_ids[1:] + run_ids[:1], strict=True))
        statuses = Counter(RunSummary.objects.values_list("status", flat=True))
        print("statuses: " + ", ".join(f"{s} {n:,}" for s, n in statuses.most_common()))
        if not ARGS.postgres:
            size = sum(f.stat().st_size for f in WORK.glob("dashboard.sqlite3*"))
            print(f"database file: {size / 1e6:,.0f} MB")
        user, cookie = session_cookie()
        results, others, written = measure(run_ids, cookie, rng, tails)
        projection.catch_up()  # what the flying runs appended last: not the in-process figures'
        print(
            f"\n{backend}, {len(run_ids):,} runs, {events:,} events; gunicorn {ARGS.workers} sync "
            f"workers; {ARGS.clients} clients; medians of {ARGS.repeats} x {ARGS.requests} "
            f"requests per page; {os.cpu_count()} CPUs, shared with the load generator; other "
            f"processes took {others:.0%} of them meanwhile (0% on a quiet machine)"
        )
        if ARGS.flying:
            print(
                f"while the runs still flying appended {written:,} events, up to {SLICE} at a "
                f"time every {ARGS.write_interval} s (each append its own transaction)"
            )
        print(
            "queries, SQL ms, alone ms: one request in-process (no HTTP, no concurrency; "
            "alone: the best of 9), the SQL timed statement by statement"
        )
        slow = report(results, user, run_ids)
        for name, make in [FLOOR, *PAGES] if ARGS.profile else slow:
            profile(user, name, make(rng.choice(run_ids)))
    finally:
        if ARGS.keep:
            print(f"kept {WORK}: measure it again with --reuse {WORK}")
        elif not ARGS.reuse:
            shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
