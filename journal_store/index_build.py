"""Index builds in migrations that do not stop the journal's writers on PostgreSQL.

A plain `CREATE INDEX` holds a SHARE lock on its table for the whole build, which no INSERT can
pass: while `migrate` built an index on a journal of millions of events, every append (the
agents' workers, the web) waited for it. `CREATE INDEX CONCURRENTLY` takes a lock that writers
do not wait on, and `DROP INDEX CONCURRENTLY` likewise going back. SQLite has neither, and
serializes its writers anyway: there an index is built and dropped as Django's AddIndex does.

Two operations, one build: `BuildIndex` for an index of the model's Meta (AddIndex's state, so
`makemigrations` sees no change), `BuildIndexFromSQL` for an index Meta cannot spell (an
expression each database writes its own way). PostgreSQL refuses a concurrent build inside a
transaction, so a migration holding either says `atomic = False`, and holds nothing else whose
half-done state a second `migrate` could not take up (tests/journal_store/
test_migrations_build_indexes_without_stopping_writers.py holds every migration to that).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import NotSupportedError, router
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.operations import AddIndex
from django.db.migrations.operations.base import Operation


def validity(schema_editor: BaseDatabaseSchemaEditor, name: str) -> bool | None:
    """Whether PostgreSQL's index `name` (on the search path) is valid; None: there is none."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
            "WHERE c.relname = %s AND pg_table_is_visible(c.oid)",
            [name],
        )
        row = cursor.fetchone()
    return None if row is None else bool(row[0])


def build(
    schema_editor: BaseDatabaseSchemaEditor, name: str, create: Callable[[bool], None]
) -> None:
    """Build index `name` with `create(concurrently)`: concurrently on PostgreSQL, plainly
    elsewhere.

    A concurrent build that fails (cancelled, the process killed, a deadlock) does not roll
    back: it leaves the index behind marked INVALID, which no read uses and every write still
    keeps up, and under the name the migration wants. `CREATE INDEX ... IF NOT EXISTS` alone
    would then keep that husk and record the migration as done. So an invalid index of the name
    is dropped and built again, and a valid one is kept: the build that made it finished, and
    the migration stopped after it (at a later index of the same migration) before Django
    recorded it as applied; a plain CREATE would fail on it for ever."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        create(False)
        return
    if connection.in_atomic_block:
        raise NotSupportedError(
            f"index {name} is built concurrently, which PostgreSQL refuses inside a "
            "transaction: the migration must say atomic = False"
        )
    if not schema_editor.collect_sql:  # sqlmigrate prints the build, asks nothing
        valid = validity(schema_editor, name)
        if valid:
            return
        if valid is False:
            schema_editor.execute(
                f"DROP INDEX CONCURRENTLY IF EXISTS {schema_editor.quote_name(name)}"
            )
    create(True)


def concurrently(schema_editor: BaseDatabaseSchemaEditor) -> bool:
    """Whether to drop (or build) an index concurrently here: on PostgreSQL."""
    return schema_editor.connection.vendor == "postgresql"


class BuildIndex(AddIndex):
    """AddIndex, built without stopping the table's writers on PostgreSQL (see `build`)."""

    atomic = False

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return

        def create(concurrent: bool) -> None:
            if concurrent:
                schema_editor.add_index(model, self.index, concurrently=True)
            else:
                schema_editor.add_index(model, self.index)

        build(schema_editor, self.index.name, create)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        if concurrently(schema_editor):
            schema_editor.remove_index(model, self.index, concurrently=True)
        else:
            schema_editor.remove_index(model, self.index)

    def describe(self) -> str:
        return f"{super().describe()}, without stopping writers on PostgreSQL"


class BuildIndexFromSQL(Operation):
    """An index of `table` that the model's Meta cannot spell, built as `build` does: on each
    database named in `definitions`, `CREATE INDEX <name> ON <table> <its definition>` (the
    columns or expressions in parentheses, and a WHERE if partial); nothing on any other.
    No change to the models' state."""

    atomic = False
    reduces_to_sql = True
    reversible = True

    def __init__(self, name: str, table: str, definitions: dict[str, str]) -> None:
        self.name = name
        self.table = table
        self.definitions = definitions

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs = {"name": self.name, "table": self.table, "definitions": self.definitions}
        return self.__class__.__qualname__, [], kwargs

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        definition = self.definitions.get(schema_editor.connection.vendor)
        if definition is None or not router.allow_migrate(
            schema_editor.connection.alias, app_label
        ):
            return
        quote = schema_editor.quote_name

        def create(concurrent: bool) -> None:
            how = "CONCURRENTLY " if concurrent else ""
            schema_editor.execute(
                f"CREATE INDEX {how}{quote(self.name)} ON {quote(self.table)} {definition}"
            )

        build(schema_editor, self.name, create)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor not in self.definitions or not router.allow_migrate(
            schema_editor.connection.alias, app_label
        ):
            return
        how = "CONCURRENTLY " if concurrently(schema_editor) else ""
        schema_editor.execute(f"DROP INDEX {how}IF EXISTS {schema_editor.quote_name(self.name)}")

    def describe(self) -> str:
        return f"Build index {self.name} on {self.table}, without stopping writers on PostgreSQL"

    @property
    def migration_name_fragment(self) -> str:
        return self.name.lower()


class DropIndexFromSQL(BuildIndexFromSQL):
    """BuildIndexFromSQL the other way round: drop index `name` (concurrently on PostgreSQL,
    if it exists) on each database named in `definitions`, and build it again from its
    definition going back, as `build` does. For an index replaced by one built beside it
    first, so that the reads it served never go without one."""

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        super().database_backwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Drop index {self.name} on {self.table}, without stopping writers on PostgreSQL"

    @property
    def migration_name_fragment(self) -> str:
        return f"drop_{self.name.lower()}"
