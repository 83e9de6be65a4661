"""What a round of the beat's effect reconciler (services/effects.py) costs as settled effects
pile up: it should cost what is in flight (issue #15: no cost may grow with a store's size).

Each --sizes is a store of its own holding that many settled effects (an EffectStarted and its
EffectSucceeded each, ten effects a run), its read models caught up, as the beat finds a store.
Then, in rounds, the sizes taken in turns, each round a new effect started long ago and never
settled (its worker died) before each line, so that each pass settles one effect:

    before    the round as it was before 2026-12-06 (kept here): every effect stream ever
              written read and decoded (reconciler.reconcile with no candidates, its
              read_prefix), the provider asked, the outcome appended, the read models caught up
    after     services.effects.reconcile: the open effects' rows (journal_store/open_effects.py)
              and the effect records since their checkpoint, each candidate's stream read (its
              first and last records), the provider asked, the outcome appended, caught up

The provider is the desk's refunds table (desk.services.effect_status): it has no record of the
key, so the effect is recorded as failed. Each pass is checked to settle exactly that effect.
Medians in ms, each size's ratio to the first size's, and the journal rows one pass turns into
records, all measured in the same run. Production settings (DEBUG off); SQLite by default (WAL,
synchronous=FULL, a file a size in a temp dir), --postgres for a private PostgreSQL cluster with
fsync on (a database a size), ANALYZEd after the load.

    PYTHONPATH=. .venv/bin/python bench/effects_reconcile.py [--sizes 100,20000] [--postgres]
"""

from __future__ import annotations

import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for bench and tests.services, run as a script

from bench.production_env import setup  # noqa: E402
from bench.streams_setup import analyze, parser, rows_read, sizes_of, stores  # noqa: E402

PARSER = parser(__doc__, "100,20000", "settled effects a store", repeats=None)
PARSER.add_argument("--rounds", type=int, default=21, help="rounds (medians)")
ARGS = PARSER.parse_args()
SIZES = sizes_of(ARGS.sizes)
STORE = setup("effects-reconcile", ARGS.postgres)

from django.db import connections  # noqa: E402

from desk.services import effect_status  # noqa: E402
from journal_store import open_effects, projection  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from runtime.coordination import reconciler  # noqa: E402
from runtime.coordination.effects import Ledger  # noqa: E402
from runtime.events import EffectStarted, EffectSucceeded  # noqa: E402
from runtime.journal import Batch  # noqa: E402
from services import effects  # noqa: E402

WAIT = 600.0  # the beat's EFFECT_PENDING_SECONDS
LONG_AGO = time.time() - 3_600  # the in-flight effects' start: past the wait


def started(key: str, run_id: str, t: float) -> EffectStarted:
    return EffectStarted(
        key=key, effect_type="refund", target="order:o-1", request_hash="h", run_id=run_id, t=t
    )


def seed(alias: str, size: int) -> None:
    """`size` settled effects, ten a run, then every read model caught up."""
    journal = DjangoJournal(alias)
    for start in range(0, size, 500):
        batches: list[Batch] = []
        for n in range(start, min(size, start + 500)):
            key, run_id = f"fx-{n:06d}", f"r-{n // 10:05d}"
            done = EffectSucceeded(key=key, run_id=run_id, result={"refund_id": f"rf-{n}"})
            batches.append((Ledger.stream(key), [started(key, run_id, LONG_AGO), done], 0))
        journal.append_batches(batches)
    projection.catch_up(using=alias)
    analyze(alias)


def before(alias: str) -> list[tuple[str, str]]:
    """services.effects.reconcile as it was before 2026-12-06: no candidates, so the
    reconciler reads every effect stream (reconciler.every_stream, the old read kept)."""
    settled = reconciler.reconcile(
        Ledger(DjangoJournal(alias)), lambda e: effect_status(e, alias), WAIT
    )
    if settled:
        projection.catch_up(using=alias)
    return [(key, str(status)) for key, status in settled]


CASES: dict[str, Callable[[str], list[tuple[str, str]]]] = {
    "before": before,
    "after": lambda alias: effects.reconcile(WAIT, alias),
}


def main() -> None:
    logging.getLogger("services.effects").setLevel(logging.ERROR)  # a line each pass settles
    aliases = stores(STORE, SIZES)
    for size in SIZES:
        began = time.perf_counter()
        seed(aliases[size], size)
        events = DjangoJournal(aliases[size]).last_position()
        print(f"seeded {size:,} settled effects ({events:,} events) in", end=" ")
        print(f"{time.perf_counter() - began:.1f} s")
    times: dict[str, dict[int, list[float]]] = {
        case: {size: [] for size in SIZES} for case in CASES
    }
    rows: dict[str, dict[int, int]] = {case: {} for case in CASES}
    made = [0]

    def in_flight(alias: str) -> str:
        """A new effect started long ago, never settled: what the pass must find."""
        made[0] += 1
        key = f"fx-lost{made[0]:05d}"
        DjangoJournal(alias).append(Ledger.stream(key), [started(key, "r-lost", LONG_AGO)], 0)
        return key

    for n in range(ARGS.rounds + 1):  # the first round warms, and is not kept
        for size in SIZES:
            alias = aliases[size]
            for case, work in CASES.items():
                key = in_flight(alias)
                began = time.perf_counter()
                found = work(alias)
                if n:
                    times[case][size].append((time.perf_counter() - began) * 1000)
                assert found == [(key, "unknown")], (case, size, found)
    for size in SIZES:
        alias = aliases[size]
        for case, work in CASES.items():
            key = in_flight(alias)
            passed: list[Any] = []
            rows[case][size] = rows_read(
                lambda w=work, a=alias, into=passed: into.extend(w(a))  # type: ignore[misc]
            )
            assert passed == [(key, "unknown")], (case, size, passed)
    assert open_effects.candidates(aliases[SIZES[0]]) == []
    vendor = connections[aliases[SIZES[0]]].vendor
    print(
        f"\n{vendor}, in-process, medians of {ARGS.rounds} rounds, the sizes in turns; ms, each "
        f"size's ratio to {SIZES[0]:,} settled effects, and the journal rows a pass decodes"
    )
    head = f"{SIZES[0]:>10,}" + "".join(f"{size:>10,}{'ratio':>7}" for size in SIZES[1:])
    print(f"{'settled effects':<16}{head}{'rows':>16}")
    for case in CASES:
        medians = {size: statistics.median(times[case][size]) for size in SIZES}
        first = medians[SIZES[0]]
        line = f"{first:>10.2f}" + "".join(
            f"{medians[size]:>10.2f}{medians[size] / first:>7.2f}" for size in SIZES[1:]
        )
        counted = "/".join(f"{rows[case][size]:,}" for size in SIZES)
        print(f"{case:<16}{line}{counted:>16}")


if __name__ == "__main__":
    main()
