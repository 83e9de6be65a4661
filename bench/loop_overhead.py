"""The runtime's own cost per agent turn, with the scripted model (no model time at all).

Each turn journals ModelCalled, ModelResponded, BudgetDebited, ToolDispatched and ToolReturned
and dispatches one trivial tool. The same loop runs on four journals in one process, so the
figures sit side by side on the same machine state:

    null        appends are accepted and dropped: the loop's cost without any journal (baseline)
    memory      MemoryJournal
    jsonl       JsonlJournal without fsync (the page cache only)
    jsonl+fsync JsonlJournal as shipped: fsync per appended batch

The journal's share of a turn is (t_journal - t_null) / t_journal. Medians of several runs.

    .venv/bin/python bench/loop_overhead.py [--turns 200] [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from runtime import loop
from runtime.budget import Budget
from runtime.events import Event
from runtime.journal import Journal, MemoryJournal, Recorded
from runtime.jsonl import JsonlJournal
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.tools import Tool, Toolbox, schema


class NullJournal:
    """Accepts every append and keeps nothing: the floor."""

    def append(self, stream: str, events: Sequence[Event], expected_version: int) -> list[Recorded]:
        return []

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        return []


def one_run(journal: Journal, turns: int) -> float:
    tools = [Tool("noop", "Nothing.", schema({"n": {"type": "integer"}}), lambda n=0: {"ok": n})]
    script = [call("noop", 50, n=i) for i in range(turns - 1)] + [call("done", 10)]
    agent = loop.Agent(
        "coder",
        ScriptedClient(script, "coder"),
        Toolbox(tools),
        "You are a bench.",
        max_turns=turns,
    )
    session = Session(journal, f"bench-{time.monotonic_ns()}")
    started = time.perf_counter()
    result = loop.run(agent, "Run the bench.", session, Budget(10**9))
    elapsed = time.perf_counter() - started
    assert result.status == "done" and result.turns == turns
    return elapsed / turns * 1e6


def measure(
    journals: dict[str, Callable[[Path], Journal]], turns: int, repeats: int
) -> dict[str, float]:
    """Median us/turn per journal. Runs are interleaved so drift hits every journal alike."""
    samples: dict[str, list[float]] = {name: [] for name in journals}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            for name, make in journals.items():
                samples[name].append(one_run(make(Path(tmp) / f"{name}-{i}.jsonl"), turns))
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    journals: dict[str, Callable[[Path], Journal]] = {
        "null": lambda p: NullJournal(),  # type: ignore[return-value]
        "memory": lambda p: MemoryJournal(),
        "jsonl": lambda p: JsonlJournal(p, fsync=False),
        "jsonl+fsync": lambda p: JsonlJournal(p),
    }
    measure(journals, 50, 2)  # warm up imports and caches
    figures = measure(journals, args.turns, args.repeats)
    floor = figures["null"]
    print(f"turns per run {args.turns}, runs {args.repeats}, medians")
    print(f"{'journal':<13}{'us/turn':>10}{'x null':>9}{'journal share':>15}")
    for name, us in figures.items():
        share = (us - floor) / us if name != "null" else 0.0
        print(f"{name:<13}{us:>10.1f}{us / floor:>9.2f}{share:>14.0%}")
    verdict = "meets" if figures["memory"] < 1000 else "MISSES"
    print(f"target: under 1000 us/turn on MemoryJournal: {verdict} ({figures['memory']:.0f} us)")


if __name__ == "__main__":
    main()
