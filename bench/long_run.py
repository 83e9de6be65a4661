"""Long runs: what a step and a page cost at 100, 1,000, 5,000 and 20,000 events.

One run per size is built for real: the solo team's coder, scripted to call read_file turn
after turn (five events a turn: ModelCalled, ModelResponded, BudgetDebited, ToolDispatched,
ToolReturned), flown in one session into the database, then projected. At each size, in one
process and one database so the figures sit side by side:

    cold step    drive_step, one turn a step, nothing kept warm (MINUTES_WARM_RUNS=0) and no
                 loop snapshot (MINUTES_SNAPSHOT_TURNS=0): read the run's history, replay it,
                 take the lease, one live turn, give the lease back, catch the projector up.
                 What every step cost before flights were kept warm and loops snapshotted.
    cold step from a snapshot
                 the same as shipped (a snapshot every MINUTES_SNAPSHOT_TURNS, 5, turns, kept
                 in the database): read the events before the loop and after its latest
                 snapshot, and replay only those; measured 1 to --repeats turns after the
                 snapshot at every size. What a step costs on a process that has not seen the
                 run (at worst 4 turns more to replay).
    warm step    the same with the run's flight parked in this process: no history read or
                 replayed. The per-step overhead of a run driven on its worker.
    warm, lease not read
                 the warm step without the read of its lease before each tool (a writer whose
                 lease was taken over runs nothing): taken in turns with the warm step, what
                 that read costs.
    pages        the run page and each of its tabs, and the timeline's tail poll, as a
                 signed-in user (Django's test client: no HTTP, no server).
    stop, then go on
                 a person's interrupt and resume of the running run (services/runs.py).

Each figure is a median of --repeats, printed with its ratio to the 100-event figure; the
pages' and the steering's are taken in turns across the sizes. Then a
whole 1,000-event run, driven step by step as a worker drives it (in this process: the
worker's work without the broker), as shipped, one turn a step warm, and one turn a step cold
(as before), against the same run flown in one session.

SQLite in a temp dir by default; --postgres for a private PostgreSQL cluster (fsync on),
ANALYZEd after each run is built, as autovacuum would.

    .venv/bin/python bench/long_run.py [--sizes 100,1000,5000,20000] [--repeats 5] [--postgres]
                                       [--cpu]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--sizes", default="100,1000,5000,20000", help="events per run")
PARSER.add_argument("--repeats", type=int, default=5, help="measurements per figure (medians)")
PARSER.add_argument("--postgres", action="store_true", help="a private PostgreSQL, not SQLite")
PARSER.add_argument("--whole", type=int, default=1000, help="events in the whole-run comparison")
PARSER.add_argument("--no-workers", action="store_true", help="skip the run on a real worker")
PARSER.add_argument(
    "--cpu", action="store_true", help="pages and steps in this process's CPU time (SQLite)"
)

SCENARIO = "bench-long"
TABS = ("timeline", "threads", "audit", "bill", "findings")
TURN_EVENTS = 5


def sized_parser(doc: str | None) -> argparse.ArgumentParser:
    """The arguments the benches of a step at several run sizes share."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,20000", help="events per run")
    parser.add_argument("--repeats", type=int, default=7, help="measurements per figure (medians)")
    parser.add_argument("--postgres", action="store_true", help="a private PostgreSQL, not SQLite")
    return parser


def configure(postgres: bool) -> Path:
    """Django on a store of the bench's own, migrated: its temp dir. On development settings
    (MINUTES_DEBUG=1), as these benches have always been measured."""
    store = setup(
        "long",
        postgres,
        sqlite="minutes.sqlite3",
        env={
            "MINUTES_DEBUG": "1",
            # The next steps are enqueued to nobody: the bench drives them.
            "CELERY_BROKER_URL": "memory://",
            "MINUTES_SANDBOX": "off",
        },
    )
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return store.work


def register_scenario(turns: int) -> None:
    """A coder that reads the same file `turns` times, then says it is done."""
    from runtime import flight
    from runtime.model import call
    from runtime.team import Scenario

    script = [call("read_file", 50, path="textparse/parser.py") for _ in range(turns)]
    flight.team_named("solo").scenarios[SCENARIO] = Scenario(
        name=SCENARIO,
        description="The benchmark's long run: read_file turn after turn.",
        task="Read the parser, again and again.",
        settings={"template": "parse-empty"},
        scripts={"coder": [*script, call("done", 10, summary="read")]},
    )


def new_run(max_turns: int) -> str:
    from services import runs

    return runs.start_run("solo", SCENARIO, by="bench", max_turns=max_turns, allowance=10**9)


def grow(run_id: str, events: int) -> None:
    """Fly the run in one session until its stream holds about `events` events."""
    from django.conf import settings

    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from journal_store.snapshots import DatabaseSnapshots
    from runtime import flight
    from runtime.session import Session

    journal = DjangoJournal()
    stream = f"run-{run_id}"
    have = journal.version(stream)
    turns = max(0, (events - have) // TURN_EVENTS)
    if turns:
        recorded = [r.event for r in journal.read(stream)]
        config = flight.recorded_config(recorded, run_id)
        session = Session(  # keeping loop snapshots as a worker does
            journal,
            run_id,
            recorded=recorded,
            steps=turns,
            snapshots=DatabaseSnapshots() if settings.SNAPSHOT_TURNS else None,
            snapshot_every=settings.SNAPSHOT_TURNS or 1,
        )
        flight.drive(session, config, settings.WORKSPACES)
    projection.catch_up()


# The clock the figures are read off: wall time, or with --cpu this process's CPU time (on
# SQLite the database runs in the process, so that is the whole cost, without the neighbours'
# on a shared machine).
CLOCK: Callable[[], float] = time.perf_counter


def median_ms(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = CLOCK()
        work()
        times.append((CLOCK() - started) * 1000)
    return statistics.median(times)


def step_figures(run_id: str, repeats: int) -> dict[str, float]:
    """One turn a step: cold (every step replays the run), cold from the loop's latest
    snapshot, and warm (its flight parked here)."""
    from django.conf import settings

    from journal_store.journal import DjangoJournal
    from journal_store.snapshots import DatabaseSnapshots
    from services import steps

    def step() -> object:
        outcome = steps.drive_step(run_id, "bench")
        assert outcome == "stepped", outcome
        return outcome

    settings.STEP_TURNS = 1
    settings.WARM_RUNS = 0
    # From a snapshot: first step the run (cold, as shipped) until its latest snapshot stands
    # at its last turn, so that at every size the measured steps replay the same few turns
    # since it (1 to `repeats`): what grows with the run, if anything, is then the rest.
    stream = f"run-{run_id}"
    kept = DatabaseSnapshots()
    for _ in range(2 * settings.SNAPSHOT_TURNS + 1):
        snap = kept.load(stream)
        if snap is not None and DjangoJournal().version(stream) - snap.version <= TURN_EVENTS:
            break
        step()
    snapshot = median_ms(step, repeats)
    shipped, settings.SNAPSHOT_TURNS = settings.SNAPSHOT_TURNS, 0
    cold = median_ms(step, repeats)
    settings.SNAPSHOT_TURNS = shipped
    settings.WARM_RUNS = 4
    step()  # the first step this process drives of the run replays it and parks the flight
    # The warm step, and beside it, in turns, the same without the read of the lease before
    # each tool (runtime/fenced.check_standing): what that fence costs a step.
    from runtime import session

    fenced, unfenced = [], []
    for _ in range(repeats):
        fenced.append(median_ms(step, 1))
        session.check_standing, kept = (lambda journal: None), session.check_standing
        try:
            unfenced.append(median_ms(step, 1))
        finally:
            session.check_standing = kept
    steps.WARM.clear()
    return {
        "cold step": cold,
        "cold, from a snapshot": snapshot,
        "warm step": statistics.median(fenced),
        "warm, lease not read": statistics.median(unfenced),
    }


def page_work(client: object, run_id: str) -> dict[str, Callable[[], object]]:
    """Each page and poll of the run, as a signed-in user's htmx request."""
    from journal_store.models import StoredEvent

    last = (
        StoredEvent.objects.filter(run_id=run_id)
        .order_by("-position")
        .values_list("position", flat=True)[0]
    )
    first_result = (
        StoredEvent.objects.filter(run_id=run_id, kind="ToolReturned")
        .order_by("position")
        .values_list("position", flat=True)[0]
    )
    pages = {
        "run page": f"/runs/{run_id}/",
        **{f"{tab} tab": f"/runs/{run_id}/tabs/{tab}" for tab in TABS},
        "timeline, latest": f"/runs/{run_id}/tabs/timeline?latest=1",
        "timeline, 2 kinds+lease": (
            f"/runs/{run_id}/tabs/timeline?kind=ToolReturned&kind=ModelResponded&infra=1"
        ),
        "tail poll, idle": f"/runs/{run_id}/tail?after={last}",
        "tail poll, 5 new": f"/runs/{run_id}/tail?after={last - 5}",
        "header poll": f"/runs/{run_id}/header",
        "fork page": f"/runs/{run_id}/fork?at={first_result}",
    }
    work: dict[str, Callable[[], object]] = {}
    for name, url in pages.items():

        def get(url: str = url) -> None:
            response = client.get(url, headers={"HX-Request": "true"})  # type: ignore[attr-defined]
            assert response.status_code in (200, 204, 286), (url, response.status_code)

        work[name] = get
    return work


def steering_work(run_id: str) -> dict[str, Callable[[], object]]:
    """A person's stop and go-on of a running run (services/runs.py, as the page's buttons, the
    API and the commands call it): where the run stands is read, then one request written."""
    from services import runs

    def stop_and_go_on() -> None:
        runs.interrupt(run_id, "bench", "a look")
        runs.resume(run_id, "bench", "go on")

    return {"stop, then go on": stop_and_go_on}


def interleaved(
    works: dict[int, dict[str, Callable[[], object]]], repeats: int
) -> dict[str, dict[int, float]]:
    """The median of each figure at each size, measured in turns across the sizes (100, then
    20,000, then 100 again...): a machine whose load changes while the bench runs moves every
    size's figure alike, not the ratio between them."""
    sizes = list(works)
    figures: dict[str, dict[int, float]] = {}
    for name in works[sizes[0]]:
        samples: dict[int, list[float]] = {size: [] for size in sizes}
        for size in sizes:
            works[size][name]()  # warm the caches a user's second look would find warm
        for _ in range(repeats):
            for size in sizes:
                started = CLOCK()
                works[size][name]()
                samples[size].append((CLOCK() - started) * 1000)
        figures[name] = {size: statistics.median(samples[size]) for size in sizes}
    return figures


def whole_run(events: int) -> dict[str, float]:
    """One run to `events` events: in one session, and step by step as a worker drives it."""
    from django.conf import settings

    from journal_store.journal import DjangoJournal
    from services import steps

    turns = events // TURN_EVENTS
    register_scenario(turns)
    figures = {}
    started = time.perf_counter()
    grow(new_run(turns + 5), 10**9)
    figures["one session"] = time.perf_counter() - started
    ways = {
        "steps as shipped (100 turns, warm)": (100, 4),
        "one turn a step, warm": (1, 4),
        "one turn a step, cold (before)": (1, 0),
    }
    for label, (per_step, warm) in ways.items():
        settings.STEP_TURNS, settings.WARM_RUNS = per_step, warm
        run_id = new_run(turns + 5)
        started = time.perf_counter()
        while steps.drive_step(run_id, "bench") == "stepped":
            pass
        figures[label] = time.perf_counter() - started
        assert DjangoJournal().read(f"run-{run_id}")[-1].event.kind == "TeamFinished"
    return figures


def on_a_worker(events: int, home: Path) -> dict[str, float]:
    """The same run driven by a real worker process (one process, as `make run` starts them)
    on the embedded broker, from the first step's enqueue to its verdict in the journal."""
    import kombu.pools
    from django.conf import settings

    from config.broker import EmbeddedRedis
    from config.celery import app, worker_command
    from journal_store.journal import DjangoJournal

    turns = events // TURN_EVENTS
    broker = EmbeddedRedis(home / "worker-broker")
    broker.ensure()
    # Celery reads the broker from the environment before its settings: both must say it.
    os.environ["CELERY_BROKER_URL"] = broker.url
    app.conf.update(broker_url=broker.url)
    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None
    settings.CELERY_TASK_ALWAYS_EAGER = False
    figures = {}
    ways = {
        "a worker, as shipped": {},
        "a worker, one turn a step, warm": {"MINUTES_STEP_TURNS": "1"},
        "a worker, one turn a step, cold": {"MINUTES_STEP_TURNS": "1", "MINUTES_WARM_RUNS": "0"},
    }
    try:
        for label, extra in ways.items():
            command = worker_command(1, hostname="bench1@%h", loglevel="warning")
            command[command.index("config")] = "bench.long_app"
            env = {
                **os.environ,
                "CELERY_BROKER_URL": broker.url,
                "BENCH_LONG_TURNS": str(turns),
                **extra,
            }
            log = home / f"worker-{len(figures)}.log"
            proc = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                start_new_session=True,
                stdout=log.open("wb"),
                stderr=subprocess.STDOUT,
            )
            try:
                time.sleep(4)  # let it connect before timing
                started = time.perf_counter()
                run_id = new_run(turns + 5)  # enqueues its first step
                stream = f"run-{run_id}"
                journal = DjangoJournal()
                while True:
                    at = journal.version(stream)
                    last = journal.read(stream, after=at - 1)[-1].event
                    if last.kind == "TeamFinished":
                        break
                    if time.perf_counter() - started > 300:
                        tail = log.read_text(errors="replace")[-3000:]
                        raise SystemExit(f"{label}: no verdict within 300 s; {log}:\n{tail}")
                    time.sleep(0.02)
                figures[label] = time.perf_counter() - started
            finally:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)
    finally:
        broker.stop()
    return figures


def main() -> None:
    args = PARSER.parse_args()
    if args.cpu:
        global CLOCK
        CLOCK = time.process_time
    sizes = [int(s) for s in args.sizes.split(",")]
    home = configure(args.postgres)
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    register_scenario(max(sizes) // TURN_EVENTS + 200)
    user = get_user_model().objects.create_superuser("bench", "bench@example.com", "x" * 20)
    client = Client()
    client.force_login(user)
    clock = "CPU time of this process" if args.cpu else "wall clock"
    print(f"database: {connection.vendor}; medians of {args.repeats}; ms, {clock}")
    rows: dict[str, dict[int, float]] = {}
    works: dict[int, dict[str, Callable[[], object]]] = {}
    for size in sizes:
        run_id = new_run(max(sizes) // TURN_EVENTS + 100)
        started = time.perf_counter()
        grow(run_id, size)
        print(f"  built {size:,} events in {time.perf_counter() - started:.1f} s", flush=True)
        if connection.vendor == "postgresql":
            # As autovacuum would after a load this size: without statistics the planner takes
            # a 20,000-event run for a few rows, and reads them all to sort the timeline's page.
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        for name, value in step_figures(run_id, args.repeats).items():
            rows.setdefault(name, {})[size] = value
        works[size] = {**page_work(client, run_id), **steering_work(run_id)}
    rows |= interleaved(works, args.repeats)
    header = "".join(f"{size:>12,}" for size in sizes) + "   ratio"
    print(f"\n{'at this many events':<22}{header}")
    for name, by_size in rows.items():
        cells = "".join(f"{by_size[size]:>12.1f}" for size in sizes)
        print(f"{name:<22}{cells}{by_size[sizes[-1]] / by_size[sizes[0]]:>8.2f}")
    print(f"\nwhole run of {args.whole:,} events (s)")
    whole = whole_run(args.whole)
    if not args.no_workers:
        whole |= on_a_worker(args.whole, home)
    base = whole["one session"]
    for name, seconds in whole.items():
        print(f"  {name:<36}{seconds:>8.2f}   {seconds / base:>5.2f}x")


if __name__ == "__main__":
    main()
