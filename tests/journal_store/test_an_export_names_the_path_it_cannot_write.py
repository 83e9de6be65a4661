"""`manage.py export_journal RUN -o FILE` refuses a FILE it cannot write in a sentence saying
why, as `manage.py backup` does, before anything is written: a folder that is not there (it said
only "No such file or directory"), a folder given as the file ("Is a directory"), a file under
another file, a file or a folder read-only to the user ("Operation not permitted"). Each exits
2, as the command's other refusals, and leaves the folder and the file as they were."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from tests.read_only import read_only

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_id(tmp_path, capsys) -> str:
    journal = tmp_path / "ref.jsonl"
    journal.write_text(json.dumps({"kind": "RunStarted", "agent": "coder", "task": "Fix."}) + "\n")
    call_command("import_journal", str(journal))
    journal.unlink()
    return capsys.readouterr().out.strip()


def refusal(run_id: str, out) -> str:
    with pytest.raises(CommandError) as info:
        call_command("export_journal", run_id, "--out", str(out))
    assert info.value.returncode == 2
    return str(info.value)


def listing(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_folder_that_is_not_there_is_named(run_id, tmp_path):
    out = tmp_path / "no" / "such" / "out.jsonl"
    said = refusal(run_id, out)
    assert said == f"{out}: there is no folder {out.parent} to write it in"
    assert listing(tmp_path) == []


def test_a_folder_given_as_the_file_is_named(run_id, tmp_path):
    said = refusal(run_id, tmp_path)
    assert said == f"{tmp_path} is a folder: name the export's file in it"
    assert listing(tmp_path) == []


def test_a_file_given_as_its_folder_is_named(run_id, tmp_path):
    (tmp_path / "notes.txt").write_text("notes\n")
    out = tmp_path / "notes.txt" / "out.jsonl"
    assert refusal(run_id, out) == f"{out}: there is no folder {out.parent} to write it in"
    assert (tmp_path / "notes.txt").read_text() == "notes\n"


def test_a_read_only_file_is_named_and_left_as_it_was(run_id, tmp_path):
    """Written beside it and moved over it, the export replaced a file its user may not
    write (the folder allowed it), or, for root, said "Operation not permitted"."""
    out = tmp_path / "kept.jsonl"
    out.write_text("the export of yesterday\n")
    with read_only(out):
        said = refusal(run_id, out)
    assert said == f"{out} is read-only to this user: name another file, or make it writable"
    assert out.read_text() == "the export of yesterday\n"
    assert listing(tmp_path) == ["kept.jsonl"]


def test_a_read_only_folder_is_named(run_id, tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    with read_only(folder):
        said = refusal(run_id, folder / "out.jsonl")
    assert said == f"{folder / 'out.jsonl'}: this user may not write in the folder {folder}"
    assert listing(folder) == []


def test_a_path_it_can_write_is_written(run_id, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    call_command("export_journal", run_id, "--out", str(out))
    assert json.loads(out.read_text())["kind"] == "RunStarted"
    assert "1 events written to" in capsys.readouterr().err
    call_command("export_journal", run_id, "--out", "/dev/null")  # written as it stands


def test_a_standard_output_that_cannot_be_written_is_said(run_id, monkeypatch):
    """`export_journal RUN > file` on a full disk ended in a traceback, where `-o file` said
    the same failure in a sentence."""
    import errno
    import io
    import sys

    class Full(io.TextIOBase):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sys, "stdout", Full())
    with pytest.raises(CommandError) as info:
        call_command("export_journal", run_id)
    assert str(info.value) == "standard output: No space left on device"
    assert info.value.returncode == 1  # the machine's failure, not the person's input
