"""A column as a value no index serves, for a read that knows a better index than the one
SQLite would take: without statistics, SQLite weighs an equality on one index as it does on
another, and takes the one that also gives the order asked, even where that walks far more
rows (the runs list's filters walked in the order's index, dashboard/listing.py; a few runs'
open items, journal_store/queues.py oldest_open_of). And a condition as a value PostgreSQL's
planner does not weigh, where its guess of it was far off (`Unweighed`)."""

from __future__ import annotations

from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Func, Q


class Unindexed(Func):
    """A column as a value no index serves: on SQLite its unary +, SQLite's own way of keeping
    a term from choosing the index. Elsewhere the column as it is: PostgreSQL weighs one index
    against another by the table's statistics."""

    template = "%(expressions)s"

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template="+%(expressions)s", **extra)


class Unweighed(Func):
    """A condition PostgreSQL's planner does not weigh: it takes a value it cannot see into
    for about half the rows, where its guess of the condition itself was far off (a LIKE of a
    long pattern, dashboard/listing.py's Search: journal_store/substrings.py found). A test
    of every row it reads, as before; only the plan changes."""

    template = "COALESCE(%(expressions)s, false)"
    output_field = BooleanField()

    def __init__(self, condition: Q) -> None:
        super().__init__(ExpressionWrapper(condition, output_field=BooleanField()))
