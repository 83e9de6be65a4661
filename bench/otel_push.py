"""What the push of a run's whole trace at its end costs as the run grows: peak memory, the
largest body a collector is sent, how many bodies.

For each size (by default about 100 and 20,000 events), a run of bench/long_run.py's shape is
flown into a SQLite database to its end: the solo team's coder calling read_file turn after
turn (five events a turn, content on, so each model call's span carries its prompt window).
Then its end push is measured, each in a process of its own (so that one's memory is not the
next's), against a collector on loopback in this process that parses each body and drops it:

    after   services.traces.push as shipped: batches of at most MINUTES_OTLP_BATCH_SPANS spans
            and MINUTES_OTLP_BATCH_BYTES bytes (512, 1 MiB), encoded and sent one at a time
    before  the push as it was before batches (commit 7851c3c, kept here): the run's records
            read whole, every span folded and serialized into one body, one POST

Figures, per size and push: the push's peak memory, as the process's peak resident set above
what it held before the push (Linux: the peak is reset through /proc/self/clear_refs, so the
protobuf library's C memory counts too), and as Python's own allocations (tracemalloc, in a
separate process: tracing costs memory and time of its own); the largest body; the bodies and
spans sent; CPU time (in all, and per body). Each with its ratio to the same push at the first
size, measured in the same run.

    PYTHONPATH=. .venv/bin/python bench/otel_push.py [--events 100 20000] [--modes before after]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Counting(BaseHTTPRequestHandler):
    """A collector that takes every body: its size and spans are noted, the body dropped."""

    bodies: list[tuple[int, int]] = []

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        parsed = ExportTraceServiceRequest.FromString(body)
        spans = sum(len(s.spans) for r in parsed.resource_spans for s in r.scope_spans)
        Counting.bodies.append((len(body), spans))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def build(events: int) -> str:
    """A run of about `events` events, flown to its end."""
    from long_run import TURN_EVENTS, grow, new_run, register_scenario

    turns = max(1, (events - 15) // TURN_EVENTS)
    register_scenario(turns)
    run_id = new_run(turns + 10)
    grow(run_id, events + 100)
    return run_id


def before_push(run_id: str) -> str:
    """services.traces.push as it was before batches (7851c3c): the baseline, kept here to be
    measured beside the new one in the same run."""
    from journal_store import trace_fold, traces
    from runtime.events import TracePushed
    from runtime.otel.encode import folded
    from runtime.otel.protobuf import serialized
    from services import traces as trace_service

    book = traces.ledger(run_id)
    trace_fold.forget(run_id)
    here = trace_service.endpoint()
    went_live = {
        n for where, first, count in book.sent if where == here for n in range(first, first + count)
    }
    records = traces.records(run_id)
    spans = [s for n, s in enumerate(folded(records, traces.options())) if n not in went_live]
    body = serialized(spans)
    sent = trace_service.send(body)
    pushed = TracePushed(endpoint=here, spans=len(spans), bytes=len(body), attempts=sent.attempts)
    traces.record(run_id, pushed)
    return "pushed"


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def measure(mode: str, run_id: str, endpoint: str, traced: bool) -> None:
    """In a process of its own: queue the run's push and run it, printing its figures."""
    import tracemalloc

    import django

    django.setup()
    from django.conf import settings

    from journal_store import traces
    from runtime.events import TracePushQueued
    from services import traces as trace_service

    settings.OTLP_ENDPOINT = endpoint
    traces.record(run_id, TracePushQueued(endpoint=endpoint))
    push = trace_service.push if mode == "after" else before_push
    if traced:
        tracemalloc.start()
    else:
        Path("/proc/self/clear_refs").write_text("5")  # the peak resident set starts again
    held = status_kb("VmRSS")
    cpu = time.process_time()
    outcome = push(run_id)
    cpu = time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] if traced else (status_kb("VmHWM") - held) * 1024
    print(json.dumps({"outcome": outcome, "peak": peak, "cpu": cpu}))


def child(mode: str, run_id: str, endpoint: str, traced: bool) -> dict[str, float]:
    Counting.bodies = []
    argv = [sys.executable, __file__, "--measure", mode, run_id, endpoint]
    if traced:
        argv.append("--traced")
    done = subprocess.run(argv, capture_output=True, text=True, env=os.environ, check=False)
    if done.returncode:
        sys.exit(f"{mode} {run_id}: {done.stderr}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["outcome"] == "pushed", out
    sizes = [size for size, _ in Counting.bodies]
    return {
        "peak": out["peak"],
        "cpu": out["cpu"],
        "largest": max(sizes),
        "bodies": len(sizes),
        "spans": sum(spans for _, spans in Counting.bodies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, nargs="+", default=[100, 20_000])
    parser.add_argument("--modes", nargs="+", default=["before", "after"])
    parser.add_argument("--measure", nargs=3, metavar=("MODE", "RUN", "ENDPOINT"))
    parser.add_argument("--traced", action="store_true")
    args = parser.parse_args()
    if args.measure:
        mode, run_id, endpoint = args.measure
        measure(mode, run_id, endpoint, args.traced)
        return
    from long_run import configure

    configure(postgres=False)
    from journal_store.journal import DjangoJournal

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{httpd.server_address[1]}"
    figures: dict[tuple[str, int], dict[str, float]] = {}
    counted: dict[int, int] = {}
    for n in args.events:
        started = time.perf_counter()
        run_id = build(n)
        counted[n] = DjangoJournal().version(f"run-{run_id}")
        print(f"({counted[n]:,} events flown in {time.perf_counter() - started:.1f} s)", flush=True)
        for mode in args.modes:
            figures[(mode, n)] = child(mode, run_id, endpoint, traced=False)
            figures[(mode, n)]["traced"] = child(mode, run_id, endpoint, traced=True)["peak"]
    httpd.shutdown()
    first = args.events[0]
    mb = 1024 * 1024
    print(
        "\n| events | push | spans | bodies | largest body | peak RSS | peak traced | CPU s "
        f"| CPU ms a body | RSS vs {first:,} | traced vs {first:,} | largest vs {first:,} |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.events:
        for mode in args.modes:
            f, b = figures[(mode, n)], figures[(mode, first)]
            print(
                f"| {counted[n]:,} | {mode} | {f['spans']:,} | {f['bodies']:,} "
                f"| {f['largest'] / mb:.2f} MB | {f['peak'] / mb:.1f} MB "
                f"| {f['traced'] / mb:.1f} MB | {f['cpu']:.2f} "
                f"| {f['cpu'] * 1000 / f['bodies']:.1f} "
                f"| {f['peak'] / max(b['peak'], 1):.2f} | {f['traced'] / b['traced']:.2f} "
                f"| {f['largest'] / b['largest']:.2f} |"
            )


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))  # long_run.py, beside this script
    main()
