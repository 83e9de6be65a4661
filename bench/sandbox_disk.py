"""What the sandbox's disk limit costs (runtime/sandbox_disk.py): one cheap look (a statvfs of
each writable directory's filesystem, done every TICK while a run goes), one walk of a big
workspace (done only once the filesystems grew by the limit), and a sandboxed run of `true`
with the watch and the pids cgroup against the same run before them (no watch: --bare).

The workspace is --files files of 1 KB in directories of 100, made once in a temp dir. Each
figure is the median of --repeats.

    PYTHONPATH=. .venv/bin/python bench/sandbox_disk.py [--files 100000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime import sandbox, sandbox_cgroup  # noqa: E402
from runtime.sandbox_disk import DiskWatch  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--files", type=int, default=100_000)
parser.add_argument("--repeats", type=int, default=7)
args = parser.parse_args()


def median_ms(work, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


base = Path(tempfile.mkdtemp(prefix="minutes-bench-disk-"))
try:
    workspace, scratch = base / "ws", base / "scratch"
    scratch.mkdir()
    for i in range(args.files):
        folder = workspace / f"d{i // 100}"
        if i % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{i}.txt").write_bytes(b"x" * 1024)
    places = {"its workspace": workspace, "its scratch directory": scratch}
    watch = DiskWatch(places, 512 << 20, 100_000, frozenset())
    look = median_ms(lambda: watch.grown(), args.repeats * 100)
    walk = median_ms(lambda: watch.walk(), args.repeats)
    # The walk counts only what changed since the watch began: all of it, for a fresh watch.
    fresh = DiskWatch(places, 512 << 20, 100_000, frozenset())
    fresh.since = 0
    added, made, _ = fresh.walk()
    counted, files = sum(added.values()), sum(made.values())
    print(f"{args.files:,} files; cheap look (statvfs x{len(watch.devices)}): {look:.4f} ms")
    print(
        f"walk: {walk:.0f} ms ({counted / 1e6:.0f} MB and {files:,} files and directories "
        "counted as new when all are)"
    )

    def true_run() -> None:
        sandbox.run(["true"], workspace=workspace, scratch=scratch, timeout=30, sandbox=box)

    box = sandbox.Sandbox()
    with_limits = median_ms(true_run, args.repeats)
    made = median_ms(lambda: sandbox_cgroup.create(64).end(), args.repeats)  # type: ignore[union-attr]
    print(f"sandboxed `true`, with the watch and the pids group: {with_limits:.1f} ms")
    print(f"of which the pids group's making and removal: {made:.2f} ms")
finally:
    shutil.rmtree(base)
