"""What fanning out buys: three specialists at once against the same three one after another.

    speed-up   wall time of a support-triage run with its three specialists in parallel, against
               the same run with one specialist at a time (`parallel=1`), both over the three real
               MCP servers, with a model that takes --model-ms per answer (a stand-in for a real
               model's latency; the scripts are the scenario's)
    overhead   per specialist: the fan-out's time (first hand-off to the composed answer)
               minus its critical path (the slowest
               specialist's own run, from its RunStarted to its AgentFinished), divided by the
               number of specialists — planning, hand-off, collection, verification, recovery,
               composing, journalling

Medians of --repeats. The MCP servers start and stop once per run (reported apart).

    .venv/bin/python bench/fanout.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime import flight  # noqa: E402
from runtime.events import AgentFinished, AnswerComposed, RunStarted, WorkerHandedOff  # noqa: E402
from runtime.jsonl import JsonlJournal  # noqa: E402
from runtime.model import ModelClient, ModelResponse, ScriptedClient  # noqa: E402
from runtime.session import Session  # noqa: E402
from runtime.team import Services  # noqa: E402
from teams import TEAMS  # noqa: E402


class Slow(ModelClient):
    """The scenario's script, each answer after `seconds`: a model with a latency."""

    def __init__(self, script: list[ModelResponse], name: str, seconds: float) -> None:
        self.inner = ScriptedClient(script, name)
        self.seconds = seconds

    def complete(self, messages, tools):  # type: ignore[no-untyped-def]
        time.sleep(self.seconds)
        return self.inner.complete(messages, tools)


def one(parallel: int, seconds: float, work: Path, n: int) -> tuple[float, float, float]:
    """The fan-out's time (first hand-off to the composed answer), its critical path, and
    the rest of the run's wall time: starting and stopping the three servers (seconds)."""
    team = TEAMS["support-triage"]
    run_id = f"r-fan-{parallel}-{n}"
    config = flight.plan("support-triage", "broken-policy", run_id, parallel=parallel)
    scripts = team.scenarios["broken-policy"].scripts
    clients: dict[str, ModelClient] = {a: Slow(scripts[a], a, seconds) for a in team.agents}
    journal = JsonlJournal(work / f"{run_id}.jsonl")
    started = time.perf_counter()
    team.fly(Session(journal, run_id), config, clients, work, Services())
    wall = time.perf_counter() - started
    streams: dict[str, list] = {}
    for rec in journal.read_all():
        streams.setdefault(rec.stream, []).append(rec.event)
    run = streams.pop(f"run-{run_id}")
    handed = next(e.t for e in run if isinstance(e, WorkerHandedOff))
    answered = next(e.t for e in run if isinstance(e, AnswerComposed))
    critical = max(
        next(e.t for e in events if isinstance(e, AgentFinished))
        - next(e.t for e in events if isinstance(e, RunStarted))
        for events in streams.values()
    )
    return answered - handed, critical, wall - (answered - handed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--model-ms", type=float, default=200.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="minutes-bench-fanout-"))
    seconds = args.model_ms / 1000
    results = {}
    for parallel in (1, 3):
        trials = [one(parallel, seconds, work, n) for n in range(args.repeats)]
        results[parallel] = [statistics.median(t[i] for t in trials) for i in range(3)]
    seq, par = results[1][0], results[3][0]
    crit = results[3][1]
    print(
        f"support-triage, 3 specialists over 3 real MCP servers, model {args.model_ms:g} ms "
        f"per answer; medians of {args.repeats}\n(from the first hand-off to the composed "
        f"answer; starting and stopping the servers, {results[3][2] * 1000:.0f} ms, apart)"
    )
    print(f"{'one at a time':<22}{seq * 1000:>9.0f} ms")
    print(f"{'three at once':<22}{par * 1000:>9.0f} ms")
    print(f"{'speed-up':<22}{seq / par:>9.2f}x")
    print(f"{'critical path':<22}{crit * 1000:>9.0f} ms (the slowest specialist)")
    print(f"{'overhead / specialist':<22}{(par - crit) * 1000 / 3:>9.1f} ms")


if __name__ == "__main__":
    main()
