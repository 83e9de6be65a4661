"""The local model's speed here, and what the runtime adds to a real-model turn.

    tokens/s   generation (completion tokens over the request's time, 128 tokens asked) and
               prompt processing (a ~1,000-token prompt, one token asked), straight to the
               server: the model's own speed, the baseline for everything else
    per turn   a solo-fix flight on the local model: the time each turn spends in the model
               (inside the client, both of its requests), in tools (ToolDispatched to
               ToolReturned), and the rest — the runtime: context assembly, validation,
               journalling with fsync, budget — as a share of the model's time

Needs `make local-model`. Medians of --repeats.

    .venv/bin/python bench/local_model.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime import flight  # noqa: E402
from runtime.events import ModelResponded, ToolDispatched, ToolReturned  # noqa: E402
from runtime.jsonl import JsonlJournal  # noqa: E402
from runtime.openai_client import OpenAIClient  # noqa: E402
from services import local_model  # noqa: E402

PORT = 8791


def post(base: str, body: dict) -> tuple[dict, float]:
    request = urllib.request.Request(
        base + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=300) as response:
        reply = json.loads(response.read())
    return reply, time.perf_counter() - started


def generation(base: str) -> float:
    reply, seconds = post(
        base,
        {
            "model": "local",
            "messages": [{"role": "user", "content": "Tell me a long story about a lighthouse."}],
            "max_tokens": 128,
            "temperature": 0.8,
        },
    )
    return reply["usage"]["completion_tokens"] / seconds


def prompt_processing(base: str, n: int) -> float:
    filler = " ".join(f"line {i}: the parser reads a record and checks it." for i in range(90))
    reply, seconds = post(
        base,
        {
            "model": "local",
            # A different opening each time, so the server's prompt cache cannot help.
            "messages": [{"role": "user", "content": f"Run {n}. {filler} Summarise."}],
            "max_tokens": 1,
        },
    )
    return reply["usage"]["prompt_tokens"] / seconds


class Timed:
    """Wraps OpenAIClient.complete to add up the time spent inside the model client."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.original = OpenAIClient.complete
        timed = self

        def complete(client, messages, tools):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return timed.original(client, messages, tools)
            finally:
                timed.seconds += time.perf_counter() - started

        OpenAIClient.complete = complete  # type: ignore[method-assign]


def one_flight(turns: int, timed: Timed, work: Path, n: int) -> tuple[float, float, float, int]:
    """Seconds per turn in the model, in tools, and in the runtime; and the turns flown."""
    run_id = f"r-bench-{n}"
    config = flight.plan("solo", "solo-fix", run_id, model="local", max_turns=turns)
    journal = JsonlJournal(work / f"{run_id}.jsonl")
    timed.seconds = 0.0
    started = time.perf_counter()
    flight.fly(journal, config, run_id, work / "ws")
    total = time.perf_counter() - started
    events = [r.event for r in journal.read(f"run-{run_id}")]
    dispatched = {e.call_id: e.t for e in events if isinstance(e, ToolDispatched)}
    tools = sum(
        e.t - dispatched[e.call_id]
        for e in events
        if isinstance(e, ToolReturned) and e.call_id in dispatched
    )
    flown = sum(1 for e in events if isinstance(e, ModelResponded)) or 1
    runtime = total - timed.seconds - tools
    return timed.seconds / flown, tools / flown, runtime / flown, flown


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--turns", type=int, default=6, help="turn cap of each flight")
    args = parser.parse_args()
    why = local_model.missing()
    if why:
        sys.exit(why)
    base = f"http://127.0.0.1:{PORT}/v1"
    import os

    os.environ["MINUTES_LOCAL_MODEL_URL"] = base
    with local_model.LocalModelServer(base):
        generation(base)  # warm up: the first request loads the weights into the cache
        gen = statistics.median(generation(base) for _ in range(args.repeats))
        pp = statistics.median(prompt_processing(base, n) for n in range(args.repeats))
        print(f"local model (SmolLM2-135M Q4_1, 2 threads), medians of {args.repeats}")
        print(f"  generation           {gen:8.1f} tokens/s")
        print(f"  prompt processing    {pp:8.1f} tokens/s")
        print()
        timed = Timed()
        work = Path(tempfile.mkdtemp(prefix="minutes-bench-local-"))
        flights = [one_flight(args.turns, timed, work, n) for n in range(args.repeats)]
        model, tools, runtime = (statistics.median(f[i] for f in flights) for i in range(3))
        turns = sum(f[3] for f in flights)
        print(f"solo-fix on the local model, ms per turn, medians of {args.repeats} flights")
        print(f"({turns} turns in all)")
        print(f"{'model':>10}{'tools':>10}{'runtime':>10}{'runtime/model':>16}")
        print(
            f"{model * 1000:>10.0f}{tools * 1000:>10.0f}{runtime * 1000:>10.1f}"
            f"{runtime / model:>15.1%}"
        )


if __name__ == "__main__":
    main()
