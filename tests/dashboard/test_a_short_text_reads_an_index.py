"""A search of one or two characters, too short for a trigram, is looked up in the indexes
too (journal_store/substrings.py), where one that few rows held read every row to say so: on
SQLite by the trigrams it starts (a text that ends a column starts one in the copy's TAIL),
on PostgreSQL by an index of each column's pieces. The rows named are every row the match
finds, on both databases, in the runs list and a queue, in every alphabet; a common text is
still walked."""

from __future__ import annotations

import pytest
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor

from journal_store import queues, substrings
from journal_store.models import DeadLetter, RunSummary
from tests.conftest import on_every_backend
from tests.dashboard.test_a_search_folds_every_alphabet import letters, stored

TASKS = {
    "r-aa01": "ends in zq",
    "r-aa02": "ZQ starts it",
    "r-aa03": "the middle xzqy",
    "r-aa04": "Q",
    "r-aa05": "plain words",
    "r-aa06": "a % and _ too",
    "r-aa07": "back\\",
    "r-aa08": "",
    "r-aa09": "Émile ΟΔΟΣΗ straẞe",
    "r-aa10": "ends in ς",
}
SHORT = ["zq", "ZQ", "q", "Q", "%", "_", "\\", "d ", " t", "e", "0", "8", "-a", "y", "ry"]
SHORT += ["é", "É", "\u03c3", "ς", "Σ", "ΣΗ", "ß", "ẞe", "aẞ"]  # folded as FTS5 folds them


def store(using: str, many: int = 0) -> None:
    stored(
        [*TASKS.items(), *((f"r-bb{n:04d}", f"the common task {n}") for n in range(many))], using
    )


@on_every_backend()
def test_a_short_text_is_looked_up_and_names_every_run_that_holds_it(alias):
    store(alias)
    vendor = connections[alias].vendor
    runs = RunSummary.objects.using(alias)
    for text in SHORT:
        want = set(runs.filter(substrings.RUNS.matched([text])).values_list("run_id", flat=True))
        named = substrings.RUNS.few([text], vendor, alias)
        assert named is not None, text  # looked up, not walked
        assert want <= set(named), (text, want, named)
        found = runs.filter(substrings.RUNS.holding([text], vendor, alias))
        assert set(found.values_list("run_id", flat=True)) == want, text
    # What the tail is for: the text ends a column, or is all of it.
    assert substrings.RUNS.few(["zq"], vendor, alias) is not None
    ends = runs.filter(substrings.RUNS.holding(["zq"], vendor, alias))
    assert set(ends.values_list("run_id", flat=True)) == {"r-aa01", "r-aa02", "r-aa03"}
    alone = runs.filter(substrings.RUNS.holding(["q"], vendor, alias))
    assert set(alone.values_list("run_id", flat=True)) == {"r-aa01", "r-aa02", "r-aa03", "r-aa04"}


@on_every_backend()
def test_a_common_short_text_is_walked(alias):
    store(alias, many=substrings.FEW)
    vendor = connections[alias].vendor
    assert substrings.RUNS.few(["e"], vendor, alias) is None
    assert substrings.RUNS.few(["zq"], vendor, alias) is not None


@pytest.mark.django_db
def test_every_text_but_an_empty_one_is_looked_up():
    for vendor in ("sqlite", "postgresql"):
        assert substrings.RUNS.indexed(["é", "e", "ab", "abc", "\U0010ffff"], vendor)
        assert not substrings.RUNS.indexed([""], vendor)
    assert not substrings.RUNS.indexed(["é"], "mysql")


@pytest.mark.django_db
def test_a_short_text_of_the_last_code_points_is_looked_up_on_sqlite():
    """The range of trigrams a text starts ends after its last character: past the last code
    point there is none, and past U+D7FF the next is U+E000."""
    stored([("r-last", "ends in \U0010ffff"), ("r-d7ff", "holds \ud7ff\ue000 and \ud7ff")])
    for text, want in (
        ("\U0010ffff", ["r-last"]),
        ("\ud7ff", ["r-d7ff"]),
        ("s \ud7ff", ["r-d7ff"]),
    ):
        assert substrings.RUNS.few([text], "sqlite") == want, text


@on_every_backend()
def test_a_queues_short_words_are_looked_up(alias):
    letters(TASKS, alias, errors=True)
    vendor = connections[alias].vendor
    items = DeadLetter.objects.using(alias)
    searched = queues.DEAD_LETTERS.searched
    for text in SHORT:
        want = set(items.filter(searched.matched([text])).values_list("pk", flat=True))
        named = searched.few([text], vendor, alias)
        assert named is not None and want <= set(named), (text, want, named)


@pytest.mark.django_db
def test_the_tail_follows_every_write():
    """SQLite's copy holds each column's end as the row now has it, through an update and a
    delete (the triggers), and a short text finds the row by it."""
    store("default")
    runs = RunSummary.objects
    runs.filter(run_id="r-aa05").update(task="plain words, now ending in jx")
    found = runs.filter(substrings.RUNS.holding(["jx"], "sqlite"))
    assert [r.run_id for r in found] == ["r-aa05"]
    runs.filter(run_id="r-aa05").delete()
    assert substrings.RUNS.few(["jx"], "sqlite") == []
    with connections["default"].cursor() as cursor:
        cursor.execute(
            f"SELECT {substrings.TAIL} FROM {substrings.RUNS.words} WHERE run_id = %s", ["r-aa01"]
        )
        (tail,) = cursor.fetchone()
    sep = substrings.SEP * 2
    assert tail == f"01{sep}zq{sep}"


@pytest.mark.django_db(transaction=True)
def test_0060_makes_each_copy_again_with_its_tail():
    """A store whose copies 0058 and 0059 made without a tail (as they were before 0060) gets
    them with one, filled from the rows stored before it."""
    executor = MigrationExecutor(connection)
    executor.migrate([("journal_store", "0059_queue_words")])
    with connection.cursor() as cursor:  # the copies as 0058 and 0059 first made them
        for searched in (substrings.RUNS, *(q.searched for q in queues.QUEUES)):
            for statement in searched.sqlite_drop():
                cursor.execute(statement)
            columns = ", ".join(searched.columns)
            cursor.execute(
                f"CREATE VIRTUAL TABLE {searched.words} USING fts5({columns}, tokenize = 'trigram')"
            )
    store("default")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    found = RunSummary.objects.filter(substrings.RUNS.holding(["zq"], "sqlite"))
    assert substrings.RUNS.few(["zq"], "sqlite") is not None
    assert {r.run_id for r in found} == {"r-aa01", "r-aa02", "r-aa03"}
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {substrings.RUNS.words}")
        assert cursor.fetchone() == (len(TASKS),)
