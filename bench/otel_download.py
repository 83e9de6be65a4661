"""What a person's download of a run's OTLP trace holds in memory as the run grows.

For each size (by default about 100 and 20,000 events), a run of bench/long_run.py's shape is
flown into a SQLite database, as bench/otel_push.py does. Then its download is written whole
(the streamed response read to its end, each chunk dropped), each in a process of its own with
tracemalloc on, in two ways:

    after   dashboard/downloads.py as shipped: the records read a page at a time
            (journal_store.traces.paged) as the chunks are written
    before  the run's records read into one list first (traces.records), as the download did
            until the push and it read through `paged` alike

Figures, per size and way: Python's peak allocations while the file is made, and the bytes.

    PYTHONPATH=. .venv/bin/python bench/otel_download.py [--events 100 20000] [--protobuf]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(mode: str, run_id: str, protobuf: bool) -> None:
    """In a process of its own: write the download whole, printing its peak and size."""
    import tracemalloc

    import django

    django.setup()
    from dashboard import downloads
    from journal_store import traces
    from runtime import otel

    if mode == "before":

        def listed(run_id: str) -> Iterator[object] | None:
            records = traces.records(run_id)
            return None if otel.untimed(records) else iter(records)

        downloads.traced = listed  # type: ignore[assignment]
    tracemalloc.start()
    response = downloads.otlp(run_id, protobuf=protobuf)
    size = sum(len(chunk) for chunk in response.streaming_content)  # type: ignore[attr-defined]
    peak = tracemalloc.get_traced_memory()[1]
    print(json.dumps({"peak": peak, "bytes": size}))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, nargs="+", default=[100, 20_000])
    parser.add_argument("--protobuf", action="store_true")
    parser.add_argument("--measure", nargs=2, metavar=("MODE", "RUN"))
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure, protobuf=args.protobuf)
        return
    from long_run import configure
    from otel_push import build

    configure(postgres=False)
    from journal_store.journal import DjangoJournal

    mb = 1024 * 1024
    print("| events | download | bytes | peak traced |")
    print("|---:|---|---:|---:|")
    for n in args.events:
        started = time.perf_counter()
        run_id = build(n)
        events = DjangoJournal().version(f"run-{run_id}")
        print(f"({events:,} events flown in {time.perf_counter() - started:.1f} s)", flush=True)
        for mode in ("before", "after"):
            argv = [sys.executable, __file__, "--measure", mode, run_id]
            argv += ["--protobuf"] if args.protobuf else []
            done = subprocess.run(argv, capture_output=True, text=True, env=os.environ, check=False)
            if done.returncode:
                sys.exit(f"{mode} {run_id}: {done.stderr}")
            out = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"| {events:,} | {mode} | {out['bytes']:,} | {out['peak'] / mb:.2f} MB |")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))  # long_run.py and otel_push.py, beside this script
    main()
