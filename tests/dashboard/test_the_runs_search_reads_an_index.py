"""The runs list's Search (a task, a run id) is looked up in an index of trigrams
(journal_store/substrings.py), where a search that matched no run read every run, and finds
what the substring match finds: the same runs, in the same order, a page at a time, in the
poll's mark and count, on both databases, for rare texts and common ones, texts too short for
a trigram, quotes, LIKE's wildcards, other cases and NFKC. SQLite's copy of the searched
columns is kept by triggers through every write, filled by its migration, and a search too long
or holding a control character is refused, naming the field."""

from __future__ import annotations

import contextlib
import importlib
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from dashboard import listing, run_pages
from dashboard.asked import BadQuery
from journal_store import substrings
from journal_store.models import RunSummary
from tests.conftest import on_every_backend

START = datetime(2026, 12, 1, tzinfo=UTC)
TASKS = [
    "Fix the parser",
    "fix THE PARSER again",
    "refund order DHL-7731 for the customer",
    'quote "the" customer',
    "100% done",
    "snake_case names",
    "back\\slash path",
    "Émile's café order",
    "émile again",
    "\uff46\uff49\uff58 in full-width letters",
    "fix in plain letters",
    "an emoji 🦘 kangaroo",
    "",
]
SEARCHES = [
    "parser",
    "PARSER",
    "fix",
    "dhl-7731",
    '"the"',
    'e" c',
    "100%",
    "%",
    "0% d",
    "_case",
    "_",
    "k\\s",
    "Émile",
    "émile",
    "ÉMILE",
    "fix in",
    "\uff46\uff49\uff58",
    "🦘",
    "🦘 kan",
    "r-0",
    "R-00",
    "r-00000003",
    "wombat",
    "a",
    "ab",
    "ro",
    "the",
    "  ",
]


def store(using: str, many: int = 0) -> None:
    """The tasks above, each run a minute apart, and `many` more holding "common"."""
    tasks = [*TASKS, *(f"a common task {n}" for n in range(many))]
    RunSummary.objects.using(using).bulk_create(
        RunSummary(
            run_id=f"r-{n:08d}",
            task=task,
            status="failed" if n % 3 else "done",
            stage="complete",
            started_at=None if n == 5 else START + timedelta(minutes=n),
            tokens=n * 7 % 11,
        )
        for n, task in enumerate(tasks)
    )


def matched(using: str, chosen: listing.RunFilter) -> list[str]:
    """The runs the substring match selects, in the list's order: the oracle, as the list read
    them before the index."""
    rest = listing.RunFilter(status=chosen.status, sort=chosen.sort)
    runs = listing.selected(rest).using(using)
    runs = runs.filter(substrings.RUNS.holding(substrings.variants(chosen.q), ""))
    return list(runs.order_by(*listing.SORTS[chosen.sort].order()).values_list("run_id", flat=True))


def listed(using: str, chosen: listing.RunFilter, limit: int) -> list[str]:
    """The runs the list shows of the filter, a page at a time."""
    found: list[str] = []
    after = None
    while True:
        runs = listing.selected(chosen).using(using)
        walk = listing.walked(chosen)
        page = run_pages.page(runs, chosen.sort, after, limit, walk and walk.using(using))
        found += [r.run_id for r in page.runs]
        if page.next is None:
            return found
        after = run_pages.Cursor.read(page.next, chosen.sort)


@pytest.mark.django_db
@pytest.mark.parametrize("few", [3, substrings.FEW])
def test_a_search_finds_the_runs_the_substring_match_finds(few, monkeypatch):
    """On SQLite, where the FTS5 table names the runs. PostgreSQL's query is the match as it
    was (its index serves it as it stands: the last test)."""
    monkeypatch.setattr(substrings, "FEW", few)  # 3: the common path, with few runs
    alias = "default"
    store(alias, many=12)
    for q in SEARCHES:
        for status in ("", "failed"):
            for sort in ("started", "tokens"):
                chosen = listing.RunFilter(q=q.strip(), status=status, sort=sort)
                want = matched(alias, chosen)
                assert listed(alias, chosen, 4) == want, (q, status, sort)
                assert listed(alias, chosen, 50) == want, (q, status, sort)
                by_start = listing.RunFilter(q=q.strip(), status=status)
                starts = (
                    RunSummary.objects.using(alias)
                    .filter(run_id__in=want)
                    .exclude(started_at=None)
                    .order_by("-started_at")
                    .values_list("started_at", flat=True)
                )
                assert run_pages.newest_start(by_start) == (starts[0] if starts else None), q
                mark = START + timedelta(minutes=4)
                since = len([s for s in starts if s > mark])
                assert run_pages.started_since(by_start, mark) == since, q


@pytest.mark.django_db
@pytest.mark.parametrize(("q", "asked"), [("parser", 2), ("common", 1)])
def test_a_read_of_the_list_asks_the_index_once(q, asked):
    """Its rows and its walk, the poll's mark and its count: the rows' ids of a rare text and
    their keys (two queries), or the ids of a common one (one), once for each."""
    store("default", many=substrings.FEW)
    chosen = listing.RunFilter(q=q)

    def page() -> None:
        chose = listing.selection(chosen)
        run_pages.page(chose.runs, "started", None, 50, chose.walk)

    for read in (
        page,
        lambda: run_pages.newest_start(chosen),
        lambda: run_pages.started_since(chosen, START),
    ):
        with CaptureQueriesContext(connection) as done:
            read()
        probes = [q for q in done.captured_queries if substrings.RUNS.words in q["sql"]]
        assert len(probes) == asked, probes


@pytest.mark.django_db
def test_a_page_looks_up_more_runs_by_their_ids_than_a_poll():
    """A text in 200 runs: a page looks them up (fewer than listing.PAGE_FEW), where reading
    the order reads about 50 x runs / 200 for a page; the poll's mark walks the order, and
    stops at the first."""
    store("default", many=200)
    chosen = listing.RunFilter(q="common")
    assert substrings.FEW <= 200 < listing.PAGE_FEW
    assert listing.few(chosen) is None and len(listing.few(chosen, listing.PAGE_FEW)) == 200
    page = listing.selection(chosen, fewer_than=listing.PAGE_FEW)
    looked_up = '"run_id" IN ('
    assert page.walk is None and looked_up in str(page.runs.query)
    assert looked_up not in str(listing.selection(chosen).runs.query)
    found, after = [], None
    while True:
        shown = run_pages.page(page.runs, "started", after, 50, page.walk)
        found += [r.run_id for r in shown.runs]
        if shown.next is None:
            break
        after = run_pages.Cursor.read(shown.next, "started")
    assert found == matched("default", chosen) and len(found) == 200


@pytest.mark.django_db
def test_the_oracle_is_no_echo():
    """What the test above compares with is the substring match, not the index's answer."""
    oracle = str(substrings.RUNS.holding(["wombat"], ""))
    assert "AnyCase(F(task)" in oracle and "run_id__in" not in oracle
    assert "run_id__in" in str(substrings.RUNS.holding(["wombat"], "sqlite"))


def copies(using: str = "default") -> list[tuple[str, str]]:
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT run_id, task FROM {substrings.RUNS.words} ORDER BY run_id")
        return list(cursor.fetchall())


def rows(using: str = "default") -> list[tuple[str, str]]:
    runs = RunSummary.objects.using(using).order_by("run_id")
    return list(runs.values_list("run_id", "task"))


@on_every_backend()
def test_the_copy_follows_every_write(alias):
    store(alias)
    runs = RunSummary.objects.using(alias)
    runs.create(run_id="r", task="a run id too short for a trigram")
    runs.create(run_id='r-"q', task="a quote in the id")
    assert copies(alias) == rows(alias)
    runs.filter(run_id="r-00000002").update(task="now about a wombat")
    runs.filter(run_id="r").update(task="still short")
    runs.filter(run_id='r-"q').update(run_id="r-renamed")
    assert copies(alias) == rows(alias)
    vendor = connections[alias].vendor
    found = runs.filter(substrings.RUNS.holding(["wombat"], vendor, alias))
    assert [r.run_id for r in found] == ["r-00000002"]
    assert not runs.filter(substrings.RUNS.holding(['"q'], vendor, alias)).exists()
    runs.filter(run_id__in=["r", "r-00000004"]).delete()
    assert copies(alias) == rows(alias)
    runs.all().delete()  # a rebuild's clear, a test's flush
    assert copies(alias) == []
    if vendor == "postgresql":  # and Django's own flush
        store(alias)
        with connections[alias].cursor() as cursor:
            cursor.execute("TRUNCATE projection_run")
        assert copies(alias) == []


@on_every_backend()
def test_postgresqls_query_finds_what_the_substring_match_finds(alias):
    """Its LIKE is written by hand: the wildcards and the escape in a text are the text's."""
    store(alias, many=3)
    runs = RunSummary.objects.using(alias)
    vendor = connections[alias].vendor
    for q in SEARCHES:
        said = substrings.variants(q)
        want = set(runs.filter(substrings.RUNS.holding(said, "")).values_list("run_id", flat=True))
        found = runs.filter(substrings.RUNS.holding(said, vendor, alias))
        assert set(found.values_list("run_id", flat=True)) == want, q


@pytest.mark.django_db
def test_a_rewrite_of_other_columns_leaves_the_copy_alone():
    store("default")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT rowid FROM {substrings.RUNS.words} WHERE run_id = 'r-00000003'")
        before = cursor.fetchone()
        RunSummary.objects.filter(run_id="r-00000003").update(status="done", tokens=9)
        cursor.execute(f"SELECT rowid FROM {substrings.RUNS.words} WHERE run_id = 'r-00000003'")
        assert cursor.fetchone() == before  # not deleted and written again
        RunSummary.objects.filter(run_id="r-00000003").update(task="changed")
        cursor.execute(f"SELECT rowid FROM {substrings.RUNS.words} WHERE run_id = 'r-00000003'")
        assert cursor.fetchone() != before


FILL = importlib.import_module("journal_store.migrations.0058_run_words")


@pytest.mark.django_db(transaction=True)
def test_0058_fills_sqlites_copy_from_the_runs_stored_before_it():
    executor = MigrationExecutor(connection)
    executor.migrate([("journal_store", "0057_runs_waiting_by_team")])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE %s", [f"{substrings.RUNS.words}%"]
        )
        assert cursor.fetchall() == []  # going back dropped the table and its triggers
    store("default")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert copies() == rows() and len(rows()) == len(TASKS)
    chosen = listing.RunFilter(q="parser")
    assert listed("default", chosen, 50) == ["r-00000001", "r-00000000"]


def test_0058_asks_postgresql_for_the_extension_first():
    said: list[str] = []
    editor = SimpleNamespace(connection=SimpleNamespace(vendor="postgresql"), execute=said.append)
    FILL.create(None, editor)
    assert said == ["CREATE EXTENSION IF NOT EXISTS pg_trgm", *substrings.RUNS.postgres()]


def scans(table: str) -> tuple[int, int]:
    """PostgreSQL's count of the sequential and index scans of `table` in this transaction."""
    with connections["postgres"].cursor() as cursor:
        cursor.execute(
            "SELECT seq_scan, coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables "
            "WHERE relname = %s",
            [table],
        )
        return cursor.fetchone()


@contextlib.contextmanager
def indexed_after(cursor: Any, searched: substrings.Searched) -> Iterator[None]:
    """The copy's GIN indexes (trigrams, pieces) made after what the block writes, each in one
    go as CREATE INDEX makes it: the same indexes, where writing each row's entries as it came
    took most of the test (15 s for 20,000 runs)."""
    cursor.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexdef LIKE %s",
        [searched.words, "% USING gin %"],
    )
    made = cursor.fetchall()
    assert len(made) == 2 * len(searched.columns), made  # trigrams and pieces, each column's
    for name, _ in made:
        cursor.execute(f"DROP INDEX {name}")
    yield
    for _, definition in made:
        cursor.execute(definition)


@pytest.mark.django_db(databases=["default", "postgres"])
def test_postgresql_finds_a_rare_text_by_its_trigram_index(settings):
    if "postgres" not in settings.DATABASES:
        pytest.skip("no PostgreSQL")
    with connections["postgres"].cursor() as cursor, indexed_after(cursor, substrings.RUNS):
        cursor.execute(
            "INSERT INTO projection_run (run_id, team, started_by, scenario, task, status, "
            "reason, stage, waiting_for, started_at, waited, tokens, calls, spent, event_count, "
            "findings_count, last_position, resume_position, parent_id, baseline_of, model, "
            "verified, coord_tokens, work_tokens, handoffs, failed_handoffs, claims, contested, "
            "deliveries, stale_deliveries, files_written, shared_files, reviewed_tasks, "
            "looked_at_tasks, livelocked_tasks, verifications, independent_verifications, "
            "conflicts_resolved, conflicts_open, human_wait, dead_letters, letters_open, "
            "waits, deadlocks, commitments, orphaned, inherited_tokens, "
            "inherited_coord_tokens, inherited_work_tokens, copied_figures, lineage, "
            "lineage_cost) SELECT 'r-' || g, '', '', '', 'task ' || g || ' of the parser', "
            "'done', '', 'complete', '', now() - g * interval '1 second', '0', 0, 0, 0, 0, 0, "
            "0, 0, '', '', '', false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
            "0, 0, 0, 0, 0, 0, 0, 0, '{}', '[]', '{}' FROM generate_series(1, 20000) AS g"
        )
    with connections["postgres"].cursor() as cursor:
        cursor.execute("ANALYZE projection_run")
        cursor.execute(f"ANALYZE {substrings.RUNS.words}")
    runs = RunSummary.objects.using("postgres")
    for text, found in (("wombat", []), ("task 12345 ", ["r-12345"]), ("parser", None)):
        assert substrings.RUNS.few([text], "postgresql", "postgres") == found, text
    rare = runs.filter(substrings.RUNS.holding(["task 12345 "], "postgresql", "postgres"))
    assert [r.run_id for r in rare] == ["r-12345"]
    # The look-up of a rare text's runs reads the copy's indexes, never the whole copy (as
    # PostgreSQL counts this transaction's scans); a text the planner guesses common (in
    # substrings.COMMON times the bound) is not looked up at all.
    for said, keys in ((["wombat"], []), (["zq"], []), (["task 12"], None), (["pa"], None)):
        before = scans(substrings.RUNS.words)
        assert substrings.RUNS.few(said, "postgresql", "postgres") == keys, said
        (seq_after, index_after), (seq_before, index_before) = scans(substrings.RUNS.words), before
        seq, index = seq_after - seq_before, index_after - index_before
        assert seq == 0, said
        assert index > 0 or keys is None, said
    # A common text one run in eighteen holds (task 12, 120-129, 1200-1299, 12000-12999) is
    # found by walking the order by start: the match as written, a long pattern, seemed to the
    # planner in no run, and it read and sorted every run.
    said = ["task 12"]
    assert substrings.RUNS.few(said, "postgresql", "postgres") is None
    order = listing.SORTS["started"].order(nulls_last=False)
    started = runs.filter(started_at__isnull=False)
    walked = started.filter(substrings.RUNS.holding(said, "postgresql", "postgres"))
    plan = walked.order_by(*order)[:51].explain()
    assert "run_started_id" in plan and "Seq Scan" not in plan and "Sort" not in plan, plan
    as_written = started.filter(substrings.RUNS.matched(said)).order_by(*order)[:51]
    assert "Seq Scan" in as_written.explain()
    assert list(walked.order_by(*order)[:51]) == list(as_written)


@pytest.mark.parametrize(
    "q, said",
    [
        ("x" * 201, "is longer than 200 characters"),
        ("fix\u202eit", "U+202E"),
        ("fix\x07", "a control character"),
    ],
)
def test_a_search_too_long_or_with_a_control_is_refused_naming_it(q, said):
    with pytest.raises(BadQuery) as refused:
        listing.RunFilter.of({"q": q})
    assert list(refused.value.problems) == ["q"] and said in refused.value.problems["q"]
    assert listing.RunFilter.of({"q": "x" * 200}).q == "x" * 200


@pytest.mark.django_db(databases=["default", "postgres"])
def test_the_probe_reads_the_indexes_whatever_the_planner_weighs(settings):
    """Once VACUUM had counted a trigram index's pages, PostgreSQL's planner weighed the probe
    of a letter's id ("r" and "1", words of it, are in every id; bench/words_search.py) dearer
    than reading the copy, and read all 20,000 letters to find one (14 ms where the index took
    0.3). Here the planner is told that reading a table costs nothing, so that it would read
    the copy: `few` still reads the indexes alone (sequential scans off for its probe, and
    only for it), as PostgreSQL counts this transaction's scans."""
    if "postgres" not in settings.DATABASES:
        pytest.skip("no PostgreSQL")
    from journal_store.models import DeadLetter
    from journal_store.queues import DEAD_LETTERS

    rng = random.Random(7)
    ids = [f"r-{rng.getrandbits(48):012x}" for _ in range(2_000)]
    DeadLetter.objects.using("postgres").bulk_create(
        DeadLetter(
            letter_id=f"{run}:1",
            run_id=run,
            status="open",
            position=n + 1,
            created_at=START,
            reason="no reply by turn 9",  # as a team's letters say it, each the same words
        )
        for n, run in enumerate(ids)
    )
    searched, one = DEAD_LETTERS.searched, f"{ids[1234]}:1"
    with connections["postgres"].cursor() as cursor:
        cursor.execute(f"ANALYZE {searched.words}")
        cursor.execute("SET LOCAL seq_page_cost = 0")
        cursor.execute("SET LOCAL cpu_tuple_cost = 0")
        probe, texts = searched.probe([one])
        for n, text in enumerate(texts, start=1):
            probe = probe.replace(f"$1[{n}]", f"'{text}'")
        cursor.execute(f"EXPLAIN {probe} LIMIT 128")
        assert "Seq Scan" in " ".join(row[0] for row in cursor.fetchall())  # as it would
    before = scans(searched.words)
    assert searched.few([one], "postgresql", "postgres") == [one]
    (seq_after, index_after), (seq_before, index_before) = scans(searched.words), before
    assert seq_after == seq_before and index_after > index_before
    with connections["postgres"].cursor() as cursor:
        cursor.execute("SHOW enable_seqscan")  # the probe's setting went with it
        assert cursor.fetchone() == ("on",)


@pytest.mark.django_db(databases=["default", "postgres"], transaction=True)
def test_postgresql_unmigrated_past_the_copies_keeps_none_of_their_functions(settings):
    """Back past 0058, nothing of the copies is left: their tables, triggers and the functions
    they share (PIECES, PROBE), which each copy's own drop left to the others."""
    if "postgres" not in settings.DATABASES:
        pytest.skip("no PostgreSQL")
    postgres = connections["postgres"]

    def ours() -> list[str]:
        with postgres.cursor() as cursor:
            cursor.execute(
                "SELECT proname FROM pg_proc WHERE proname IN (%s, %s) "
                "OR proname LIKE %s UNION ALL "
                "SELECT tablename FROM pg_tables WHERE tablename LIKE %s ORDER BY 1",
                [substrings.PIECES, substrings.PROBE, "%\\_words\\_kept", "%\\_words"],
            )
            return [name for (name,) in cursor.fetchall()]

    made = ours()
    assert substrings.PIECES in made and substrings.PROBE in made
    executor = MigrationExecutor(postgres)
    try:
        executor.migrate([("journal_store", "0057_runs_waiting_by_team")])
        assert ours() == []
    finally:
        executor = MigrationExecutor(postgres)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert ours() == made
