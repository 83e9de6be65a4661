"""Where a scripted repo-fix first flight spends its wall time, and flights per minute.

One flight prepares a git workspace, runs five agents' loops on the scripted model (no model
time at all), runs pytest four times as subprocesses (the coder twice, the tester, the harness's
own suite check), commits and merges. Timers wrap the journal's appends, every pytest run and
every git command; the harness's own share is what is left:

    harness = wall - journal - pytest - git

Run in-process, several flights, medians. Target: the harness under 10% of a flight.

    .venv/bin/python bench/team_flight.py [--flights 7]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime import flight, workspace
from runtime.jsonl import JsonlJournal

spent: dict[str, float] = defaultdict(float)


def timed(category: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[category] += time.perf_counter() - started

    return wrapper


def instrument() -> None:
    # The tools and the harness look these up on the module at call time.
    workspace.pytest_run = timed("pytest", workspace.pytest_run)  # type: ignore[method-assign]
    workspace.git = timed("git", workspace.git)  # type: ignore[method-assign]
    JsonlJournal.append = timed("journal", JsonlJournal.append)  # type: ignore[method-assign]


def one_flight(root: Path, n: int) -> dict[str, float]:
    spent.clear()
    run_id = f"r-bench-{n}"
    journal = JsonlJournal(root / f"{run_id}.jsonl")
    config = flight.plan("repo-fix", "first-flight", run_id)
    started = time.perf_counter()
    outcome = flight.fly(journal, config, run_id, root)
    wall = time.perf_counter() - started
    assert outcome.status == "done", outcome
    parts = {"wall": wall, **spent}
    parts["harness"] = wall - spent["journal"] - spent["pytest"] - spent["git"]
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flights", type=int, default=7)
    args = parser.parse_args()
    instrument()
    samples: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        one_flight(Path(tmp), -1)  # warm up imports and the page cache
        for n in range(args.flights):
            for key, value in one_flight(Path(tmp), n).items():
                samples[key].append(value)
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(
        "repo-fix first-flight, scripted model, JsonlJournal with fsync; "
        f"{args.flights} flights, medians"
    )
    print(f"{'part':<10}{'ms':>9}{'share':>8}")
    for key in ("pytest", "git", "journal", "harness", "wall"):
        print(f"{key:<10}{med[key] * 1000:>9.1f}{med[key] / med['wall']:>8.1%}")
    print(f"flights per minute in-process: {60 / med['wall']:.1f}")
    share = med["harness"] / med["wall"]
    print(
        "target: harness under 10% of a flight: "
        f"{'meets' if share < 0.10 else 'MISSES'} ({share:.1%})"
    )


if __name__ == "__main__":
    main()
