"""What coordination safety costs, side by side with baselines measured in the same run.

    ledger   time per side effect through the effect ledger (read the key's stream, append
             EffectStarted at version 0, call the provider, append the outcome) against what a
             tool without a ledger does: call the provider and journal the result in one append.
             Also a duplicate: the same key again, answered from the ledger without a call.
    CAS      compare-and-swap writes on one hot subject by 8 writer processes at once
             (read the fact, write it back on the version read; a lost race re-reads):
             successful writes/s and the share of attempts that lost, against 8 writers on 8
             subjects (nobody races) and 1 writer alone; and the hot subject again with losers
             waiting up to 5 ms before they retry. Every trial checks the end state: the
             counter each writer increments equals the number of writes that won, so no update
             was lost.

SQLite runs with WAL and synchronous=FULL; PostgreSQL is a private cluster with fsync on,
started here from the installed binaries. Medians of --repeats runs.

    .venv/bin/python bench/coordination.py
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402

# SQLite, and the private PostgreSQL cluster beside it where it is installed.
PG_URL = setup("coordination", beside=True).postgres_url

from django.core.management import call_command  # noqa: E402
from django.db import OperationalError, connections  # noqa: E402

from journal_store.journal import DjangoJournal  # noqa: E402
from runtime.coordination.effects import Ledger  # noqa: E402
from runtime.coordination.facts import Facts  # noqa: E402
from runtime.coordination.keys import effect_key  # noqa: E402
from runtime.events import ToolReturned  # noqa: E402
from runtime.journal import WrongExpectedVersion  # noqa: E402

ALIASES = ["default"] + (["postgres"] if PG_URL else [])
NAMES = {"default": "SQLite", "postgres": "PostgreSQL"}


def provider(key: str) -> dict[str, Any]:
    """A provider that answers at once: the figures are the ledger's, not a network's."""
    return {"refund_id": "rf-" + key[3:15], "status": "issued"}


# --- the ledger ----------------------------------------------------------------------------------


def per_effect_ms(alias: str, count: int) -> tuple[float, float, float]:
    """Milliseconds per effect: through the ledger, a duplicate of one, and the baseline."""
    journal = DjangoJournal(alias)
    ledger = Ledger(journal)
    run = f"r-{uuid.uuid4().hex[:8]}"
    keys = [effect_key(run, f"T1/{n}", "order:4471", {"amount_cents": 1999}) for n in range(count)]

    started = time.perf_counter()
    for key in keys:
        ledger.perform(key, "refund", "order:4471", {"amount_cents": 1999}, provider, run_id=run)
    through_ledger = (time.perf_counter() - started) * 1000 / count

    started = time.perf_counter()
    for key in keys:
        ledger.perform(key, "refund", "order:4471", {"amount_cents": 1999}, provider, run_id=run)
    duplicate = (time.perf_counter() - started) * 1000 / count

    started = time.perf_counter()
    for n, key in enumerate(keys):
        result = provider(key)
        event = ToolReturned(
            run_id=run,
            agent="support-agent",
            turn=n,
            call_id=f"c{n}",
            tool="issue_refund",
            result=result,
        )
        journal.append(f"plain-{run}-{n}", [event], 0)
    plain = (time.perf_counter() - started) * 1000 / count
    return through_ledger, duplicate, plain


# --- compare-and-swap under contention -----------------------------------------------------------


def writer(
    alias: str, subject: str, seconds: float, barrier: Any, out: Any, name: str, backoff: float
) -> None:
    """Increment the subject's counter by CAS until the time is up; report wins and losses."""
    connections.close_all()  # never share the parent's connection
    facts = Facts(DjangoJournal(alias))
    wins = losses = busy = 0
    barrier.wait()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        fact = facts.read(subject)
        try:
            facts.write(subject, "count", fact.values.get("count", 0) + 1, fact.version, by=name)
            wins += 1
        except WrongExpectedVersion:
            losses += 1
            if backoff:  # as a real agent would: it re-decides before it writes again
                time.sleep(random.uniform(0, backoff))
        except OperationalError:  # SQLite's busy timeout ran out: counted, never hidden
            busy += 1
    connections.close_all()
    out.put((subject, wins, losses, busy))


def contend(
    alias: str, writers: int, subjects: int, seconds: float, backoff: float = 0.0
) -> dict[str, float]:
    """`writers` processes spread over `subjects` fresh subjects, for `seconds`."""
    context = mp.get_context("fork")
    barrier = context.Barrier(writers)
    out = context.Queue()
    tag = uuid.uuid4().hex[:6]
    names = [f"order-{tag}-{n}" for n in range(subjects)]
    connections.close_all()  # the children fork from a parent holding no connection
    procs = [
        context.Process(
            target=writer,
            args=(alias, names[n % subjects], seconds, barrier, out, f"w{n}", backoff),
        )
        for n in range(writers)
    ]
    for p in procs:
        p.start()
    reports = [out.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join()
        assert p.exitcode == 0, f"writer exited with {p.exitcode}"
    wins = sum(r[1] for r in reports)
    losses = sum(r[2] for r in reports)
    busy = sum(r[3] for r in reports)
    facts = Facts(DjangoJournal(alias))
    for subject in names:
        fact = facts.read(subject)
        won_here = sum(r[1] for r in reports if r[0] == subject)
        # The check that makes the figure mean something: no update was lost or doubled.
        assert fact.values.get("count", 0) == won_here == fact.version, (subject, fact, won_here)
    attempts = wins + losses + busy
    return {
        "cas_per_s": wins / seconds,
        "lost_share": losses / attempts if attempts else 0.0,
        "busy": busy,
        "longest": max(facts.read(s).version for s in names),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--effects", type=int, default=300, help="effects per ledger trial")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of a CAS trial")
    parser.add_argument("--writers", type=int, default=8)
    args = parser.parse_args()
    for alias in ALIASES:
        call_command("migrate", database=alias, verbosity=0)

    print(f"effect ledger, ms per effect, medians of {args.repeats} x {args.effects} effects")
    print(f"{'database':<11}{'ledger':>9}{'duplicate':>11}{'plain':>8}{'ledger/plain':>14}")
    for alias in ALIASES:
        trials = [per_effect_ms(alias, args.effects) for _ in range(args.repeats)]
        ledger, duplicate, plain = (statistics.median(t[i] for t in trials) for i in range(3))
        print(
            f"{NAMES[alias]:<11}{ledger:>9.2f}{duplicate:>11.2f}{plain:>8.2f}"
            f"{ledger / plain:>14.2f}"
        )
    print()
    w = args.writers
    print(
        f"compare-and-swap, {args.seconds:g} s trials, medians of {args.repeats}; "
        "'lost' is the share of attempts that lost the race"
    )
    print(
        f"{'database':<11}{'shape':<24}{'CAS/s':>8}{'lost':>7}{'busy':>6}"
        f"{'versions':>10}{'vs alone':>10}"
    )
    for alias in ALIASES:
        shapes = [
            ("1 writer, 1 subject", 1, 1, 0.0),
            (f"{w} writers, {w} subjects", w, w, 0.0),
            (f"{w} writers, 1 hot subject", w, 1, 0.0),
            ("  same, losers back off", w, 1, 0.005),
        ]
        alone = None
        for label, writers, subjects, backoff in shapes:
            trials = [
                contend(alias, writers, subjects, args.seconds, backoff)
                for _ in range(args.repeats)
            ]
            cas = statistics.median(t["cas_per_s"] for t in trials)
            lost = statistics.median(t["lost_share"] for t in trials)
            busy = sum(int(t["busy"]) for t in trials)
            longest = max(int(t["longest"]) for t in trials)
            alone = alone or cas
            print(
                f"{NAMES[alias]:<11}{label:<24}{cas:>8,.0f}{lost:>7.0%}{busy:>6}"
                f"{longest:>10,}{cas / alone:>10.2f}"
            )


if __name__ == "__main__":
    main()
