"""What an import's first reading costs a line, at two sizes of file, and the memory it holds.

journal_store/transfer.import_journal reads a file twice: first to check it, appending nothing
and taking no lock (`_Importer(dry=True)`), so that a file refused for what it holds is refused
before the lock every append waits on is taken; then to append it, under that lock. Since
2026-12-05 (e3f96a1) the first reading checks event ids too, as the store would: it asks the
store for each chunk's ids (500 lines) and keeps the ids the file would append
(journal_store/import_ids.py, FileIds: 16 bytes a line and an index of line numbers), to find
an id the file repeats or the store holds.

The file: --lines lines (and with --max, as many as an import reads, IMPORT_MAX_LINES), each
a new event of one new run with no id of its own (its id is derived from the file's
fingerprint, each its own): the most ids a file can make the first reading hold, in the
shortest lines (the largest file is then within IMPORT_MAX_BYTES). The store holds --stored
events of other runs beforehand, so the look-ups find an index that is not empty. SQLite in a
temp dir, production settings (no query log).

Measured, the sizes and the readings taken in turns in each of --repeats rounds (--max-repeats
at the largest size), the file read from disk each time:

    first reading   _Importer(dry=True).read, as shipped: µs a line, CPU time of this process
                    and wall time; medians.
    ids unchecked   the same reading with its flush as it was before e3f96a1 (the pending
                    events dropped, no id looked up or kept): what the first reading cost
                    before.
    keys unchecked
                    the same reading with each line's objects read as they were before a key
                    given twice was refused (2026-12-08): what that check costs a line.
    json.loads      json.loads of every line of the same file, nothing else: the floor under
                    any reading of it (the baseline).

and each one's peak memory once (tracemalloc, in a round of its own: tracing slows a reading
7-fold, so the --max file is not traced), in MB, and the bytes each line past the smallest
file's added to it; and what the first reading keeps for its lines once it has read the file
(the sizes of its arrays, at every size). "per line ratio" is the µs a line at each size over
that at the smallest: a cost that does not grow with the file is 1 (or less: the smallest
file's lines share the reading's fixed costs among fewer).

    PYTHONPATH=. .venv/bin/python bench/import_first_pass.py [--lines 1000,100000] [--max]
                                          [--repeats 5] [--max-repeats 3] [--stored 20000]

The defaults take a minute and a half; --max some four minutes more on a loaded 2-core
machine (the million-line file, 52 MB, read ten times).
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--lines", default="1000,100000", help="lines of each file, comma separated")
PARSER.add_argument("--max", action="store_true", help="and a file of IMPORT_MAX_LINES lines")
PARSER.add_argument("--repeats", type=int, default=5, help="rounds (medians)")
PARSER.add_argument("--max-repeats", type=int, default=3, help="rounds at --max's size")
PARSER.add_argument("--stored", type=int, default=20_000, help="events stored before (100 a run)")
ARGS = PARSER.parse_args()

WORK = setup("import-first-pass").work
atexit.register(shutil.rmtree, WORK, True)  # its files: 52 MB with --max

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from journal_store import import_reading, transfer  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from runtime import flat  # noqa: E402
from runtime.events import RunStarted  # noqa: E402
from runtime.journal import Batch  # noqa: E402

LINE = b'{"kind":"BudgetDebited","run_id":"r-im","amount":1}\n'


def write_file(lines: int) -> Path:
    path = WORK / f"{lines}.jsonl"
    with path.open("wb") as out:
        for start in range(0, lines, 10_000):
            out.write(LINE * min(10_000, lines - start))
    return path


def store(count: int) -> None:
    """`count` events of other runs, 100 a run."""
    journal = DjangoJournal()
    runs = [f"r-stored{n:05d}" for n in range(count // 100)]
    for start in range(0, len(runs), 50):
        batches: list[Batch] = [
            (f"run-{run}", [RunStarted(run_id=run, agent="coder", task="t") for _ in range(100)], 0)
            for run in runs[start : start + 50]
        ]
        journal.append_batches(batches)


TRACE = False  # the memory of a reading, not its time


def first_reading(path: Path) -> tuple[import_reading.Importer, tuple[float, float]]:
    """import_journal's first reading of the file, alone (its fingerprint taken before), and
    the (CPU, wall) seconds it took."""
    with path.open("rb") as source:
        fingerprint = transfer._fingerprint(source, settings.IMPORT_MAX_BYTES, path.name)
        if TRACE:
            tracemalloc.start()
        cpu, wall = time.process_time(), time.perf_counter()
        reading = import_reading.Importer(DjangoJournal(), fingerprint, None, None, dry=True)
        reading.read(source, False)
        return reading, (time.process_time() - cpu, time.perf_counter() - wall)


SHIPPED_FLUSH = import_reading.Importer.flush


def flush_before(self: import_reading.Importer) -> None:
    """_Importer.flush before e3f96a1: a first reading dropped what it would append."""
    if self.dry:
        self.pending = []
        return
    SHIPPED_FLUSH(self)


def checked(path: Path) -> tuple[float, float]:
    reading, spent = first_reading(path)
    assert not reading.problems, reading.problems.shown
    return spent


def unchecked(path: Path) -> tuple[float, float]:
    import_reading.Importer.flush = flush_before  # type: ignore[method-assign]
    try:
        return checked(path)
    finally:
        import_reading.Importer.flush = SHIPPED_FLUSH  # type: ignore[method-assign]


def keys_unchecked(path: Path) -> tuple[float, float]:
    """The first reading as it was before an object naming a key twice was refused: each line
    read by the decoder that keeps the last of two (flat._DECODER)."""
    once = flat._ONCE
    flat._ONCE = flat._DECODER
    try:
        return checked(path)
    finally:
        flat._ONCE = once


def plain_json(path: Path) -> tuple[float, float]:
    with path.open("rb") as source:
        if TRACE:
            tracemalloc.start()
        cpu, wall = time.process_time(), time.perf_counter()
        for raw in source:
            json.loads(raw)
        return time.process_time() - cpu, time.perf_counter() - wall


READINGS: dict[str, Callable[[Path], tuple[float, float]]] = {
    "first reading": checked,
    "ids unchecked (before)": unchecked,
    "keys unchecked (before)": keys_unchecked,
    "json.loads": plain_json,
}


def peak(reading: Callable[[Path], object], path: Path) -> int:
    """The most memory `reading` held at once, from the file's opening (bytes)."""
    global TRACE
    TRACE = True
    try:
        reading(path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        TRACE = False
        tracemalloc.stop()


def kept(reading: import_reading.Importer) -> int:
    """The bytes of what a first reading keeps for each line it would append: its FileIds (the
    ids and their index) and each stream's line numbers."""
    file = reading.ids.file
    assert file is not None
    lines = sum(sys.getsizeof(stream.lines) for stream in reading.streams.values())
    return sys.getsizeof(file.ids) + sys.getsizeof(file.slots) + lines


def refuses_a_repeat() -> None:
    """The first reading refuses a file whose last line repeats its first line's id."""
    repeated = WORK / "repeated.jsonl"
    ids = [f"{n:032x}" for n in range(1, 1_001)] + [f"{1:032x}"]
    repeated.write_text("".join(json.dumps({**json.loads(LINE), "id": i}) + "\n" for i in ids))
    said = first_reading(repeated)[0].problems.shown
    where = "(stream 'run-r-im', version 1)"
    assert said == [f"line 1001: field 'id': repeats the event id of line 1 {where}"], said


def main() -> None:
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    store(ARGS.stored)
    print(f"stored {ARGS.stored:,} events of other runs in {time.perf_counter() - started:.1f} s")
    refuses_a_repeat()
    largest = settings.IMPORT_MAX_LINES
    sizes = [int(s) for s in ARGS.lines.split(",")] + ([largest] if ARGS.max else [])
    files = {size: write_file(size) for size in sizes}
    held: dict[int, int] = {}
    for size, path in files.items():  # each file is good, and read once before timing
        assert path.stat().st_size <= settings.IMPORT_MAX_BYTES, size
        reading = first_reading(path)[0]
        assert not reading.problems and reading.report.events == size, reading.problems.shown
        held[size] = kept(reading)
        del reading
        print(f"file of {size:,} lines: {path.stat().st_size / 1e6:.1f} MB", flush=True)
    times: dict[tuple[str, int], list[tuple[float, float]]] = {}
    rounds = {size: ARGS.repeats for size in sizes} | (
        {largest: ARGS.max_repeats} if ARGS.max else {}
    )
    for round_ in range(max(rounds.values())):
        for size, path in files.items():
            if round_ < rounds[size]:
                for name, read in READINGS.items():
                    times.setdefault((name, size), []).append(read(path))
        print(f"  round {round_ + 1} done", flush=True)
    traced = [size for size in sizes if not (ARGS.max and size == largest)]
    peaks = {
        (name, size): peak(read, files[size]) for name, read in READINGS.items() for size in traced
    }
    first = sizes[0]

    def per_line(name: str, size: int, clock: int) -> float:
        return statistics.median(t[clock] for t in times[(name, size)]) / size * 1e6

    print(
        f"\nmedians of {ARGS.repeats} rounds ({ARGS.max_repeats} at the largest size with --max);"
        " µs a line, CPU time of this process and wall"
    )
    print(
        f"{'reading':<24}{'lines':>11}{'CPU µs/line':>13}{'per line ratio':>16}"
        f"{'wall µs/line':>14}{'/ json.loads':>14}"
    )
    for name in READINGS:
        for size in sizes:
            cpu, wall = per_line(name, size, 0), per_line(name, size, 1)
            growth = cpu / per_line(name, first, 0)
            base = per_line("json.loads", size, 0)
            print(
                f"{name:<24}{size:>11,}{cpu:>13.2f}{growth:>16.2f}{wall:>14.2f}{cpu / base:>14.2f}"
            )
    print(
        "\npeak traced memory (MB), and the bytes a line past the smallest file's added; what"
        " the first reading keeps for its lines at the end (its arrays, MB, bytes a line)"
        + ("; the largest file is not traced (tracing slows a reading 7-fold)" if ARGS.max else "")
    )
    print(
        f"{'reading':<24}{'lines':>11}{'peak MB':>10}{'B/line more':>13}"
        f"{'kept MB':>10}{'B/line':>8}"
    )
    for name in READINGS:
        for size in sizes:
            cells = ""
            if (name, size) in peaks:
                cells = f"{peaks[(name, size)] / 1e6:>10.2f}"
                more = (peaks[(name, size)] - peaks[(name, first)]) / (size - first or 1)
                cells += f"{more:>13.1f}" if size != first else " " * 13
            else:
                cells = " " * 23
            if name == "first reading":
                cells += f"{held[size] / 1e6:>10.2f}{held[size] / size:>8.1f}"
            print(f"{name:<24}{size:>11,}{cells}".rstrip())


if __name__ == "__main__":
    main()
