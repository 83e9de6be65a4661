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
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def configure() -> None:
    home = Path(tempfile.mkdtemp(prefix="minutes-otel-live-"))
    os.environ.update(
        MINUTES_HOME=str(home),
        MINUTES_DEBUG="1",
        CELERY_BROKER_URL="memory://",  # steps and pushes are enqueued to nobody: we run them
        DJANGO_SETTINGS_MODULE="config.settings",
        MINUTES_SANDBOX="off",
        DATABASE_URL=f"sqlite:///{home / 'minutes.sqlite3'}",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.5)
    args = parser.parse_args()
    configure()
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
