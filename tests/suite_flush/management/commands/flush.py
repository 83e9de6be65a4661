"""The suite's flush: what a transactional test's teardown calls (django.test's
TransactionTestCase, through pytest-django). Every table is emptied but django_content_type and
auth_permission, and no post_migrate is sent after it.

Django's flush empties every table, then post_migrate makes every content type and permission
again, row by row: on SQLite 0.026 s of a 0.031 s flush, and some 900 transactional tests
flush once a database. Those rows are what migrate made, the same for every test; the rows that
point at them (a user's and a group's permissions: auth_user_user_permissions,
auth_group_permissions) are in tables flushed as before, so a test finds what it found after
Django's flush, the two tables' ids the same as migrate gave them.

They are kept only while they are as the last whole flush left them (each table's count of
rows and its highest id the same; neither database reuses an id): after a test that adds or
deletes a permission or content type, the flush is Django's, which empties them and makes them
again. So is the first flush of each database in a process (it takes the measure), and one
asked with any option a test's teardown does not pass (interactive, reset_sequences,
allow_cascade, inhibit_post_migrate). A row changed in place is not seen; no test changes one.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management.color import no_style
from django.core.management.commands import flush
from django.db import connections

KEPT = (ContentType._meta.db_table, Permission._meta.db_table)
# Per database (alias and name): the kept tables' measure after its last whole flush.
measured: dict[tuple[str, str], tuple[int, ...]] = {}


def measure(connection: Any) -> tuple[int, ...]:
    quote = connection.ops.quote_name
    columns = ", ".join(
        f"(SELECT COUNT(*) FROM {quote(t)}), (SELECT COALESCE(MAX(id), 0) FROM {quote(t)})"
        for t in KEPT
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns}")
        return tuple(cursor.fetchone())


class Command(flush.Command):
    def handle(self, **options: Any) -> None:
        connection = connections[options["database"]]
        key = (options["database"], str(connection.settings_dict["NAME"]))
        as_a_teardown = not (
            options["interactive"]
            or options.get("reset_sequences", True)  # Django's defaults where not passed
            or options.get("allow_cascade", False)
            or options.get("inhibit_post_migrate", False)
        )
        if as_a_teardown and measured.get(key) == measure(connection):
            tables = connection.introspection.django_table_names(
                only_existing=True, include_views=False
            )
            kept_out = [table for table in tables if table not in KEPT]
            connection.ops.execute_sql_flush(connection.ops.sql_flush(no_style(), kept_out))
            return
        super().handle(**options)
        if as_a_teardown:
            measured[key] = measure(connection)
        else:
            measured.pop(key, None)  # emptied or not, it is measured again by a whole flush
