"""What PostgreSQL's search copies cost that a search page does not show
(journal_store/substrings.py): writing the runs' rows with the pieces indexes of short texts
and without them, and a queue's probe as the planner would run it and as PROBE
(`minutes_held`) runs it, on a copy VACUUMed (whose index pages the planner then counts) and on
one only ANALYZEd.

    PYTHONPATH=. .venv/bin/python bench/search_costs.py [--size 20000] [--repeats 5]

The runs are bench/words_tasks.py's (bench/store_rows.py's, a dead letter and a conflict each)
in a private PostgreSQL cluster. Writes: every run's row inserted in one statement into the
emptied table, its copy's trigger and trigram indexes included, with the pieces indexes and
without them, in turns; seconds, medians of --repeats rounds, and their ratio. Probes: the
dead letters' copy asked for the keys of up to substrings.FEW letters holding one letter's id,
"reply" (in every letter) or "wombat" (in none), on the copy as the seed left it (written once
and VACUUMed), then written again (the letters emptied and written back, as a rebuild of the
views writes them) and ANALYZEd, then VACUUMed, then with its indexes made again as
rebuild_projections makes them (substrings.compact); ms, medians of --repeats rounds, each the best
of 3 calls; "planned" is the same query (with its LIMIT) run as the planner plans it.
Autovacuum is off on the copy, so that each state stays as made.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402

PARSER = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
PARSER.add_argument("--size", type=int, default=20_000, help="runs in the store")
PARSER.add_argument("--repeats", type=int, default=5, help="rounds (medians)")
ARGS = PARSER.parse_args()
STORE = setup("search-costs", True, sqlite="unused.sqlite3")
WORK, PG_URL = STORE.work, STORE.postgres_url

from django.db import connection  # noqa: E402

from bench.words_tasks import seed  # noqa: E402
from journal_store import queues, substrings  # noqa: E402

# The probe with its LIMIT as the planner plans it: PROBE without its guess and its setting.
PLANNED = (
    "CREATE FUNCTION pg_temp.planned(probe text, texts text[], bound integer) RETURNS text[] "
    "LANGUAGE plpgsql AS $$ DECLARE keys text[]; BEGIN "
    "EXECUTE 'SELECT array_agg(key) FROM (' || probe || ' LIMIT $2) AS held (key)' "
    "USING texts, bound INTO keys; RETURN coalesce(keys, '{}'); END $$"
)


def ms(call: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def writes(repeats: int) -> dict[str, list[float]]:
    """Seconds to insert every run's row into the emptied table, with and without the pieces
    indexes, in turns; the indexes made again after each round without."""
    table = substrings.RUNS.table
    took: dict[str, list[float]] = {"with the pieces indexes": [], "without": []}
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMP TABLE staged AS SELECT * FROM {table}")
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname LIKE %s",
            [substrings.RUNS.words, "%\\_pieces"],
        )
        pieces = cursor.fetchall()
        assert len(pieces) == len(substrings.RUNS.columns), pieces

        def insert() -> float:
            cursor.execute(f"TRUNCATE {table}")
            start = time.perf_counter()
            cursor.execute(f"INSERT INTO {table} SELECT * FROM staged")
            return time.perf_counter() - start

        for _ in range(repeats):
            took["with the pieces indexes"].append(insert())
            for name, _ in pieces:
                cursor.execute(f"DROP INDEX {name}")
            took["without"].append(insert())
            for _, made in pieces:
                cursor.execute(made)
    return took


def probes(repeats: int) -> dict[str, list[float]]:
    """The dead letters' probes, planned and by PROBE: on the copy as the seed left it, then
    written again and ANALYZEd, then VACUUMed, then with its indexes made again."""
    searched = queues.DEAD_LETTERS.searched
    model = queues.DEAD_LETTERS.model._default_manager
    texts = {
        "a letter's id": model.order_by("position").values_list("pk", flat=True)[0],
        '"reply" (every letter)': "reply",
        '"wombat" (none)': "wombat",
    }

    def planned(said: list[str]) -> Any:
        probe, given = searched.probe(said)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_temp.planned(%s, %s::text[], %s)", [probe, given, substrings.FEW]
            )
            return cursor.fetchone()[0]

    def by_probe(said: list[str]) -> Any:
        return searched.few(said, "postgresql")

    def rewritten(cursor: Any) -> None:
        # The letters emptied and written again, as a rebuild of the views writes them: the
        # copy's indexes keep the first writing's entries until VACUUM cleans them.
        cursor.execute(f"CREATE TEMP TABLE letters AS SELECT * FROM {searched.table}")
        cursor.execute(f"TRUNCATE {searched.table}")
        cursor.execute(f"INSERT INTO {searched.table} SELECT * FROM letters")
        cursor.execute(f"ANALYZE {searched.words}")

    states = {
        "written once, VACUUMed": lambda cursor: None,  # as the seed leaves it
        "written again, ANALYZEd": rewritten,
        "written again, VACUUMed": lambda cursor: cursor.execute(
            f"VACUUM ANALYZE {searched.words}"
        ),
        # What rebuild_projections does once it has rebuilt: the indexes made again.
        "written again, made again": lambda cursor: substrings.compact([searched]),
    }
    took: dict[str, list[float]] = {}
    with connection.cursor() as cursor:
        cursor.execute(PLANNED)
        cursor.execute(f"ALTER TABLE {searched.words} SET (autovacuum_enabled = off)")
    for state, prepare in states.items():
        with connection.cursor() as cursor:
            prepare(cursor)
        for name, text in texts.items():
            said = substrings.variants(text)
            found = by_probe(said)
            # The same letters, where PROBE finds the text rare enough to look up.
            assert found is None or sorted(found) == sorted(planned(said)), name
        for _ in range(repeats):
            for name, text in texts.items():
                said = substrings.variants(text)
                for way, call in (("planned", planned), ("PROBE", by_probe)):
                    took.setdefault(f"{name}, {state}, {way}", []).append(
                        ms(lambda call=call, said=said: call(said))
                    )
    return took


def main() -> None:
    try:
        use = seed("costs", WORK, PG_URL, [ARGS.size])
        use(ARGS.size)  # Django's autocommit: VACUUM runs outside a transaction
        print(f"PostgreSQL, {ARGS.size:,} runs, medians of {ARGS.repeats} rounds")
        written = writes(ARGS.repeats)
        medians = {name: statistics.median(times) for name, times in written.items()}
        for name, median in medians.items():
            print(f"  insert every run's row, {name}: {median:.2f} s")
        ratio = medians["with the pieces indexes"] / medians["without"]
        print(f"  ratio, with / without: {ratio:.2f}")
        for name, times in probes(ARGS.repeats).items():
            print(f"  probe of {name}: {statistics.median(times):.2f} ms")
    finally:
        connection.close()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
