"""The command line's paths name what stands there when it is not what the command wants: a
folder given as a journal was "no journal at" (views) or asked to stop, exit 0, with a stop
file written beside it (interrupt); a file given as --workspaces or --dir was "File exists"
once the run was planned; a pipe given as a journal was "no journal at" too."""

from __future__ import annotations

import os

import pytest

from runtime.cli import main


@pytest.fixture
def folder(tmp_path):
    made = tmp_path / "a-folder"
    made.mkdir()
    return made


def test_a_folder_given_as_a_journal_is_named_and_nothing_is_written(folder, tmp_path, capsys):
    for command in (["views"], ["interrupt"], ["resume"], ["replay"]):
        assert main([*command, str(folder)]) == 2
        assert capsys.readouterr().err == f"error: {folder} is not a journal file: a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder"]  # no a-folder.stop


def test_a_pipe_given_as_a_journal_is_named_not_waited_on(tmp_path, capsys):
    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)
    assert main(["views", str(pipe)]) == 2
    said = capsys.readouterr().err
    assert (
        said
        == f"error: {pipe} is not a journal file: not a regular file (a pipe, a device or a socket)\n"
    )


def test_a_file_given_as_a_folder_is_refused_by_the_flag(tmp_path, capsys):
    file = tmp_path / "notes.txt"
    file.write_text("mine")
    journal = tmp_path / "j.jsonl"
    with pytest.raises(SystemExit) as refused:
        main(["fly", "--team", "solo", "--journal", str(journal), "--workspaces", str(file)])
    assert refused.value.code == 2
    assert f"argument --workspaces: {file} is a file, not a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["zi", "--team", "repo-fix", "--dir", str(file)])
    assert refused.value.code == 2
    assert f"argument --dir: {file} is a file, not a folder" in capsys.readouterr().err
    assert not journal.exists() and file.read_text() == "mine"
