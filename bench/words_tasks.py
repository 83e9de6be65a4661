"""The tasks of the search benches' runs (bench/words_search.py, bench/anycase_search.py): a
sentence each of a small vocabulary, one run in a thousand holding "quokka", one in a hundred
"koala", one in fifty "wallaby" and one in twenty "numbat"; and their search indexes merged as
the beat's rounds leave them. Nothing of Django is imported until called."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

VERBS = ("fix", "make", "write", "read", "check", "merge", "review", "refund", "ship")
THINGS = ("parser", "test", "suite", "order", "invoice", "customer", "branch", "build")


def task(rng: random.Random, n: int) -> str:
    words = [f"{rng.choice(VERBS)} the {rng.choice(THINGS)} {rng.randrange(10_000)}"]
    words += [rng.choice(THINGS) for _ in range(rng.randrange(3, 20))]
    if n % 1000 == 7:
        words.append("for the quokka account")
    if n % 100 == 57:
        words.append("for the koala account")
    if n % 50 == 3:
        words.append("for the wallaby account")
    if n % 20 == 11:
        words.append("for the numbat account")
    return " ".join(words)


def merged() -> None:
    """The search indexes' segments merged, as the beat's rounds leave them (on SQLite: a round
    that merges nothing writes one change a table, its note of having looked)."""
    from django.db import connection

    from services import indexes

    if connection.vendor != "sqlite":
        return
    while True:
        changes = connection.connection.total_changes
        indexes.tidy()
        if connection.connection.total_changes - changes <= len(indexes.SEARCHED):
            return


def seed(
    prefix: str,
    work: Path,
    postgres_url: str | None,
    sizes: list[int],
    task_of: Callable[[random.Random, int], str] = task,
) -> Callable[[int], None]:
    """A store of bench/store_rows.py's runs for each size, their tasks `task_of`'s, its
    indexes as the beat's rounds leave them (SQLite) or as autovacuum does (PostgreSQL: its
    indexes' pages counted, substrings.PROBE); the function that makes a size's the
    connection's."""
    from django.db import connection

    from bench import store_rows
    from bench.streams_setup import sized_stores

    use = sized_stores(prefix, work, postgres_url, sizes)
    for size in sizes:
        use(size)
        rng = random.Random(size)
        runs = store_rows.runs_of(size, rng)
        for n, run in enumerate(runs):
            run.task = task_of(rng, n)
        store_rows.store(runs, rng)
        merged()
        if postgres_url:
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
    return use
