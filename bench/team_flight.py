"""Where a scripted repo-fix first flight spends its wall time, and flights per minute.

One flight prepares a git workspace, runs five agents' loops on the scripted model (no model
time at all), runs pytest four times as subprocesses (the coder twice, the tester, the harness's
own suite check), commits and merges. Timers wrap the journal's appends, every pytest run and
every git command; the harness's own share is what is left:

    harness = wall - journal - pytest - git

Run in-process, several flights, medians. Target: the harness under 10% of a flight.

Every flight is flown twice, interleaved (the order alternates): with agent code in the
bubblewrap sandbox (as shipped), and with the operator's opt-out (the same allow-listed
environment and resource limits, no bwrap). The sandbox's share is the difference. Target: the
sandbox adds under 10% to a flight's wall time.

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
from runtime.sandbox import Sandbox
from runtime.team import Services

MODES = {"sandboxed": Sandbox(), "unsandboxed": Sandbox(required=False)}

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


def one_flight(root: Path, n: int, mode: str) -> dict[str, float]:
    spent.clear()
    run_id = f"r-bench-{mode}-{n}"
    journal = JsonlJournal(root / f"{run_id}.jsonl")
    sandbox = MODES[mode]
    config = flight.plan("repo-fix", "first-flight", run_id, sandbox=sandbox.required)
    started = time.perf_counter()
    outcome = flight.fly(journal, config, run_id, root, services=Services(sandbox=sandbox))
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
    samples: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in MODES:
            one_flight(Path(tmp), -1, mode)  # warm up imports, the page cache and the probe
        for n in range(args.flights):
            order = list(MODES) if n % 2 == 0 else list(reversed(MODES))
            for mode in order:
                for key, value in one_flight(Path(tmp), n, mode).items():
                    samples[mode][key].append(value)
    med = {m: {k: statistics.median(v) for k, v in samples[m].items()} for m in MODES}
    print(
        "repo-fix first-flight, scripted model, JsonlJournal with fsync; "
        f"{args.flights} flights per mode, interleaved, medians"
    )
    print(f"{'part':<10}" + "".join(f"{m + ' ms':>16}{'share':>8}" for m in MODES))
    for key in ("pytest", "git", "journal", "harness", "wall"):
        row = "".join(
            f"{med[m][key] * 1000:>16.1f}{med[m][key] / med[m]['wall']:>8.1%}" for m in MODES
        )
        print(f"{key:<10}{row}")
    boxed, bare = med["sandboxed"], med["unsandboxed"]
    print(f"flights per minute in-process: {60 / boxed['wall']:.1f} ({60 / bare['wall']:.1f} bare)")
    share = boxed["harness"] / boxed["wall"]
    print(
        "target: harness under 10% of a flight: "
        f"{'meets' if share < 0.10 else 'MISSES'} ({share:.1%})"
    )
    extra = boxed["wall"] / bare["wall"] - 1
    runs = 4  # pytest runs per flight: the coder twice, the tester, the suite check
    print(
        f"sandbox: {(boxed['wall'] - bare['wall']) * 1000:+.1f} ms per flight "
        f"({(boxed['pytest'] - bare['pytest']) * 1000 / runs:+.1f} ms per pytest run); "
        f"target: under 10% more wall time: {'meets' if extra < 0.10 else 'MISSES'} ({extra:+.1%})"
    )


if __name__ == "__main__":
    main()
