"""What reading a run's trace pushes costs a run's end, a person asking and the run page, as
its traces stream grows.

The traces stream (`traces-<id>`) grows by a TraceBatchPushed per batch of each whole push and
by a claim and an outcome per live push. For each --events N, a run's stream is journalled
(SQLite, a temp dir) in one of two shapes:

    pushes  the whole trace pushed again and again: each push queued, ten batches, pushed
    live    live pushes (a claim and its outcome a step), then the end's push queued with
            three batches taken

and these reads timed, --rounds times each, the lengths in turns:

    whole_ledger  what the run's end and a person asking read (services/traces.py
                  `run_ended`, `ask_for_push`): by index, since 2026-12-06
    state         the run page's push status (journal_store/traces.py `state`): by index,
                  the live pushes' sum from the newest outcome's running total
    ledger        the whole stream read as a ledger (what both read before)

Figures: medians in ms and each one's ratio to the first length's, measured in the same run.

    PYTHONPATH=. .venv/bin/python bench/trace_ledger.py [--events 100 20000] [--rounds 41]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.production_env import setup

if TYPE_CHECKING:
    from runtime.events import Event

URL = "http://collector:4318"


def configure() -> None:
    setup("trace-ledger", sqlite="minutes.sqlite3", env={"CELERY_BROKER_URL": "memory://"})
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def shaped(shape: str, events: int) -> list[Event]:
    """`events` events of a traces stream of that shape (see the module's text)."""
    from runtime.events import (
        TraceBatchPushed,
        TracePushed,
        TracePushQueued,
        TraceSpansClaimed,
        TraceSpansPushed,
    )

    def batch(n: int) -> TraceBatchPushed:
        return TraceBatchPushed(
            endpoint=URL, first=8 * n, count=8, spans=8, bytes=4000, attempts=1, upto=1
        )

    out: list[Event] = []
    if shape == "pushes":
        while len(out) + 12 <= events:
            out.append(TracePushQueued(endpoint=URL, by="ann"))
            out += [batch(n) for n in range(10)]
            out.append(TracePushed(endpoint=URL, spans=80, bytes=40_000, attempts=1))
        out.append(TracePushQueued(endpoint=URL, by="ann"))
        out += [batch(n) for n in range(events - len(out))]
        return out
    first, tail = 0, 4  # the end's push queued and three batches, last
    while len(out) + 2 <= events - tail:
        out.append(TraceSpansClaimed(endpoint=URL, first=first, count=3))
        # Its running total, as traces.record stamps it (the bench appends in bulk).
        out.append(
            TraceSpansPushed(
                endpoint=URL, first=first, count=3, bytes=900, attempts=1, live=first + 3
            )
        )
        first += 3
    out.append(TracePushQueued(endpoint=URL))
    out += [batch(n) for n in range(events - len(out))]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, nargs="+", default=[100, 20_000])
    parser.add_argument("--rounds", type=int, default=41)
    args = parser.parse_args()
    configure()
    from journal_store import traces
    from journal_store.journal import DjangoJournal

    journal = DjangoJournal()
    reads: dict[str, Callable[[str], Any]] = {
        "whole_ledger": traces.whole_ledger,
        "state": traces.state,
        "ledger": traces.ledger,
    }
    times: dict[tuple[str, str, int], list[float]] = {}
    for shape in ("pushes", "live"):
        for n in args.events:
            run_id = f"r-{shape}-{n}"
            stream = f"traces-{run_id}"
            batch = [e.model_copy(update={"run_id": run_id}) for e in shaped(shape, n)]
            for start in range(0, len(batch), 500):
                journal.append(stream, batch[start : start + 500], start)
            # Other runs' streams beside it, as a store holds them.
            journal.append(f"run-{run_id}", shaped("pushes", 50), 0)
            # The index reads agree with the whole stream's.
            whole, book = traces.whole_ledger(run_id), traces.ledger(run_id)
            shown = traces.state(run_id)
            assert shown is not None and shown.get("live") == book.live_spans(), shown
            assert (whole.version, whole.last, whole.batches) == (
                book.version,
                book.last,
                book.batches,
            )
    for n_round in range(args.rounds + 1):  # the first warms, and is not kept
        for shape in ("pushes", "live"):
            for name, read in reads.items():
                for n in args.events:
                    started = time.perf_counter()
                    read(f"r-{shape}-{n}")
                    took = (time.perf_counter() - started) * 1000
                    if n_round:
                        times.setdefault((shape, name, n), []).append(took)
    first = args.events[0]
    head = f"{first:>10,}" + "".join(f"{n:>10,}{'ratio':>7}" for n in args.events[1:])
    print(f"sqlite, medians of {args.rounds} rounds, ms; each length's ratio to {first:,}")
    print(f"{'shape / read':<24}{head}")
    for shape in ("pushes", "live"):
        for name in reads:
            medians = {n: statistics.median(times[(shape, name, n)]) for n in args.events}
            row = f"{medians[first]:>10.3f}" + "".join(
                f"{medians[n]:>10.3f}{medians[n] / medians[first]:>7.2f}" for n in args.events[1:]
            )
            print(f"{shape + ' / ' + name:<24}{row}")


if __name__ == "__main__":
    main()
