"""A read of the streams whose names start with a prefix (DjangoJournal.read_prefix: a run's
specialists' `worker-<run>-...` streams, which a replay, a trace, a start and a refill read)
is a seek of an index on both databases, its cost the streams it finds and not the store's,
and finds exactly the names that start with the prefix, as the memory's journal does: '%'
and '_' are characters, case counts, a name one character past the prefix is not in it."""

from __future__ import annotations

from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal, successor
from runtime.events import ToolDispatched
from runtime.journal import MemoryJournal
from tests.conftest import on_every_backend

NAMES = [
    "worker-r-1-S1-w1",
    "worker-r-1-S2-w1",
    "worker-r-1",  # the prefix's run, no specialist
    "worker-r-1.x",  # '.' is the character after '-'
    "worker-r-10-S1-w1",
    "worker-R-1-S1-w1",  # case counts
    "worker-r_1-S1-w1",  # '_' is no wildcard
    "worker-r%1-S1-w1",  # nor '%'
    "worker-r\\1-S1",
    "worker-r-1-é",
    "worker-r-1-\U0010ffff",
    "worker-é-1",
    "worker-\U0010ffff",
    "workers",
    "run-r-1",
]
PREFIXES = [
    "worker-r-1-",
    "worker-r-1",
    "worker-r_1-",
    "worker-r%1",
    "worker-r\\",
    "worker-R-",
    "worker-é",
    "worker-\U0010ffff",
    "worker-r-1-\U0010ffff",
    "worker-",
    "",
    "nothing-",
]


def call(run: str) -> ToolDispatched:
    return ToolDispatched(run_id=run, tool="t", args={})


@on_every_backend()
def test_a_prefix_finds_exactly_the_names_that_start_with_it(alias):
    journal, memory = DjangoJournal(alias), MemoryJournal()
    for name in NAMES:
        for each in (journal, memory):
            each.append(name, [call("r"), call("r")], 0)
    for prefix in PREFIXES:
        found = [(r.stream, r.version) for r in journal.read_prefix(prefix)]
        assert found == [(r.stream, r.version) for r in memory.read_prefix(prefix)], prefix
        assert found == [(n, v) for n in NAMES for v in (1, 2) if n.startswith(prefix)], prefix


def test_a_successor_is_the_least_name_past_every_name_with_the_prefix():
    assert successor("worker-r-1-") == "worker-r-1."
    assert successor("a\U0010ffff\U0010ffff") == "b"
    assert successor("\U0010ffff") is None and successor("") is None
    assert successor("a\ud7ff") == "a\ue000"  # past the surrogates, which no name holds


def plan_of(journal: DjangoJournal, prefix: str) -> str:
    connection = journal.connection
    with CaptureQueriesContext(connection) as asked:
        journal.read_prefix(prefix)
    [query] = asked.captured_queries
    explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    with connection.cursor() as cursor:
        cursor.execute(explain + query["sql"])
        return " ".join(str(part) for row in cursor.fetchall() for part in row)


@on_every_backend()
def test_a_prefix_is_a_seek_in_a_store_of_other_runs(alias):
    journal = DjangoJournal(alias)
    journal.append("worker-r-1-S1-w1", [call("r-1") for _ in range(3)], 0)
    postgres = alias == "postgres"
    with connections[alias].cursor() as cursor:  # 20,000 other runs' specialists' rows
        if not postgres:
            cursor.execute(
                "CREATE TEMP TABLE numbers AS WITH RECURSIVE n(g) AS "
                "(SELECT 1 UNION ALL SELECT g + 1 FROM n WHERE g < 20000) SELECT g FROM n"
            )
        uuid = "gen_random_uuid()" if postgres else "lower(hex(randomblob(16)))"
        now = "now()" if postgres else "'2026-12-06 00:00:00'"
        numbers = "generate_series(1, 20000) AS g" if postgres else "numbers"
        cursor.execute(
            "INSERT INTO journal_event (id, stream, version, run_id, kind, v, data, t, "
            f"recorded_at) SELECT {uuid}, 'worker-r-' || (g + 1) || '-S1-w1', 1, "
            f"'r-' || (g + 1), 'ToolDispatched', 1, '{{}}', 0, {now} FROM {numbers}"
        )
        if postgres:
            cursor.execute("ANALYZE journal_event")
    assert len(journal.read_prefix("worker-r-1-")) == 3
    plan = plan_of(journal, "worker-r-1-")
    if postgres:
        assert "journal_stream_prefix" in plan and "Seq Scan" not in plan, plan
    else:
        assert "SEARCH journal_event USING INDEX" in plan and "SCAN journal_event" not in plan, plan
