"""`manage.py backup FILE` refuses, exit status 2 and a sentence naming what is wrong, a FILE it
must not write: the live database itself or its -wal/-shm (by any path, a link included, even
with --force), a folder, a folder that is not there, a file or a folder read-only to the user,
another backup without --force, and an unknown --database. Each writes nothing (no part file left in the folder) and leaves the live
database as it was."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from tests.read_only import read_only
from tests.runtime.journal_contract import debit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def live():
    """The suite's SQLite database file, with a run in it."""
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite store")
    DjangoJournal("default").append("run-kept", [debit(), debit()], 0)
    return Path(connection.settings_dict["NAME"])


def state_of(database: Path) -> tuple:
    """What a write would change: the files' sizes and times, and the journal's count."""
    files = [database, Path(f"{database}-wal")]
    stats = [(f.stat().st_size, f.stat().st_mtime_ns) if f.exists() else None for f in files]
    return (*stats, StoredEvent.objects.count())


def refusal(*argv: str) -> str:
    with pytest.raises(CommandError) as info:
        call_command("backup", *argv)
    assert info.value.returncode == 2
    return str(info.value)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def ours(live: Path) -> list[str]:
    """The live database's folder but the other test processes' databases (the suite's var/,
    where their -wal and -shm come and go as they run: a listing once held another's)."""
    other = re.compile(re.escape(live.name.rsplit("_gw", 1)[0]) + r"_gw\d+(-wal|-shm|-journal)?")
    own = {live.name, *(f"{live.name}{end}" for end in ("-wal", "-shm", "-journal"))}
    return [n for n in listing(live.parent) if n in own or not other.fullmatch(n)]


@pytest.mark.parametrize("end", ["", "-wal", "-shm"])
def test_the_live_database_and_its_side_files_are_refused_even_with_force(live, end):
    before, folder = state_of(live), ours(live)
    target = f"{live}{end}"
    said = refusal(target, "--force")
    assert said.startswith(f"{target} is the live database")
    assert "would destroy the store, even with --force" in said
    assert state_of(live) == before and ours(live) == folder


def test_a_link_to_the_live_database_or_another_spelling_of_it_is_refused(live, tmp_path):
    before = state_of(live)
    link = tmp_path / "backup.sqlite3"
    link.symlink_to(live)
    said = refusal(str(link), "--force")
    assert said == (
        f"{link} is the live database ({live}): a backup written there would destroy the "
        "store, even with --force; name another file"
    )
    linked_folder = tmp_path / "var"
    linked_folder.symlink_to(live.parent)
    wal = linked_folder / f"{live.name}-wal"
    assert refusal(str(wal), "--force").startswith(f"{wal} is the live database's {live}-wal")
    roundabout = live.parent / ".." / live.parent.name / live.name
    assert refusal(str(roundabout), "--force").startswith(f"{roundabout} is the live database")
    hard = tmp_path / "hard.sqlite3"
    os.link(live, hard)
    assert refusal(str(hard), "--force").startswith(f"{hard} is the live database")
    assert state_of(live) == before
    assert listing(tmp_path) == ["backup.sqlite3", "hard.sqlite3", "var"]


def test_a_folder_is_refused(live, tmp_path):
    before = state_of(live)
    assert refusal(str(tmp_path)) == f"{tmp_path} is a folder: name the backup's file in it"
    assert state_of(live) == before and listing(tmp_path) == []


def test_a_folder_that_is_not_there_is_refused(live, tmp_path):
    before = state_of(live)
    target = tmp_path / "no" / "such" / "backup.sqlite3"
    assert refusal(str(target)) == f"{target}: there is no folder {target.parent} to write it in"
    assert state_of(live) == before and listing(tmp_path) == []


def test_a_read_only_backup_is_not_replaced_even_with_force(live, tmp_path):
    """Written beside it and moved over it, a backup replaced a file its user may not write,
    or, for root, said only "Operation not permitted"."""
    earlier = tmp_path / "monday.sqlite3"
    earlier.write_bytes(b"Monday's backup")
    with read_only(earlier):
        said = refusal(str(earlier), "--force")
    assert said == f"{earlier} is read-only to this user: name another file, or make it writable"
    assert earlier.read_bytes() == b"Monday's backup" and listing(tmp_path) == ["monday.sqlite3"]


def test_a_read_only_folder_is_refused(live, tmp_path):
    """It said "Permission denied" (or, for root, "Operation not permitted") of FILE, though
    what could not be written was the folder, where the copy is made before it is moved."""
    before = state_of(live)
    with read_only(tmp_path):
        said = refusal(str(tmp_path / "b.sqlite3"))
    assert said == f"{tmp_path / 'b.sqlite3'}: this user may not write in the folder {tmp_path}"
    assert state_of(live) == before and listing(tmp_path) == []


def test_another_backup_is_not_replaced_without_force(live, tmp_path, capsys):
    before = state_of(live)
    earlier = tmp_path / "monday.sqlite3"
    earlier.write_bytes(b"Monday's backup")
    assert refusal(str(earlier)) == (
        f"{earlier} exists: a backup does not replace another unless asked to (--force)"
    )
    assert earlier.read_bytes() == b"Monday's backup" and listing(tmp_path) == ["monday.sqlite3"]
    assert state_of(live) == before
    call_command("backup", str(earlier), "--force")
    assert earlier.read_bytes().startswith(b"SQLite format 3\x00")
    assert listing(tmp_path) == ["monday.sqlite3"]
    assert "2 events of 1 run (counted in the copy)" in capsys.readouterr().err


def test_a_pipe_is_refused_even_with_force(live, tmp_path):
    pipe = tmp_path / "backup.sqlite3"
    os.mkfifo(pipe)
    assert refusal(str(pipe), "--force") == (
        f"{pipe} is not a regular file (a pipe, a device or a socket): "
        "a backup is written to a regular file"
    )
    assert listing(tmp_path) == ["backup.sqlite3"]


def test_an_unknown_database_alias_is_refused(live, tmp_path):
    before = state_of(live)
    said = refusal(str(tmp_path / "b.sqlite3"), "--database", "archive")
    assert said.startswith("--database 'archive': no such database in the settings (they name")
    assert state_of(live) == before and listing(tmp_path) == []
