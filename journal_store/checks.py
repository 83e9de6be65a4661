"""System checks of the database Minutes is pointed at (`manage.py check --database default`,
and `migrate`, which runs them for the database it migrates)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core import checks
from django.db import connections

# The case PostgreSQL folds a search in is the database's locale's (journal_store/anycase.py).
ASCII_CASE = checks.Warning(
    "this PostgreSQL database folds the case of ASCII letters only (its locale is C or POSIX): "
    'the runs list\'s Search and the review queues\' words find "Émile" by "ÉMILE" but not by '
    '"émile"',
    hint="make the database with a UTF-8 locale, e.g. CREATE DATABASE minutes TEMPLATE template0 "
    "LOCALE 'C.UTF-8' (or en_US.UTF-8); SQLite folds every letter as it is",
    id="minutes.W001",
)


def folds_ascii_only(alias: str) -> bool:
    """Whether PostgreSQL at `alias` folds the case of ASCII letters only."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        return ascii_case_only(cursor)


def ascii_case_only(cursor: Any) -> bool:
    """Asked of the database itself, whichever locale provider it has (libc, ICU)."""
    cursor.execute("SELECT UPPER('é')")
    (upper,) = cursor.fetchone()
    return bool(upper != "É")


@checks.register(checks.Tags.database)
def search_case(
    app_configs: Any, databases: Iterable[str] | None = None, **kwargs: Any
) -> list[Any]:
    return [ASCII_CASE for alias in databases or () if folds_ascii_only(alias)]
