"""What a step's reads of its run's control stream cost, at 100 and 20,000 control events
(issue #15: no per-step cost may grow with a run's length).

    step          what one drive step asks of services/control.py's Control before its turns:
                  parked_on (the open letter, the unreadable row), retried_at (the lease's
                  count of starts), stop_request (asked again at every turn), resumed_by
                  (a cold flight's); in a process that looked at the run before
    step, first look in a process
                  the same in a process that never looked at the run (parked_on folds the
                  stream once per process: services/parking.py)
    failing       Control.failing: the run page's and a dying step's read of the failures since
                  the run last moved
    requests      Control.requests: a stop's or a resume's read of the latest request

Each beside the same read as it was before 2026-12-06 (the control stream read whole, several
times: "(before)"). The control stream is a long run's with a flaky endpoint: three failed
steps and a letter a person retried (or, one in four, discarded), again and again; a stop and
a resume every 50 letters; a stall; then two failures since the run last moved. One run a
size, in one store; medians of --repeats rounds, the ratio of the largest size's figure to
the smallest's, and the journal rows each read turns into records. Production settings (DEBUG
off); SQLite by default (WAL, synchronous=FULL, a file in a temp dir), --postgres for a private
PostgreSQL cluster with fsync on, VACUUM ANALYZEd after the load.

    PYTHONPATH=. .venv/bin/python bench/control_reads.py [--sizes 100,20000] [--postgres]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.services: the private PostgreSQL cluster

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import caption, parser, sizes_of, table  # noqa: E402
from bench.typical_event import event as typical  # noqa: E402

ARGS = parser(__doc__, "100,20000", "control events", repeats=25).parse_args()
SIZES = sorted(sizes_of(ARGS.sizes))

setup("control-reads", ARGS.postgres)

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.control_before import (  # noqa: E402
    failing_before,
    parked_on_before,
    requests_before,
    resumed_by_before,
    retried_at_before,
    stop_request_before,
)
from journal_store.journal import DjangoJournal  # noqa: E402
from runtime import streams  # noqa: E402
from runtime.events import (  # noqa: E402
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    ErrorInfo,
    Event,
    ResumeRequested,
    RunStalled,
    StepFailed,
    StopRequested,
)
from services import parking  # noqa: E402
from services.control import Control  # noqa: E402


def control_events(run: str, size: int) -> list[Event]:
    """`size` events of a long run's control stream, ending two failures after a retry."""
    error = ErrorInfo(type="EndpointDown", message="the model endpoint did not answer")
    found: list[Event] = []
    letters = 0
    while len(found) < size - 3:
        found += [StepFailed(run_id=run, at_version=10, error=error) for _ in range(3)]
        letters += 1
        letter_id = f"{run}:control:{letters}"
        found.append(
            DeadLettered(run_id=run, letter_id=letter_id, reason="kept failing", attempts=3)
        )
        decided = DeadLetterDiscarded if letters % 4 == 0 else DeadLetterRetried
        found.append(decided(run_id=run, letter_id=letter_id, by="ann", reason="again"))
        if letters % 50 == 1:
            found.append(StopRequested(run_id=run, by="ann", reason="a look"))
            found.append(ResumeRequested(run_id=run, by="bob", reason="go on"))
        if letters == 10:
            found.append(RunStalled(run_id=run, since=1.0, why="lease expired"))
    found = found[: size - 3]
    found.append(DeadLetterRetried(run_id=run, letter_id=f"{run}:control:{letters}", by="ann"))
    found += [StepFailed(run_id=run, at_version=10, error=error) for _ in range(2)]
    return found


def seed(journal: DjangoJournal, run: str, size: int) -> None:
    journal.append(streams.journal(run), [typical(run, n) for n in range(10)], 0)
    events, stream = control_events(run, size), streams.control(run)
    for start in range(0, len(events), 1000):
        journal.append(stream, events[start : start + 1000], start)


def main() -> None:
    call_command("migrate", verbosity=0)
    journal = DjangoJournal()
    started = time.perf_counter()
    runs = {size: f"long-{size}" for size in SIZES}
    for size, run in runs.items():
        seed(journal, run, size)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    print(f"seeded {', '.join(f'{s:,}' for s in SIZES)} control events in", end=" ")
    print(f"{time.perf_counter() - started:.1f} s")

    def step(control: Control) -> None:
        assert control.parked_on() == (None, None)
        assert control.retried_at() > 0
        assert control.stop_request() is None and control.resumed_by() == "bob"

    def step_first(control: Control) -> None:
        parking._folds.clear()
        step(control)

    def step_before(control: Control) -> None:
        assert parked_on_before(control) == (None, None)
        assert retried_at_before(control) > 0
        assert stop_request_before(control) is None and resumed_by_before(control) == "bob"

    def failing(control: Control) -> None:
        found = control.failing()
        assert found is not None and found.tries == 2

    def failing_old(control: Control) -> None:
        assert failing_before(control).tries == 2  # type: ignore[union-attr]

    def requests(control: Control) -> None:
        assert isinstance(control.requests()[0].event, ResumeRequested)  # type: ignore[union-attr]

    def requests_old(control: Control) -> None:
        assert isinstance(requests_before(control)[0].event, ResumeRequested)  # type: ignore[union-attr]

    reads: dict[str, Callable[[Control], Any]] = {
        "step": step,
        "step, first look in a process": step_first,
        "step (before)": step_before,
        "failing": failing,
        "failing (before)": failing_old,
        "requests": requests,
        "requests (before)": requests_old,
    }
    controls = {size: Control(run, journal) for size, run in runs.items()}
    caption(ARGS.repeats)
    figures = {
        name: lambda size, read=read: lambda: read(controls[size]) for name, read in reads.items()
    }
    table(figures, SIZES, ARGS.repeats, "control events", 32)


if __name__ == "__main__":
    main()
