"""`manage.py export_journal RUN -o FILE` refuses a FILE that is the live database or one of
its side files, by any path, as `manage.py backup` does: the export was written beside it and
moved over it, so `-o var/minutes.sqlite3` replaced the whole store with one run's JSONL. The
refusal exits 2, names the file, and leaves the database, its folder and the run as they were.
Another SQLite database (another store, a backup of this one) is refused too: as much lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from journal_store.models import StoredEvent
from tests.journal_store.test_backup_refusals import live, ours, state_of  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def refusal(target: Path | str) -> str:
    with pytest.raises(CommandError) as info:
        call_command("export_journal", "r-1", "-o", str(target))
    assert info.value.returncode == 2
    return str(info.value)


@pytest.mark.parametrize("end", ["", "-wal", "-shm", "-journal"])
def test_the_live_database_and_its_side_files_are_refused(live, end):  # noqa: F811
    before, folder = state_of(live), ours(live)
    target = f"{live}{end}"
    said = refusal(target)
    which = "the live database" if not end else f"the live database's {target}"
    assert said == f"{target} is {which}: an export written there would destroy the store"
    assert state_of(live) == before and ours(live) == folder
    assert StoredEvent.objects.filter(run_id="r-1").count() == 2


def test_a_link_to_the_live_database_is_refused(live, tmp_path):  # noqa: F811
    before = state_of(live)
    link = tmp_path / "run.jsonl"
    link.symlink_to(live)
    said = refusal(link)
    assert (
        said
        == f"{link} is the live database ({live}): an export written there would destroy the store"
    )
    assert state_of(live) == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"] and link.is_symlink()


def test_another_sqlite_database_is_refused_and_left_as_it_was(live, tmp_path):  # noqa: F811
    call_command("backup", str(tmp_path / "backup.sqlite3"))
    kept = (tmp_path / "backup.sqlite3").read_bytes()
    said = refusal(tmp_path / "backup.sqlite3")
    assert said == (
        f"{tmp_path / 'backup.sqlite3'} is an SQLite database: an export written there would "
        "replace it; name another file"
    )
    assert (tmp_path / "backup.sqlite3").read_bytes() == kept
    assert [p.name for p in tmp_path.iterdir()] == ["backup.sqlite3"]
