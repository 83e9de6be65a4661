"""A copy of the whole store as it stood at one moment, taken while Minutes runs: the journal,
the read models, the people and their API tokens, the review queues' decisions (`manage.py
backup FILE`).

Copying the SQLite file while workers append gives a copy that misses the commits still in its
-wal file, or a torn one. SQLite's backup API copies every page in one read transaction
instead: one consistent moment, while writers go on (WAL). PostgreSQL's is pg_dump, whose dump
is one snapshot. Either is written beside FILE and moved over it once whole and checked, as
runtime/replaced.py writes an export: a failure leaves FILE as it was and no part file behind.
Restoring is stopping Minutes and putting the copy in place (docs/journal.md, "Backups").
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from runtime.cli_args import kind_of
from runtime.replaced import replaced, same_file, unwritable


class Refused(Exception):
    """What was asked cannot be done (FILE, or a tool missing): nothing was written."""


class Failed(Exception):
    """The copy was made and failed (its check, pg_dump): nothing was written over FILE."""


@dataclass(frozen=True)
class Written:
    """What a backup wrote: its size, and the events and runs it holds (`counted`: where those
    were read)."""

    size: int
    events: int
    runs: int
    counted: str


def back_up(alias: str, path: Path, force: bool) -> Written:
    """Back up the database of Django's connection `alias` into `path`."""
    from django.db import connections

    settings_dict = connections[alias].settings_dict
    if connections[alias].vendor == "sqlite":
        source = Path(settings_dict["NAME"])
        check_target(path, sqlite_files(source), force)
        if not source.is_file():
            raise Refused(f"there is no SQLite database at {source} to back up")
        with replaced(path) as out:
            events, runs = copy_sqlite(source, Path(out.name))
        return Written(path.stat().st_size, events, runs, "counted in the copy")
    check_target(path, [], force)
    program = pg_dump()
    if program is None:
        raise Refused(no_pg_dump(alias))
    with replaced(path) as out:
        events, runs = dump_postgres(alias, program, out)
    return Written(path.stat().st_size, events, runs, "counted in the snapshot pg_dump copied")


def sqlite_files(database: Path) -> list[Path]:
    """The live database's files: a backup written over any of them would destroy the store."""
    return [database, *(database.with_name(database.name + end) for end in SQLITE_SIDE_FILES)]


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def live_files(alias: str = "default") -> list[Path]:
    """The files of Django's database `alias` that a file written over would destroy: SQLite's,
    the database first; none of PostgreSQL's, which are its server's to write."""
    from django.db import connections

    connection = connections[alias]
    if connection.vendor != "sqlite":
        return []
    return sqlite_files(Path(connection.settings_dict["NAME"]))


def on_live(path: Path, live: list[Path]) -> str | None:
    """Which of the live database's files `path` names, as a sentence says it ("the live
    database (var/minutes.sqlite3)"), or None. Resolved, so a symbolic link to the database
    (or a path through one) is seen, and compared as files too, for a hard link."""
    for file in live:
        if path.resolve() == file.resolve() or same_file(path, file):
            which = "the live database" if file == live[0] else f"the live database's {file}"
            if file == live[0] and str(path) != str(file):
                which += f" ({file})"
            return which
    return None


def check_target(path: Path, live: list[Path], force: bool) -> None:
    """Refuse a FILE that cannot take a backup, before anything is written."""
    if which := on_live(path, live):  # refused even with --force
        raise Refused(
            f"{path} is {which}: a backup written there would destroy the store, even "
            "with --force; name another file"
        )
    if why := unwritable(path, "backup"):  # a folder, none to write it in, or read-only
        raise Refused(why)
    if path.exists() and not path.is_file():
        raise Refused(f"{path} is {kind_of(path)}: a backup is written to a regular file")
    if path.exists() and not force:
        raise Refused(f"{path} exists: a backup does not replace another unless asked to (--force)")


def copy_sqlite(source: Path, target: Path) -> tuple[int, int]:
    """Copy the database at `source` into the new, empty file `target`, in one step, and check
    the copy; its count of events and of runs."""
    live = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    copy = sqlite3.connect(target)
    try:
        # pages=-1: every page in one step, so in one read transaction of the source: the copy
        # is the database at one moment. Writers go on meanwhile (WAL); with smaller steps a
        # write in between started the copy over.
        live.backup(copy, pages=-1)
        # The copy is one file: what it holds is in it, with no -wal to keep beside it.
        mode = copy.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        if mode != "delete":
            raise Failed(f"the copy of {source} stayed in journal mode {mode!r}")
        verdict = [row[0] for row in copy.execute("PRAGMA integrity_check")]
        if verdict != ["ok"]:
            raise Failed(
                f"the copy of {source} failed SQLite's integrity check: {'; '.join(verdict[:5])}"
            )
        return counted(copy)
    except sqlite3.DatabaseError as exc:  # a page it cannot read, the file gone: no traceback
        raise Failed(f"the copy of {source} failed: {exc}") from None
    finally:
        copy.close()
        live.close()


def counted(copy: sqlite3.Connection) -> tuple[int, int]:
    """The events and the runs the journal holds."""
    try:
        events, runs = copy.execute(
            "SELECT count(*), count(DISTINCT NULLIF(run_id, '')) FROM journal_event"
        ).fetchone()
    except sqlite3.OperationalError as exc:  # no journal_event: not Minutes' database
        raise Refused(f"the database holds no journal ({exc}): is it Minutes'?") from None
    return int(events), int(runs)


# --- PostgreSQL -------------------------------------------------------------------------------


def pg_dump() -> str | None:
    """pg_dump on PATH, else the newest of /usr/lib/postgresql/*/bin (Debian's, not on PATH)."""
    found = shutil.which("pg_dump")
    if found:
        return found
    installed = glob.glob("/usr/lib/postgresql/*/bin/pg_dump")
    return max(installed, key=major_of, default=None)


def major_of(program: str) -> int:
    """The version in /usr/lib/postgresql/VERSION/bin, as a number: 9 is older than 15."""
    found = re.search(r"/postgresql/(\d+)", program)
    return int(found.group(1)) if found else 0


def no_pg_dump(alias: str) -> str:
    """How to get pg_dump, of the server's major version (an older one refuses to dump)."""
    from django.db import connections

    major = connections[alias].pg_version // 10000  # type: ignore[attr-defined]
    return (
        "pg_dump was not found (on PATH, nor in /usr/lib/postgresql/*/bin): install PostgreSQL's "
        f"client tools of the server's major version, {major}: "
        f"`apt-get install postgresql-client-{major}` (or `postgresql-client`, when that is "
        f"version {major})"
    )


# Keys of the connection's OPTIONS that are not libpq's (Django's and psycopg's own), or not for
# pg_dump: `options` holds Minutes' session settings (an idle transaction ended after 30 s, no
# parallel plans) for its own short statements, and a password never goes on a command line.
NOT_FOR_PG_DUMP = {
    "server_side_binding",
    "isolation_level",
    "assume_role",
    "pool",
    "options",
    "password",
}


def pg_dump_call(
    settings_dict: dict[str, Any], program: str, snapshot: str | None = None
) -> tuple[list[str], dict[str, str]]:
    """pg_dump's argv and environment for the database: the connection's host, port, user,
    database and libpq options on the command line (where `ps` shows them to anyone on the
    host), its password in the environment only (PGPASSWORD, which only its user may read)."""
    from psycopg.conninfo import make_conninfo

    options = settings_dict.get("OPTIONS", {})
    conninfo = make_conninfo(
        dbname=settings_dict["NAME"],
        host=settings_dict.get("HOST") or None,
        port=str(settings_dict.get("PORT") or "") or None,
        user=settings_dict.get("USER") or None,
        **{key: str(value) for key, value in options.items() if key not in NOT_FOR_PG_DUMP},
    )
    # --no-password: a missing password fails at once, where pg_dump asked on the terminal.
    argv = [program, "--format=custom", "--no-password", f"--dbname={conninfo}"]
    if snapshot is not None:
        argv.append(f"--snapshot={snapshot}")
    env = dict(os.environ)
    password = settings_dict.get("PASSWORD") or options.get("password")
    if password:
        env["PGPASSWORD"] = str(password)
    return argv, env


def dump_postgres(alias: str, program: str, out: IO[bytes]) -> tuple[int, int]:
    """Run pg_dump into `out` on a snapshot exported by a transaction that counts the events
    and the runs in it: the counts are those of the dump, not of a moment before or after."""
    from django.db import connections, transaction

    from journal_store.models import StoredEvent

    with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        # This transaction waits on pg_dump, idle, for as long as the dump takes.
        cursor.execute("SET LOCAL idle_in_transaction_session_timeout = 0")
        cursor.execute("SELECT pg_export_snapshot()")
        snapshot = cursor.fetchone()[0]
        journal = StoredEvent.objects.using(alias)
        events = journal.count()
        runs = journal.exclude(run_id="").values("run_id").distinct().count()
        argv, env = pg_dump_call(connections[alias].settings_dict, program, snapshot)
        done = subprocess.run(argv, env=env, stdout=out, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        words = masked(done.stderr.decode("utf-8", "replace").strip(), env.get("PGPASSWORD", ""))
        raise Failed(f"pg_dump failed (exit status {done.returncode}): {words}")
    return events, runs


# A password as a connection string gives it: `password=VALUE` (or quoted, 'VAL\'UE') in a
# conninfo, `scheme://user:VALUE@` in a URL.
CONNINFO_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'\"]+)", re.I)
URL_PASSWORD = re.compile(r"(://[^\s:/@]*:)[^\s/@]*(@)")
# Where a word of a message starts and ends: a space, a quote, a bracket, punctuation after it.
WORD_BEFORE, WORD_AFTER = r"(?<![^\s\"'(=:])", r"(?![^\s\"'),.;:@])"


def masked(words: str, password: str) -> str:
    """pg_dump's message with passwords starred: any a conninfo or URL in it gives, and the
    connection's where it stands whole, a word of its own. libpq does not quote a password
    back, but a message is no place to find out. Never inside a longer word: a password "a"
    or "1" would star every such letter or digit (`port 5***32`) where nothing was said of it."""
    words = CONNINFO_PASSWORD.sub(r"\1***", words)
    words = URL_PASSWORD.sub(r"\1***\2", words)
    if not password:
        return words
    return re.sub(WORD_BEFORE + re.escape(password) + WORD_AFTER, "***", words)
