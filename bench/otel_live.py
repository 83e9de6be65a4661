"""What live trace pushes cost a run's steps, against a slow collector.

Runs (repo-fix first flights) are driven one turn a step (MINUTES_STEP_TURNS=1) as a worker
drives them, in this process, against SQLite. Modes alternate run by run, so both see the same
machine:

    off    MINUTES_OTLP_LIVE unset: a step sends no push
    live   MINUTES_OTLP_LIVE=1, and a pusher thread doing a worker's job meanwhile: after each
           step it gets a message (as the step sends one) and runs the live push
           (services.traces.push_live), against a collector that answers every POST after
           --delay seconds; messages that pile up while it waits are taken as one

A step only sends a message when live pushes are on; if it waited for the collector, each
would take at least --delay. Figures: each step's wall time (median and 95th percentile over
all steps of a mode), and for live, what the pusher sent. The pusher shares this process (and
its GIL, and SQLite's one writer) with the steps; on a deployment it is another worker.

    PYTHONPATH=. .venv/bin/python bench/otel_live.py [--runs 3] [--delay 0.5]

With --step-cost, what one live push costs a worker at a run's start and deep into a long run
(the flat-cost rule: within about 1.5x at 20,000 events of its cost at 100). For each length N,
two copies of bench/otel.py's long run (a first flight's turns repeated under new names) are
journalled on SQLite --step events at a time, with a live push after each step (so the traces
stream and the stored fold are what a run with live pushes has), to N events; then --steps more
steps are timed, each followed by its live push, alternating between the two copies:

    after    services.traces.push_live: the stored fold stepped with the step's events
    before   the same push as it was before the stored fold (commit 8a87f2d, kept here): the
             whole traces stream read as a ledger, the run's journal read and folded from its
             start, the spans past the cursor sent

Figures: the push's median CPU time (time.process_time, this process: the collector is a
thread that answers at once) and wall time, per length, and each one's ratio to its cost at
the first length, measured in the same run.

    PYTHONPATH=. .venv/bin/python bench/otel_live.py --step-cost [--events 100 20000] [--steps 30]
        [--modes after before]   (one alone: no 0.8 s re-fold between its steps to flush caches)
"""

from __future__ import annotations

import argparse
import itertools
import queue
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from bench.production_env import setup

if TYPE_CHECKING:
    from runtime.events import Event


def configure() -> None:
    """Django on SQLite of the bench's own, migrated, on development settings
    (MINUTES_DEBUG=1), as this bench has always been measured."""
    setup(
        "otel-live",
        sqlite="minutes.sqlite3",
        env={
            "MINUTES_DEBUG": "1",
            # Steps and pushes are enqueued to nobody: the bench runs them.
            "CELERY_BROKER_URL": "memory://",
            "MINUTES_SANDBOX": "off",
        },
    )
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def unsynced(sender: object, connection: Any, **kwargs: object) -> None:
    """--step-cost: SQLite without an fsync a commit. A push commits a few times; on this
    machine's disk the waits were most of its wall time and none of the fold's."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous=OFF")


class Slow(BaseHTTPRequestHandler):
    delay = 0.5
    spans = 0
    posts = 0

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        parsed = ExportTraceServiceRequest.FromString(body)
        time.sleep(Slow.delay)
        Slow.posts += 1
        Slow.spans += sum(len(s.spans) for r in parsed.resource_spans for s in r.scope_spans)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def fly(live: bool) -> tuple[list[float], dict[str, int]]:
    """One run driven step by step; each step's wall time in ms, and the live pushes' outcomes."""
    from django.conf import settings
    from django.db import connections

    from services import runs
    from services import traces as trace_service
    from services.steps import drive_step

    settings.OTLP_LIVE = live
    run_id = runs.start_run("repo-fix", "first-flight", by="bench")
    outcomes: dict[str, int] = {}
    sent = queue.Queue[str]()

    def pusher() -> None:
        try:
            while sent.get() != "stop":
                while not sent.empty():  # a push takes every span that ended: one will do
                    if sent.get() == "stop":
                        return
                outcome = trace_service.push_live(run_id)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
        finally:
            connections.close_all()

    thread = threading.Thread(target=pusher) if live else None
    if thread is not None:
        thread.start()
    steps = []
    try:
        while True:
            started = time.perf_counter()
            outcome = drive_step(run_id, "bench")
            steps.append((time.perf_counter() - started) * 1000)
            if outcome != "stepped":
                break
            sent.put("step")  # what the step's message would tell a worker
    finally:
        sent.put("stop")
        if thread is not None:
            thread.join()
    return steps, outcomes


def refold_push_live(run_id: str) -> str:
    """services.traces.push_live as it was before the stored fold (commit 8a87f2d): the
    baseline, kept here to be measured beside the new one in the same run."""
    import itertools

    from journal_store import traces
    from journal_store.journal import DjangoJournal
    from runtime import flight
    from runtime.events import TraceSpansClaimed, TraceSpansPushed
    from runtime.otel.encode import folded
    from runtime.otel.protobuf import serialized
    from services import traces as trace_service

    book = traces.ledger(run_id)
    if book.last is not None:
        return "ended"
    if trace_service.in_flight(book):
        return "busy"
    records = flight.run_records(DjangoJournal(), run_id)
    spans = list(
        itertools.islice(folded(records, traces.options(), finish=False), book.cursor, None)
    )
    if not spans:
        return "nothing"
    here = trace_service.endpoint()
    claim = TraceSpansClaimed(endpoint=here, first=book.cursor, count=len(spans))
    traces.claim(run_id, claim, book.version)
    body = serialized(spans)
    sent = trace_service.send(body, attempts=1)
    pushed = TraceSpansPushed(
        endpoint=here, first=claim.first, count=claim.count, bytes=len(body), attempts=sent.attempts
    )
    traces.record(run_id, pushed)
    return "pushed"


class Quick(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def journalled_run(run_id: str, events: int) -> Iterator[Event]:
    """bench/otel.py's long run of `events` events, as new events of run `run_id`."""
    from otel import long_run  # bench/otel.py, beside this script

    from runtime.events.base import new_id

    for rec in long_run(events):
        yield rec.event.model_copy(update={"id": new_id(), "run_id": run_id})


def step_cost(lengths: list[int], steps: int, step: int, modes: list[str]) -> None:
    from django.conf import settings

    from journal_store.journal import DjangoJournal
    from services import traces as trace_service

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Quick)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    settings.OTLP_ENDPOINT = f"http://127.0.0.1:{httpd.server_address[1]}"
    settings.OTLP_LIVE = True
    journal = DjangoJournal()
    every: dict[str, Callable[[str], str]] = {
        "after": trace_service.push_live,
        "before": refold_push_live,
    }
    pushers = {mode: every[mode] for mode in modes}
    cpu: dict[tuple[str, int], list[float]] = {}
    wall: dict[tuple[str, int], list[float]] = {}
    for n in lengths:
        runs = {mode: f"r-{mode}-{n}" for mode in pushers}
        feeds = {mode: journalled_run(run, n + steps * step) for mode, run in runs.items()}
        written = dict.fromkeys(pushers, 0)

        def feed(
            mode: str,
            feeds: dict[str, Iterator[Event]] = feeds,
            runs: dict[str, str] = runs,
            written: dict[str, int] = written,
        ) -> None:
            batch = list(itertools.islice(feeds[mode], step))
            journal.append(f"run-{runs[mode]}", batch, written[mode])
            written[mode] += len(batch)

        started = time.perf_counter()
        for mode in pushers:  # to N events, a live push (the new one: it is quick) a step
            while written[mode] < n:
                feed(mode)
                trace_service.push_live(runs[mode])
        seeded = time.perf_counter() - started
        for _ in range(steps):
            for mode, push in pushers.items():
                feed(mode)
                c0, w0 = time.process_time(), time.perf_counter()
                outcome = push(runs[mode])
                cpu.setdefault((mode, n), []).append(time.process_time() - c0)
                wall.setdefault((mode, n), []).append(time.perf_counter() - w0)
                assert outcome in ("pushed", "nothing"), outcome
        print(f"({n:,} events: journalled with a live push a step in {seeded:.1f} s)")
    httpd.shutdown()
    first = lengths[0]
    print(f"\none live push after a step of {step} events, medians of {steps} steps")
    print("| events | push | CPU ms | wall ms | CPU vs at " + f"{first:,} | wall vs at {first:,} |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in lengths:
        for mode in pushers:
            c = statistics.median(cpu[(mode, n)]) * 1000
            w = statistics.median(wall[(mode, n)]) * 1000
            c1 = statistics.median(cpu[(mode, first)]) * 1000
            w1 = statistics.median(wall[(mode, first)]) * 1000
            print(f"| {n:,} | {mode} | {c:.2f} | {w:.2f} | {c / c1:.2f} | {w / w1:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--step-cost", action="store_true")
    parser.add_argument("--events", type=int, nargs="+", default=[100, 20_000])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--step", type=int, default=10, help="events a step journals")
    parser.add_argument(
        "--modes", nargs="+", default=["after", "before"], choices=["after", "before"]
    )
    args = parser.parse_args()
    if args.step_cost:
        from django.db.backends.signals import connection_created

        connection_created.connect(unsynced)
    configure()
    if args.step_cost:
        step_cost(args.events, args.steps, args.step, args.modes)
        return
    from django.conf import settings

    Slow.delay = args.delay
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    settings.OTLP_ENDPOINT = f"http://127.0.0.1:{httpd.server_address[1]}"
    settings.STEP_TURNS = 1
    times: dict[str, list[float]] = {"off": [], "live": []}
    pushes: dict[str, int] = {}
    for _ in range(args.runs):
        for mode in ("off", "live"):
            steps, outcomes = fly(mode == "live")
            times[mode].extend(steps)
            for k, v in outcomes.items():
                pushes[k] = pushes.get(k, 0) + v
    httpd.shutdown()
    print(f"collector answering each POST after {args.delay:g} s; {args.runs} runs per mode")
    print("| live push | steps | step p50 | step p95 |")
    print("|---|---:|---:|---:|")
    for mode, ms in times.items():
        p95 = statistics.quantiles(ms, n=20)[-1]
        print(f"| {mode} | {len(ms)} | {statistics.median(ms):.1f} ms | {p95:.1f} ms |")
    print(f"\nlive pushes by outcome: {dict(sorted(pushes.items()))}")
    print(f"the collector took {Slow.spans} spans in {Slow.posts} POSTs")


if __name__ == "__main__":
    main()
