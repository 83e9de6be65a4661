"""One decision on several dead letters against the same decisions taken one by one.

    PYTHONPATH=. .venv/bin/python bench/dashboard.py --keep          # seeds 10,000 runs, keeps them
    PYTHONPATH=. .venv/bin/python bench/decide_letters.py --reuse DIR

On a copy of the dashboard bench's database (the decisions are written: the copy is thrown
away), in-process, services/letters.py as the queue's page and the API call it: in each round,
one letter retried alone (`decide_letter`, the baseline: what a card's button does), then a
batch of letters retried at once (`decide_letters`, what the page's "Retry the chosen" does);
the rounds take turns. Each decision journals the letter's retry, catches the read models up
and asks the run's next step of a broker nobody reads (memory://). Printed: the median cost
of a letter alone and of a letter in a batch, and their ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.production_env import setup

PARSER = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
PARSER.add_argument("--reuse", type=Path, required=True, help="a --keep dashboard bench's dir")
PARSER.add_argument("--rounds", type=int, default=9, help="rounds, each one alone and a batch")
PARSER.add_argument("--batch", type=int, default=25, help="letters per batch (a page: 25)")
ARGS = PARSER.parse_args()
SOURCE = ARGS.reuse / "dashboard.sqlite3"
if not SOURCE.exists():
    PARSER.error(f"--reuse: no dashboard.sqlite3 in {ARGS.reuse} (run bench/dashboard.py --keep)")
WORK = Path(tempfile.mkdtemp(prefix="minutes-bench-letters-"))
shutil.copy(SOURCE, WORK / "dashboard.sqlite3")
# The runs' next steps go where nobody reads.
setup("letters", sqlite="dashboard.sqlite3", work=WORK, env={"CELERY_BROKER_URL": "memory://"})

from journal_store import projection, queues  # noqa: E402
from journal_store.models import DeadLetter, RunSummary  # noqa: E402
from services import letters  # noqa: E402


def main() -> None:
    try:
        projection.catch_up()
        waiting = list(
            DeadLetter.objects.filter(status=queues.OPEN)
            .order_by("position")
            .values_list("letter_id", flat=True)
        )
        need = ARGS.rounds * (1 + ARGS.batch)
        if len(waiting) < need:
            PARSER.error(f"{len(waiting)} open dead letters; {need} are needed")
        print(
            f"{RunSummary.objects.count():,} runs, {len(waiting):,} open dead letters; "
            f"{ARGS.rounds} rounds of one letter alone and a batch of {ARGS.batch}"
        )
        alone, in_batch = [], []
        for _ in range(ARGS.rounds):
            start = time.perf_counter()
            letters.decide_letter(waiting.pop(), "retry", "bench", "measured alone")
            alone.append(time.perf_counter() - start)
            batch = [waiting.pop() for _ in range(ARGS.batch)]
            start = time.perf_counter()
            found = letters.decide_letters(batch, "retry", "bench", "measured in a batch")
            in_batch.append((time.perf_counter() - start) / ARGS.batch)
            assert len(found.decided) == ARGS.batch and not found.refused, found.refused
        one, each = statistics.median(alone) * 1000, statistics.median(in_batch) * 1000
        print(f"{'a letter alone (ms)':<34}{one:>8.2f}")
        print(f"{'a letter in a batch (ms)':<34}{each:>8.2f}")
        print(f"{'in a batch / alone':<34}{each / one:>8.2f}")
        print(f"{'a batch of ' + str(ARGS.batch) + ' (ms)':<34}{each * ARGS.batch:>8.1f}")
    finally:
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
