"""What the journal's depth check costs an append (runtime/journal.py check_batch, which calls
runtime/events/base.py depth_problem on every event), beside what the same append pays anyway.

For each payload, in the same process and the same run, per event:

    depth       depth_problem(event): the walk of the event's nested data
    integers    integer_problem(event): the other per-event check of check_batch
    json        event.model_dump_json(): the encoding every store does for the same event
    append      MemoryJournal.append of a one-event batch (check_batch included)
    jsonl       JsonlJournal.append without fsync (the page cache only), one-event batches

Payloads: the agent loop's typical events (ModelCalled, a ModelResponded with one tool call,
BudgetDebited, ToolDispatched, a small ToolReturned), and tool results of about 100 KB: as one
string (a file's text, a test run's output), as a list of 1,000 small objects (a search's
hits), and as a list of 10,000 numbers; and a typed list field of 10,000 strings (a desk
check's problems). Each figure is the fastest of several repeats (as
timeit advises: on a shared machine other work only ever adds), the quantities taken in turn
within each repeat so that they see the same machine.

    .venv/bin/python bench/depth_walk.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's runtime, whichever one the virtualenv names

from runtime.events import (  # noqa: E402
    BudgetDebited,
    DeskChecked,
    Event,
    ModelCalled,
    ModelResponded,
    ToolDispatched,
    ToolReturned,
    depth_problem,
    integer_problem,
)
from runtime.events.base import CallData, Usage  # noqa: E402
from runtime.journal import MemoryJournal  # noqa: E402
from runtime.jsonl import JsonlJournal  # noqa: E402

TEXT_100K = "x = compute(y)  # a line of a file a tool read\n" * 2200
HITS_100K = [
    {"path": f"src/module_{i}.py", "line": i, "text": "def handler(request): return ok"}
    for i in range(1000)
]
NUMBERS_100K = list(range(10_000, 20_000))


def payloads() -> dict[str, Event]:
    call = CallData(id="c1", name="run_tests", args={"path": "tests/", "verbose": True})
    return {
        "ModelCalled": ModelCalled(agent="coder", turn=3, messages=12, window_chars=9000),
        "ModelResponded, 1 call": ModelResponded(
            agent="coder",
            turn=3,
            text="I will run the tests first.",
            tool_calls=[call],
            usage=Usage(total=812, prompt=700, completion=112),
        ),
        "BudgetDebited": BudgetDebited(agent="coder", turn=3, amount=812),
        "ToolDispatched": ToolDispatched(agent="coder", turn=3, tool="run_tests", args=call.args),
        "ToolReturned, small": ToolReturned(
            agent="coder", turn=3, tool="run_tests", result={"passed": 41, "failed": 1}
        ),
        "ToolReturned, 100 KB text": ToolReturned(agent="coder", tool="read", result=TEXT_100K),
        "ToolReturned, 100 KB hits": ToolReturned(agent="coder", tool="grep", result=HITS_100K),
        "ToolReturned, 100 KB numbers": ToolReturned(
            agent="coder", tool="nums", result=NUMBERS_100K
        ),
        # A typed list of plain items, which integer_problem walks (a tool's result it does not).
        "DeskChecked, 10,000 problems": DeskChecked(
            order={},
            refund_calls=0,
            effects=[],
            provider_refunds=[],
            refunded_cents=0,
            problems=[f"problem {i}: the ledger and the provider differ" for i in range(10_000)],
        ),
    }


def calls_for(work: Callable[[], object], least: float = 0.01) -> int:
    """How many calls of `work` last at least `least` seconds."""
    calls = 1
    while True:
        started = time.perf_counter()
        for _ in range(calls):
            work()
        if time.perf_counter() - started >= least:
            return calls
        calls *= 2


def per_call(work: Callable[[], object], calls: int) -> float:
    """Microseconds one call of `work` took, over `calls` calls."""
    started = time.perf_counter()
    for _ in range(calls):
        work()
    return (time.perf_counter() - started) / calls * 1e6


def appending(journal: MemoryJournal | JsonlJournal, event: Event) -> Callable[[], object]:
    counter = iter(range(10**9))

    def once() -> object:
        # A new id and stream each time: the same id again would be answered as a retry.
        n = next(counter)
        return journal.append(f"s-{n}", [event.model_copy(update={"id": f"e-{n}"})], 0)

    return once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    repeats = parser.parse_args().repeats
    folder = Path(tempfile.mkdtemp(prefix="depth-walk-"))
    print(f"fastest of {repeats}, microseconds per event")
    print(
        f"| {'event':<30} | {'JSON bytes':>10} | {'depth':>8} | {'integers':>8} | {'json':>8} "
        f"| {'append':>8} | {'jsonl':>8} | {'depth/append':>12} | {'depth/jsonl':>11} |"
    )
    for name, event in payloads().items():
        assert depth_problem(event) is None
        path = folder / "bench.jsonl"
        journals: dict[str, Callable[[], MemoryJournal | JsonlJournal]] = {
            "mem": MemoryJournal,
            "jl": lambda path=path: JsonlJournal(path, fsync=False),
        }
        works: dict[str, Callable[[], object]] = {
            "depth": lambda event=event: depth_problem(event),
            "ints": lambda event=event: integer_problem(event),
            "json": event.model_dump_json,
        }
        calls = {k: calls_for(w) for k, w in works.items()}
        calls.update({k: calls_for(appending(j(), event)) for k, j in journals.items()})
        path.unlink()
        timings: dict[str, list[float]] = {k: [] for k in calls}
        for _ in range(repeats):
            for k, work in works.items():
                timings[k].append(per_call(work, calls[k]))
            for k, journal in journals.items():
                timings[k].append(per_call(appending(journal(), event), calls[k]))
                path.unlink(missing_ok=True)
        m = {k: min(v) for k, v in timings.items()}
        size = len(json.dumps(event.model_dump()))
        print(
            f"| {name:<30} | {size:>10,} | {m['depth']:>8.2f} | {m['ints']:>8.2f} "
            f"| {m['json']:>8.2f} | {m['mem']:>8.2f} | {m['jl']:>8.2f} "
            f"| {m['depth'] / m['mem']:>12.0%} | {m['depth'] / m['jl']:>11.0%} |"
        )


if __name__ == "__main__":
    main()
