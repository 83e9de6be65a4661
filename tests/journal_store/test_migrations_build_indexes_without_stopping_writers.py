"""Every journal_store migration that builds an index on a table that grows with the runs builds
it with journal_store/index_build.py (concurrently on PostgreSQL, in a migration that says
atomic = False), so that a later migration cannot forget it and hold up every append while the
index is built. The migrations are read as `migrate` loads them (their operations, through
Django's MigrationLoader); and on PostgreSQL the statements the latest ones issue are checked
too, which sees what a RunPython does.

The few older ones that build an index otherwise are named below, each with why it was left."""

from __future__ import annotations

import re

from django.db import connections, models
from django.db.migrations import operations as ops
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from journal_store.index_build import BuildIndex, BuildIndexFromSQL
from tests.conftest import need_postgres, on_every_backend

APP = "journal_store"

# The tables whose rows do not grow with the runs: one row per projector, per beat round; what
# is in flight (removed when done); cache entries that expire; a row per run a projector
# stopped on. Every other table of the app (the journal, the search index, the read models of
# runs, their bills, findings, messages, queues...) grows with the runs and their events.
STEADY = {
    "projection_checkpoint",
    "beat_round",
    "projection_pending_push",
    "projection_open_effect",
    "minutes_cache",
    "projection_stopped",
}

# Migrations applied in deployments before index_build.py, which build an index otherwise, and
# why they were left so: each mixes the build with an operation that a migration without a
# transaction (what a concurrent build needs) could leave half done, where a second `migrate`
# would fail (a column added again) or SQLite would be left mid-way through remaking the table
# (its AlterField copies the table into a new one). Their tables were small then; the journal's
# own indexes are all built concurrently. No migration after 0051 may be named here.
LEFT = {
    ("0002_run_started_by", "team"),  # AddField and AlterField beside it
    ("0002_run_started_by", "run_started_desc"),  # dropped again by 0035
    ("0005_fold_rows", "finding_run_kind_key"),  # with DeleteModel, CreateModel, RunPython
    ("0008_run_lineage", "parent_id"),  # a column added with its index
    ("0011_run_metrics", "model"),  # likewise, with a fill
    ("0011_run_metrics", "started_on"),
    ("0017_run_baseline_of", "baseline_of"),  # likewise, with a fill
    # AlterField (SQLite remakes projection_run) before the builds
    ("0035_runs_list_keyset", "run_started_id"),
    ("0035_runs_list_keyset", "run_status_id"),
    ("0035_runs_list_keyset", "run_tokens_id"),
    ("0035_runs_list_keyset", "run_cost_id"),
    ("0035_runs_list_keyset", "run_findings_id"),
    # AlterField (SQLite remakes the queues' tables) before the builds
    ("0036_queue_items_by_position", "conflict_status_position"),
    ("0036_queue_items_by_position", "conflict_position"),
    ("0036_queue_items_by_position", "deadletter_status_position"),
    ("0036_queue_items_by_position", "deadletter_position"),
    ("0040_run_duration", "run_duration_id"),  # after AddField and its fill
}


def builds(migration, state) -> list[tuple[str, str, bool]]:
    """(table, index, built without stopping writers) of each index an operation of
    `migration` builds on a table that existed before it (a table it creates is empty)."""
    tables_before = {model.options.get("db_table") for model in state.models.values()}
    found = []
    for operation in migration.operations:
        operations = getattr(operation, "database_operations", [operation])  # SeparateDatabase...
        for each in operations:
            found += [
                (table, name, quiet or table not in tables_before)
                for table, name, quiet in built_by(each, state, migration)
            ]
        operation.state_forwards(APP, state)
    return [(table, name, quiet) for table, name, quiet in found if table not in STEADY]


def table_of(state, model_name: str) -> str:
    return state.models[APP, model_name.lower()].options["db_table"]


def indexed(field) -> bool:
    return bool(field.db_index or field.unique) and not field.primary_key


def built_by(operation, state, migration) -> list[tuple[str, str, bool]]:
    """The indexes one operation builds: (table, name, built by index_build.py in a migration
    without a transaction)."""
    concurrent = not migration.atomic
    if isinstance(operation, BuildIndex):
        return [(table_of(state, operation.model_name), operation.index.name, concurrent)]
    if isinstance(operation, BuildIndexFromSQL):
        return [(operation.table, operation.name, concurrent)]
    if isinstance(operation, ops.AddIndex):
        return [(table_of(state, operation.model_name), operation.index.name, False)]
    if isinstance(operation, ops.AddConstraint) and isinstance(
        operation.constraint, models.UniqueConstraint
    ):
        return [(table_of(state, operation.model_name), operation.constraint.name, False)]
    if isinstance(operation, ops.AddField) and indexed(operation.field):
        return [(table_of(state, operation.model_name), operation.name, False)]
    if isinstance(operation, ops.AlterField) and indexed(operation.field):
        before = state.models[APP, operation.model_name_lower].fields[operation.name]
        if not indexed(before):
            return [(table_of(state, operation.model_name), operation.name, False)]
    if isinstance(operation, (ops.AlterUniqueTogether, ops.AlterIndexTogether)):
        together = operation.option_value or ()
        return [(table_of(state, operation.name), str(fields), False) for fields in together]
    if isinstance(operation, ops.RunSQL):
        sql = " ".join(s if isinstance(s, str) else s[0] for s in _statements(operation.sql))
        return [(table, name, False) for name, table in PLAIN_BUILD.findall(sql)]
    return []


def _statements(sql):
    return [sql] if isinstance(sql, str) else list(sql)


# A build that stops writers, in SQL: CREATE [UNIQUE] INDEX without CONCURRENTLY, or a unique
# constraint added to a table (which builds its index under an ACCESS EXCLUSIVE lock).
PLAIN_BUILD = re.compile(
    r'CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?!CONCURRENTLY)(?:IF\s+NOT\s+EXISTS\s+)?"?(\w+)"?\s+'
    r'ON\s+(?:ONLY\s+)?(?:\w+\.)?"?(\w+)"?',
    re.IGNORECASE,
)
UNIQUE_ADDED = re.compile(
    r'ALTER\s+TABLE\s+"?(\w+)"?\s+ADD\s+CONSTRAINT\s+"?(\w+)"?\s+UNIQUE', re.IGNORECASE
)


def test_every_index_on_a_growing_table_is_built_without_stopping_writers():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    stopping = []
    for app, name in sorted(loader.disk_migrations):
        if app != APP:
            continue
        state = loader.project_state((APP, name), at_end=False)
        for table, index, quiet in builds(loader.disk_migrations[APP, name], state):
            if not quiet and (name, index) not in LEFT:
                stopping.append(f"{name}: {index} on {table}")
    assert stopping == []


def test_the_check_sees_a_plain_build():
    """A later migration that forgot: an AddIndex, a column added with db_index, raw SQL."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    state = loader.project_state((APP, "0051_beat_round"), at_end=True)

    class Forgot:
        atomic = True
        operations = [
            ops.AddIndex("storedevent", models.Index(fields=["kind"], name="journal_kind")),
            ops.AddField("runsummary", "host", models.CharField(max_length=9, db_index=True)),
            ops.RunSQL("CREATE INDEX journal_t ON journal_event (t)"),
            ops.AddIndex("beatround", models.Index(fields=["at"], name="beat_at")),  # steady
        ]

    assert builds(Forgot, state.clone()) == [
        ("journal_event", "journal_kind", False),
        ("projection_run", "host", False),
        ("journal_event", "journal_t", False),
    ]
    Forgot.operations[0] = BuildIndex("storedevent", models.Index(fields=["kind"], name="k"))
    assert builds(Forgot, state.clone())[0] == ("journal_event", "k", False)  # atomic
    Forgot.atomic = False
    assert builds(Forgot, state.clone())[0] == ("journal_event", "k", True)


def test_nothing_after_0051_is_left_to_build_plainly():
    assert all(name <= "0051" for name, _ in LEFT)


@on_every_backend(transaction=True)
def test_the_latest_migrations_issue_no_plain_build_on_postgresql():
    """What the operations above cannot show, a RunPython's own SQL: the migrations from 0044
    on (the first of the journal's that index_build.py built, and every one after) are
    migrated back and forwards on PostgreSQL, and their statements read."""
    need_postgres()
    connection = connections["postgres"]
    executor = MigrationExecutor(connection)
    executor.migrate([(APP, "0043_search_folded")])
    statements: list[tuple[str, str]] = []
    applying = [""]

    def progress(action: str, migration=None, fake: bool = False) -> None:
        if action == "apply_start":
            applying[0] = migration.name

    def watch(execute, sql, params, many, context):
        statements.append((applying[0], str(sql)))
        return execute(sql, params, many, context)

    executor = MigrationExecutor(connection, progress_callback=progress)
    with connection.execute_wrapper(watch):
        executor.migrate(executor.loader.graph.leaf_nodes(APP))
    created = {
        (name, table.lower())
        for name, sql in statements
        for table in re.findall(r'CREATE\s+TABLE\s+"?(\w+)"?', sql, re.IGNORECASE)
    }
    stopping = [
        f"{name}: {index} on {table}"
        for name, sql in statements
        for index, table in PLAIN_BUILD.findall(sql)
        + [(i, t) for t, i in UNIQUE_ADDED.findall(sql)]
        if table not in STEADY and (name, table.lower()) not in created
    ]
    assert any("CONCURRENTLY" in sql for _, sql in statements)  # the check saw the builds
    assert stopping == []
