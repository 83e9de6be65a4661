"""A column as a value no index serves, for a read that knows a better index than the one
SQLite would take: without statistics, SQLite weighs an equality on one index as it does on
another, and takes the one that also gives the order asked, even where that walks far more
rows (the runs list's filters walked in the order's index, dashboard/listing.py; a few runs'
open items, journal_store/queues.py oldest_open_of)."""

from __future__ import annotations

from typing import Any

from django.db.models import Func


class Unindexed(Func):
    """A column as a value no index serves: on SQLite its unary +, SQLite's own way of keeping
    a term from choosing the index. Elsewhere the column as it is: PostgreSQL weighs one index
    against another by the table's statistics."""

    template = "%(expressions)s"

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template="+%(expressions)s", **extra)
