"""The tasks of the search benches' runs (bench/words_search.py, bench/anycase_search.py): a
sentence each of a small vocabulary, one run in a thousand holding "quokka", one in a hundred
"koala", one in fifty "wallaby" and one in twenty "numbat"; and their search indexes merged as
the beat's rounds leave them. Nothing of Django is imported until called."""

from __future__ import annotations

import random

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
