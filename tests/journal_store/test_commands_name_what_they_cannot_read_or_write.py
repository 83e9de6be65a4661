"""The journal commands on paths they cannot use and files they cannot read: an error naming
the path and what is wrong (a CommandError, no traceback), and nothing half written."""

from __future__ import annotations

import json
import os

import pytest
from django.core.management import CommandError, call_command

from journal_store import transfer
from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

REFERENCE = [
    {"kind": "RunStarted", "agent": "coder", "task": "Make the failing parser test pass."},
    {"kind": "ModelResponded", "agent": "coder", "usage": 120},
    {"kind": "ModelResponded", "agent": "coder", "usage": 80},
]


@pytest.fixture
def run_id(tmp_path, capsys) -> str:
    path = tmp_path / "ref.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in REFERENCE))
    call_command("import_journal", str(path))
    return capsys.readouterr().out.strip()


def test_importing_a_directory_names_it(tmp_path):
    with pytest.raises(CommandError) as info:
        call_command("import_journal", str(tmp_path))
    assert str(info.value) == f"{tmp_path}: Is a directory"


def test_importing_a_pipe_names_it_and_does_not_wait_on_it(tmp_path):
    """Opened, a pipe waits for a writer: the command hung for ever."""
    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)
    with pytest.raises(CommandError) as info:
        call_command("import_journal", str(pipe))
    assert str(info.value) == (
        f"{pipe} is not a journal file: not a regular file (a pipe, a device or a socket)"
    )
    assert info.value.returncode == 2 and StoredEvent.objects.count() == 0


def test_exporting_into_a_folder_that_is_not_there_names_it(run_id, tmp_path):
    out = tmp_path / "no" / "such" / "out.jsonl"
    with pytest.raises(CommandError) as info:
        call_command("export_journal", run_id, "-o", str(out))
    assert str(info.value) == f"{out}: there is no folder {out.parent} to write it in"
    with pytest.raises(CommandError) as info:
        call_command("export_journal", run_id, "-o", str(tmp_path))
    assert str(info.value) == f"{tmp_path} is a folder: name the export's file in it"


def test_an_export_that_fails_midway_leaves_the_file_as_it_was(run_id, tmp_path, monkeypatch):
    """Written beside the file and moved into place when whole: a failure part way (the
    database gone, the disk full) leaves neither half a journal nor a stray part file."""
    out = tmp_path / "out.jsonl"
    out.write_text("the export of yesterday\n")

    def lines_then_fail(run: str, using: str = "default"):
        yield '{"kind": "RunStarted"}\n'
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(transfer, "export_lines", lines_then_fail)
    with pytest.raises(CommandError, match="No space left on device"):
        call_command("export_journal", run_id, "-o", str(out))
    assert out.read_text() == "the export of yesterday\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "ref.jsonl"]
    monkeypatch.undo()
    call_command("export_journal", run_id, "-o", str(out))
    assert len(out.read_text().splitlines()) == len(REFERENCE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "ref.jsonl"]


def test_diff_with_a_corrupt_journal_names_its_line(run_id, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "RunStarted", "agent": "coder", "task": "x"}\n{not json\n{}\n')
    before = StoredEvent.objects.count()
    with pytest.raises(CommandError) as info:
        call_command("diff", str(bad), run_id)
    assert str(info.value).startswith(f"{bad}, line 2: not JSON")
    assert StoredEvent.objects.count() == before


@pytest.mark.parametrize("option", ["--run-a", "--run-b"])
def test_diff_names_the_run_option_given_with_a_stored_run(run_id, option):
    """It said "--run-… names a run inside a journal file" whichever of the two was given."""
    with pytest.raises(CommandError) as info:
        call_command("diff", run_id, run_id, option, "r-1")
    assert str(info.value) == (
        f"{option} names a run inside a journal file; there is no file {run_id}"
    )
    assert info.value.returncode == 2
