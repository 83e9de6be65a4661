"""What manage.py says when Minutes cannot start: the setting, or the database, that is wrong,
and what to do about it, in a line or two rather than thirty lines of Django's traceback with
the one that matters at the bottom.

Only the two failures a newcomer's environment causes are turned into sentences: a setting
that config/settings.py refuses (ImproperlyConfigured while it loads), and a database that
does not answer, has no tables yet, stayed locked by another writer past the wait (SQLite's
"database is locked": an import of a large journal holds the lock while it writes), or is a
file that holds no SQLite database.
Everything else is a bug and keeps its traceback, and so does this with `--traceback`.
"""

from __future__ import annotations

import re
from typing import TextIO

from django.core.management.base import CommandError

# Exit statuses: 2 for a setting that was refused, or any other bad input (as for the runtime's
# CLI, `python -m runtime`), 1 for a database that is not there.
BAD_INPUT = 2
BAD_SETTING = BAD_INPUT
NO_DATABASE = 1


def refused(message: str) -> CommandError:
    """A command's refusal of what the person asked (a bad argument, a file that is not there
    or cannot be read, a run the store does not hold, an import it refuses): said in a sentence,
    and exit status 2, as argparse's own refusals. Django's CommandError exits 1, which a
    script could not tell from a failure that was not its input's (`diff`: the runs differ).
    A CommandError still, not a subclass: Django prints the class's name before the sentence.
    Its control characters are escaped (`said`)."""
    return CommandError(said(message), returncode=BAD_INPUT)


def said(message: str) -> str:
    """A command's message as plain text: what it quotes (a stop's reason another person gave
    through the API, a name in a journal from elsewhere) may hold escape sequences that would
    clear or retitle the terminal reading it (runtime/terminal.py)."""
    from runtime.terminal import plain

    return plain(message)


def unusable(path: object, exc: OSError) -> CommandError:
    """A path the command could not read or write, named with why: refused (2) when the error
    names a path (not there, a directory, no permission), as `python -m runtime` judges it; a
    failure naming none (a full disk, an I/O error) was not the person's input, and exits 1."""
    words = f"{path}: {exc.strerror or exc}"
    return CommandError(said(words)) if exc.filename is None else refused(words)


def person(text: str) -> str:
    """`--by`, as argparse's type: who did it, as the audit trail and the run's page will name
    them. Refused blank (a stop "by" nobody), past NAME_MAX characters, or holding a control
    character; spaces at its ends are dropped."""
    from argparse import ArgumentTypeError

    from runtime.written import NAME_MAX, unwritable

    name = text.strip()
    if not name:
        raise ArgumentTypeError("say who: the audit trail names whoever did it")
    if len(name) > NAME_MAX:
        raise ArgumentTypeError(f"{len(name):,} characters; a name is at most {NAME_MAX}")
    if why := unwritable(name):
        raise ArgumentTypeError(f"the name {why}")
    if not name.isprintable():  # what unwritable lets through: a tab, a line break
        raise ArgumentTypeError("a name is one line, without tabs")
    return name


def run(argv: list[str], stderr: TextIO) -> int:
    """Run the management command in `argv`; a refused setting or an absent database is said
    on `stderr` and gives a non-zero status."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 (reads config/settings.py, which checks the environment)
    except ImproperlyConfigured as exc:
        if "--traceback" in argv:
            raise
        stderr.write(f"Minutes cannot start: {exc}\n")
        return BAD_SETTING

    from django.core.management import execute_from_command_line
    from django.db import DatabaseError

    try:
        execute_from_command_line(argv)
    except DatabaseError as exc:  # OperationalError, and SQLite's "file is not a database"
        trouble = database_trouble(exc)
        if trouble is None or "--traceback" in argv:
            raise
        stderr.write(trouble + "\n")
        return NO_DATABASE
    return 0


def database_trouble(exc: Exception) -> str | None:
    """A sentence for a command's database error when the database is out of reach or has no
    tables yet; None for anything else (a bug, which keeps its traceback)."""
    from django.db import OperationalError, connection

    where = described()
    if not_a_database(exc):  # asked first: connecting again would raise it again
        return (
            f"the database, {where}, is not an SQLite database ({first_lines(exc)}): "
            "DATABASE_URL names a file that holds something else. Name the store's file, or "
            "put a backup in its place (docs/journal.md, Backups)"
        )
    # Whether the database answers is asked again, not guessed from the error's wording,
    # which differs between drivers, versions and languages.
    try:
        connection.close()
        connection.ensure_connection()
    except OperationalError as again:
        return (
            f"cannot reach the database, {where}: {first_lines(again)}\n"
            "Check that it is running and that DATABASE_URL names it (docs/journal.md)."
        )
    if busy(exc):
        from django.conf import settings

        waited = settings.DATABASES["default"].get("OPTIONS", {}).get("timeout", 5)
        return (
            f"the database, {where}, was busy: another writer held its write lock for longer "
            f"than the {waited:g} s a command waits for it (an import of a large journal holds "
            "it until it is done), so this command stopped and its unfinished transaction was "
            "rolled back; try again when that writer is done"
        )
    text = str(exc)
    if "no such table" in text or re.search(r'relation "[^"]+" does not exist', text):
        return (
            f"the database, {where}, has no tables yet ({first_lines(exc)}): "
            "run `.venv/bin/python manage.py migrate` first"
        )
    return None


def busy(exc: BaseException) -> bool:
    """SQLite's "database is locked": the write lock was not granted within the connection's
    wait. Known by the driver's error code (Django raises its own error from sqlite3's)."""
    cause = exc.__cause__ or exc
    return getattr(cause, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED")


def not_a_database(exc: BaseException) -> bool:
    """SQLite's "file is not a database": the file is there and holds something else (a
    journal exported over it, a file named by mistake). Known by the driver's error code."""
    cause = exc.__cause__ or exc
    return getattr(cause, "sqlite_errorname", "") == "SQLITE_NOTADB"


def described() -> str:
    """The default database as a person names it, without its password."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if "sqlite" in db["ENGINE"]:
        return f"the SQLite file {db['NAME']}"
    host = db.get("HOST") or "the local socket"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    user = f" as {db['USER']}" if db.get("USER") else ""
    return f"PostgreSQL database {db['NAME']!r} at {host}{port}{user} (DATABASE_URL)"


def first_line(exc: object) -> str:
    """The first line of the error's own words ("database is locked"), at most 200 characters,
    or its type's name when it says nothing: what failed, for a person to judge whether to
    wait, where the whole (a driver's hints, a query) belongs in the log."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def first_lines(exc: Exception) -> str:
    """The error's own words, its lines joined (psycopg adds a hint on a second line)."""
    return " ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())
