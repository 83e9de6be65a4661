"""The trace export's speed and memory, beside the JSONL export of the same run.

    json      otlp_json of a run of N events (one string): events/s, peak traced memory
    streamed  otlp_json_chunks of the same run, each chunk written to a sink and dropped (what
              a download streams): its memory is the fold's, not the output's
    protobuf  otlp_protobuf of the same run (one bytes object)
    protobuf streamed  otlp_protobuf_chunks of the same run, each chunk (a ResourceSpans of
              256 spans) written to a sink and dropped (what a download streams)
    protobuf before  with --before REV: the protobuf encoder as it was at git revision REV
              (runtime/otel/protobuf.py read from git, over today's fold), in the same rounds
    jsonl     the same records written as the journal's flat JSONL lines (runtime/flat.py), in
              the same process: the baseline the issue's target names ("at least half the speed
              of the JSONL export"); bench/store.py measures the database export separately
    push      the protobuf POSTed to a local receiver (a thread on loopback): pushes/s, MB/s

The run is a first flight (repo-fix), its agents' turns repeated under new agent names until
it holds N events: the shape of a real run (model calls, tool calls, messages), at any length.
Content is on (the default), so prompts and tool results are rebuilt, scrubbed and bounded.

Speed is taken in rounds: each round times every encoding once, one after another, on the
CPU time of this process (time.process_time: on a shared machine, wall time mostly measures
the neighbours); the figures are medians over the rounds, and "vs JSONL" is the median of
each round's ratio to the baseline timed in that round.

    PYTHONPATH=. .venv/bin/python bench/otel.py [--events 1000 20000] [--repeats 5] [--before REV]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import threading
import time
import tracemalloc
import types
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from runtime import flat, flight
from runtime.journal import MemoryJournal, Recorded
from runtime.otel import otlp_json, otlp_protobuf
from runtime.otel.encode import otlp_json_chunks
from runtime.otel.protobuf import otlp_protobuf_chunks
from runtime.otel.push import push

WORK = Path(tempfile.mkdtemp(prefix="minutes-bench-otel-"))
BASELINE = "JSONL (baseline)"


def template() -> list[Recorded]:
    memory = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", "r-bench")
    flight.fly(memory, config, "r-bench", WORK / "workspaces")
    return memory.read("run-r-bench")


def long_run(events: int) -> list[Recorded]:
    """A run of `events` events: the flight's first event, its middle repeated under new agent
    names and call ids, and its last event."""
    base = template()
    first, middle, last = base[0], base[1:-1], base[-1]
    out = [first]
    round_ = 0
    while len(out) < events - 1:
        for rec in middle:
            e = rec.event
            update: dict[str, Any] = {}
            if e.agent:
                update["agent"] = f"{e.agent}-{round_}"
            call_id = getattr(e, "call_id", None)
            if call_id:
                update["call_id"] = f"{call_id}-{round_}"
            at = len(out) + 1
            out.append(Recorded(rec.stream, at, at, e.model_copy(update=update)))
            if len(out) >= events - 1:
                break
        round_ += 1
    out.append(Recorded(last.stream, len(out) + 1, len(out) + 1, last.event))
    return out


def jsonl(records: list[Recorded]) -> int:
    size = 0
    for rec in records:
        size += len(flat.dumps(rec.event, rec.stream, rec.version)) + 1
    return size


def streamed(records: list[Recorded]) -> int:
    """The JSON written chunk by chunk to a sink that keeps only its length."""
    return sum(len(chunk) for chunk in otlp_json_chunks(records))


def streamed_protobuf(records: list[Recorded]) -> int:
    """The protobuf written chunk by chunk to a sink that keeps only its length."""
    return sum(len(chunk) for chunk in otlp_protobuf_chunks(records))


def encoder_at(rev: str) -> Callable[[list[Recorded]], bytes]:
    """otlp_protobuf as runtime/otel/protobuf.py was at git revision `rev`."""
    source = subprocess.run(
        ["git", "show", f"{rev}:runtime/otel/protobuf.py"],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout
    module = types.ModuleType("protobuf_before")
    exec(compile(source, f"{rev}:runtime/otel/protobuf.py", "exec"), module.__dict__)
    encode: Callable[[list[Recorded]], bytes] = module.otlp_protobuf
    return encode


def peak_memory(work: Callable[[], object]) -> int:
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def measure(
    encoders: dict[str, Callable[[], object]], count: int, repeats: int, against: str = BASELINE
) -> dict[str, tuple[float, float, int]]:
    """Per encoder: events/s and its speed relative to `against`'s (medians over `repeats`
    rounds, each round timing every encoder once), and peak traced memory (one more, traced,
    pass). Each encoder's times are kept in TIMES, by name."""
    times: dict[str, list[float]] = {name: [] for name in encoders}
    for _ in range(repeats):
        for name, work in encoders.items():
            started = time.process_time()
            work()
            times[name].append(time.process_time() - started)
    TIMES.clear()
    TIMES.update(times)
    base = times[against]
    out = {}
    for name, work in encoders.items():
        ratio = statistics.median(b / t for b, t in zip(base, times[name], strict=True))
        out[name] = (count / statistics.median(times[name]), ratio, peak_memory(work))
    return out


TIMES: dict[str, list[float]] = {}


def speedup(name: str, than: str) -> float:
    """The median over the last measure's rounds of `than`'s time over `name`'s."""
    return statistics.median(b / t for b, t in zip(TIMES[than], TIMES[name], strict=True))


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def push_rate(body: bytes, pushes: int) -> float:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    started = time.perf_counter()
    for _ in range(pushes):
        push(body, url)
    elapsed = time.perf_counter() - started
    httpd.shutdown()
    httpd.server_close()
    return pushes / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, nargs="+", default=[1_000, 20_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", help="a git revision: its protobuf encoder, measured too")
    args = parser.parse_args()
    before = encoder_at(args.before) if args.before else None
    print("| events | encoding | ev/s (CPU) | peak traced memory | size | vs JSONL |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in args.events:
        records = long_run(n)
        encoders: dict[str, Callable[[], object]] = {
            BASELINE: lambda records=records: jsonl(records),
            "OTLP/JSON": lambda records=records: otlp_json(records),
            "OTLP/JSON streamed": lambda records=records: streamed(records),
            "OTLP/protobuf": lambda records=records: otlp_protobuf(records),
            "OTLP/protobuf streamed": lambda records=records: streamed_protobuf(records),
        }
        if before is not None:
            encoders["OTLP/protobuf before"] = lambda records=records: before(records)
        json_size = len(otlp_json(records).encode())
        sizes = {
            BASELINE: jsonl(records),
            "OTLP/JSON": json_size,
            "OTLP/JSON streamed": json_size,
            "OTLP/protobuf": len(otlp_protobuf(records)),
            "OTLP/protobuf streamed": len(otlp_protobuf(records)),
        }
        if before is not None:
            sizes["OTLP/protobuf before"] = len(before(records))
        rows = measure(encoders, n, args.repeats)
        for name, (ev_s, ratio, peak) in rows.items():
            print(
                f"| {n:,} | {name} | {ev_s:,.0f} | {peak / 1e6:.1f} MB | "
                f"{sizes[name] / 1e6:.2f} MB | {ratio:.2f} |"
            )
        if before is not None:
            print(
                f"| {n:,} | protobuf speed-up over before, round by round: "
                f"{speedup('OTLP/protobuf', 'OTLP/protobuf before'):.2f} whole, "
                f"{speedup('OTLP/protobuf streamed', 'OTLP/protobuf before'):.2f} streamed |"
            )
    body = otlp_protobuf(long_run(1_000))
    rate = push_rate(body, 200)
    kb = len(body) / 1e3
    print(f"\npush of a 1,000-event run ({kb:.0f} kB protobuf) to a loopback receiver:")
    print(f"{rate:,.0f} pushes/s, {rate * len(body) / 1e6:.1f} MB/s")


if __name__ == "__main__":
    main()
