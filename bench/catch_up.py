"""Projection catch-up on long runs: what one batch costs as the run grows, and the throughput.

    batch     runs of 100, 1,000, 5,000 and 20,000 events in one database (a coder sent back
              round after round: each round a REQUEST, turns calling read_file, an edit, a test
              run, a DONE, a reviewer's turn and its REJECT, every message delivered; ~300
              bytes of tool call and result per turn), caught up. Then, interleaved over the
              sizes, --repeats times: append one 5-event batch carrying a thread message (a
              DONE, its delivery, the reviewer's start, a model call and its response) to the
              run and time `projection.catch_up()` (every projector, as a step or a page calls
              it). Medians, each with its ratio to the 100-event run's. And the idle catch-up:
              `catch_up()` with nothing to apply.
    rebuild   the runs projector rebuilt from position 0 over the same rows, in events/s,
              against a plain fold of the same rows in the same run (json.loads of each row's
              payload and a sum per kind, as bench/store.py measures it), against reading
              and validating the typed events alone, and against the floor of any projector
              that knows whose event it applies: the columns a fold is given, read as the
              projector reads them, and json.loads of the payload, without validation or fold.
              And the rebuild with every fold's step a no-op: what the projector costs
              around its folds, which no faster fold takes away; and the same with each
              payload json.loads'ed instead of validated into its typed event.
              Then the same over --flights more runs, repo-fix first flights (76 events each,
              as bench/store.py seeds them), added to the long runs. Each rate is the best of
              --rebuilds passes, the six rates taken in turns.

Production settings (MINUTES_DEBUG=0). SQLite (WAL, synchronous=FULL, a file in a temp dir)
by default; --postgres for a private PostgreSQL cluster with fsync on, started here from the
installed binaries.

    PYTHONPATH=. .venv/bin/python bench/catch_up.py [--postgres] [--repeats 15] [--cpu]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402

parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
parser.add_argument("--postgres", action="store_true", help="on PostgreSQL instead of SQLite")
parser.add_argument("--repeats", type=int, default=15, help="batches timed per run size")
parser.add_argument(
    "--sizes", default="100,1000,5000,20000", help="events in each run, comma-separated"
)
parser.add_argument("--flights", type=int, default=300, help="first flights for the rebuild")
parser.add_argument(
    "--cpu",
    action="store_true",
    help="time with this process's CPU time, not the wall clock: on a machine shared with other "
    "work the figures then measure the code, not the neighbours (on SQLite the database runs "
    "in this process; on PostgreSQL the server's time is left out, of ours and the baselines')",
)
parser.add_argument(
    "--rebuilds", type=int, default=3, help="passes of the rebuild (and its baselines), best kept"
)
ARGS = parser.parse_args()
clock = time.process_time if ARGS.cpu else time.perf_counter

WORK = setup("catch-up", ARGS.postgres).work

from django.core.management import call_command  # noqa: E402

from journal_store import projection  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from journal_store.journal_rows import from_row  # noqa: E402
from journal_store.models import StoredEvent  # noqa: E402
from runtime import events as ev  # noqa: E402
from runtime import flight  # noqa: E402
from runtime.events import Usage  # noqa: E402
from runtime.journal import MemoryJournal  # noqa: E402

PAYLOAD = 10  # the payload's column in journal_rows.SELECT
CONTENT = "def parse(text):\n    return [line.split(',') for line in text.splitlines()]\n" * 4


class Run:
    """One long run's events, written round after round; `turn` numbers calls and messages."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.stream = f"run-{run_id}"
        self.n = 0
        self.round = 0

    def e(self, cls: type[ev.Event], **fields: object) -> ev.Event:
        self.n += 1
        return cls(run_id=self.run_id, **fields)

    def turn(self, agent: str, tool: str, args: dict[str, object], result: object) -> list:
        call = f"call-{self.n}"
        common = {"agent": agent, "task_id": "T1", "turn": self.n}
        return [
            self.e(ev.ModelCalled, **common, messages=2 * self.round + 3),
            self.e(
                ev.ModelResponded,
                **common,
                text="",
                tool_calls=[{"id": call, "name": tool, "args": args}],
                usage=Usage(total=180, prompt=150, completion=30),
            ),
            self.e(ev.BudgetDebited, **common, amount=180),
            self.e(ev.ToolDispatched, **common, tool=tool, call_id=call, args=args),
            self.e(ev.ToolReturned, **common, tool=tool, call_id=call, result=result),
        ]

    def message(self, sender: str, recipient: str, performative: str, text: str) -> list:
        mid = f"m-{self.run_id}-{self.n}"
        common = {"task_id": "T1"}
        return [
            self.e(
                ev.MessageSent,
                **common,
                message_id=mid,
                performative=performative,
                sender=sender,
                recipient=recipient,
                payload={"text": text},
            ),
            self.e(ev.MessageDelivered, **common, message_id=mid, recipient=recipient),
        ]

    def start(self) -> list:
        return [
            self.e(
                ev.TeamStarted,
                team="repo-fix",
                scenario="long-run",
                task="fix the parser",
                config={"allowance": 10_000_000},
            )
        ]

    def rounds(self) -> list:
        """One round: the coder is asked, reads, edits, tests and says DONE; REJECTed."""
        self.round += 1
        out = self.message("orchestrator", "coder", "request", f"round {self.round}: fix it")
        out.append(self.e(ev.RunStarted, agent="coder", task_id="T1", task="fix the parser"))
        for i in range(3):
            path = f"textparse/part{i}.py"
            out += self.turn("coder", "read_file", {"path": path}, {"content": CONTENT})
        out += self.turn(
            "coder",
            "edit_file",
            {"path": "textparse/parser.py", "old": "a", "new": "b"},
            {"edited": "textparse/parser.py"},
        )
        out += self.turn("coder", "run_tests", {}, {"passed": 12, "failed": 0})
        out += self.batch()
        out += self.turn(
            "reviewer", "read_file", {"path": "textparse/parser.py"}, {"content": CONTENT}
        )
        out += self.message("reviewer", "coder", "reject", "the edge case is still open")
        return out

    def batch(self) -> list:
        """The timed batch: five events, one of them a thread message (and one its delivery)."""
        common = {"agent": "reviewer", "task_id": "T1"}
        return [
            *self.message("coder", "reviewer", "done", "fixed, tests pass"),
            self.e(ev.RunStarted, **common, task="review the fix"),
            self.e(ev.ModelCalled, **common, turn=self.n, messages=3),
            self.e(
                ev.ModelResponded,
                **common,
                turn=self.n,
                text="looking",
                tool_calls=[],
                usage=Usage(total=90, prompt=80, completion=10),
            ),
        ]


def build(journal: DjangoJournal, size: int) -> Run:
    run = Run(f"r-long-{size}")
    pending = run.start()
    version = 0
    while version + len(pending) < size:
        pending += run.rounds()
        if len(pending) >= 500 or version + len(pending) >= size:
            take = pending[: size - version]
            journal.append(run.stream, take, version)
            version += len(take)
            pending = pending[len(take) :]
    if version < size:
        journal.append(run.stream, pending[: size - version], version)
    return run


def seed_flights(journal: DjangoJournal, runs: int) -> None:
    """Fly one first flight in memory and store it `runs` times under new ids."""
    memory = MemoryJournal()
    config = flight.plan("repo-fix", "first-flight", "r-seed")
    flight.fly(memory, config, "r-seed", WORK / "workspaces")
    template = [r.event for r in memory.read("run-r-seed")]
    for n in range(runs):
        run = f"r-seed{n:05d}"
        events = [e.model_copy(update={"run_id": run, "id": uuid.uuid4().hex}) for e in template]
        journal.append(f"run-{run}", events, 0)


def timed(fn: Callable[[], object]) -> float:
    started = clock()
    fn()
    return (clock() - started) * 1000


def rebuild_without_folds(untyped: bool = False) -> int:
    """The rebuild with every fold's step a no-op: the read, the validation, the dispatch to
    the folds a kind concerns, the states loaded, compared and kept, the summaries written.
    What this costs, no faster fold can take away. `untyped`: each payload decoded by
    json.loads alone instead of validated into its event, as a projector that trusted its
    rows would."""
    for fold in projection.RUN_FOLDS:
        fold.step = lambda state, rec, out: None  # type: ignore[method-assign]
    if untyped:
        projection.from_row = lambda row: json.loads(row[PAYLOAD])  # type: ignore[assignment]
    try:
        return projection.rebuild(["runs"])
    finally:
        projection.from_row = from_row
        for fold in projection.RUN_FOLDS:
            del fold.step  # the class's step again


def rebuild_rates() -> tuple[int, float, float, float, float, float, float]:
    """Events/s of the rebuild, the rebuild without folds (validated, and untyped), the typed
    read, the untyped read and the plain fold: each the best of --rebuilds passes, the six
    taken in turns (on a shared machine a single pass of each measured the neighbours' load as
    much as the code)."""
    applied, ours, bare, trusting, typed_rate, untyped_rate, plain = 0, *[0.0] * 6
    for _ in range(ARGS.rebuilds):
        started = clock()
        applied = rebuild_without_folds()
        bare = max(bare, applied / (clock() - started))
        started = clock()
        applied = rebuild_without_folds(untyped=True)
        trusting = max(trusting, applied / (clock() - started))
        started = clock()
        applied = projection.rebuild(["runs"])
        ours = max(ours, applied / (clock() - started))
        journal = DjangoJournal()
        started = clock()
        typed = sum(1 for row in journal.rows("ORDER BY position", []) if from_row(row))
        typed_rate = max(typed_rate, typed / (clock() - started))
        # The floor of any projector that knows whose event it applies: the columns a fold
        # is given (run, agent, task, turn, time, stream, version, position) read as the
        # projector reads them, and json.loads of the payload; no validation, no fold.
        started = clock()
        untyped, after, top = 0, 0, journal.last_position()
        while after < top:  # batch by batch, with the projector's own read
            rows = projection.read("default", after, top, None, projection.BATCH)
            untyped += sum(1 for row in rows if json.loads(row[PAYLOAD]))
            after = rows[-1][projection.POSITION]
        untyped_rate = max(untyped_rate, untyped / (clock() - started))
        started = clock()
        folded: Counter[str] = Counter()
        count = 0
        rows = StoredEvent.objects.order_by("position").values_list("kind", "data")
        for kind, data in rows.iterator(chunk_size=2000):
            folded[kind] += len(json.loads(data))
            count += 1
        plain = max(plain, count / (clock() - started))
    return applied, ours, bare, trusting, typed_rate, untyped_rate, plain


def main() -> None:
    call_command("migrate", verbosity=0)
    sizes = [int(s) for s in ARGS.sizes.split(",")]
    journal = DjangoJournal()
    runs = {size: build(journal, size) for size in sizes}
    projection.catch_up()
    timings: dict[int, list[float]] = {size: [] for size in sizes}
    idle: list[float] = []
    for _ in range(ARGS.repeats):
        for size, run in runs.items():
            journal.append(run.stream, run.batch(), journal.version(run.stream))
            timings[size].append(timed(projection.catch_up))
            idle.append(timed(projection.catch_up))
    database = "PostgreSQL" if ARGS.postgres else "SQLite"
    first = statistics.median(timings[sizes[0]])
    print(f"catch-up of one 5-event batch carrying a thread message, {database}, ")
    print(f"medians of {ARGS.repeats}, interleaved over the runs")
    print(f"{'events in the run':>18}{'catch-up (ms)':>15}{'ratio':>8}")
    for size in sizes:
        median = statistics.median(timings[size])
        print(f"{size:>18,}{median:>15.2f}{median / first:>8.2f}")
    print(f"{'idle catch-up':>18}{statistics.median(idle):>15.2f}")
    print()
    print("rebuild of the runs projector over the same rows, against a plain json.loads fold")
    print("(each rate over the plain fold's in brackets; 'no folds' is the rebuild with every")
    print(" fold's step a no-op, 'untyped' the same with payloads json.loads'ed, not validated;")
    print(" 'columns + loads' is the floor of any projector: every column a fold is given read")
    print(" as the projector reads it, and json.loads of the payload)")
    print(
        f"{'rows':>20}{'events':>8}{'catch-up ev/s':>18}{'no folds':>18}"
        f"{'untyped':>18}{'typed read':>18}{'columns + loads':>18}{'plain fold':>12}"
    )
    for label in ("the long runs", f"+ {ARGS.flights} first flights"):
        if label != "the long runs":
            seed_flights(journal, ARGS.flights)
        applied, *rates, plain = rebuild_rates()
        shown = "".join(f"{rate:>11,.0f} ({rate / plain:.2f})" for rate in rates)
        print(f"{label:>20}{applied:>8,}{shown}{plain:>12,.0f}")


if __name__ == "__main__":
    main()
