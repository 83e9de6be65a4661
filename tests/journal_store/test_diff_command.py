"""`manage.py diff`: stored runs (and journal files) compared from the command line, with the
exit status of `python -m runtime diff` (0 alike, 1 they differ, 2 refused), and unknown names
refused by name."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from journal_store.models import StoredEvent

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def stored(path, capsys) -> str:
    call_command("import_journal", str(path))
    return capsys.readouterr().out.strip()


def test_a_stored_run_compares_identical_to_its_own_journal(fly_team, capsys):
    flown = fly_team("first-flight")
    run_id = stored(flown.path, capsys)
    call_command("diff", run_id, str(flown.path))  # no SystemExit: identical
    assert "no divergence: the runs took the same 28 steps alike" in capsys.readouterr().out


def test_two_stored_runs_that_part_exit_1_and_name_where(fly_team, capsys):
    a = stored(fly_team("first-flight").path, capsys)
    b = stored(fly_team("reject-loop").path, capsys)
    with pytest.raises(SystemExit) as exit_:
        call_command("diff", a, b, "--json")
    assert exit_.value.code == 1
    body = json.loads(capsys.readouterr().out)
    assert body["identical"] is False
    assert body["divergence"]["label"] == "coder's 1st model answer"


def test_a_name_that_is_neither_a_file_nor_a_stored_run_is_named(fly_team, tmp_path, capsys):
    a = stored(fly_team("first-flight").path, capsys)
    before = StoredEvent.objects.count()
    # Exit status 2, where it was 1: the status of two runs that differ.
    with pytest.raises(CommandError, match="r-nope: neither a journal file nor a run") as refused:
        call_command("diff", a, "r-nope")
    assert refused.value.returncode == 2
    with pytest.raises(CommandError, match="there is no file r-nope") as refused:
        call_command("diff", a, "r-nope", "--run-b", "r-1")
    assert refused.value.returncode == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(CommandError, match=r"empty\.jsonl: the journal holds no run") as refused:
        call_command("diff", str(empty), a)
    assert refused.value.returncode == 2
    assert StoredEvent.objects.count() == before


def test_names_from_a_journal_are_printed_plain(fly_team, tmp_path, capsys):
    """A journal from elsewhere may name an agent with an escape sequence in it: printed raw,
    it recoloured (or cleared) the terminal reading the comparison."""
    flown = fly_team("first-flight")
    other = tmp_path / "other.jsonl"
    other.write_text(flown.path.read_text().replace('"coder"', '"co\\u001b[31mder"'))
    with pytest.raises(SystemExit) as exit_:
        call_command("diff", str(flown.path), str(other))
    assert exit_.value.code == 1
    out = capsys.readouterr().out
    assert "co\\x1b[31mder" in out and "\x1b" not in out


def test_a_name_that_is_both_a_file_here_and_a_stored_run_is_refused(
    fly_team, tmp_path, capsys, monkeypatch
):
    """The file was read in silence, and the stored run of that name never compared."""
    flown = fly_team("first-flight")
    a = stored(flown.path, capsys)
    monkeypatch.chdir(tmp_path)
    (tmp_path / a).write_bytes(fly_team("reject-loop").path.read_bytes())
    with pytest.raises(CommandError) as refused:
        call_command("diff", a, str(flown.path))
    assert refused.value.returncode == 2
    assert str(refused.value) == (
        f"{a} is both a file in this folder and a run in the journal store: name the file as "
        f"./{a}, or run the command from another folder for the stored run"
    )
    with pytest.raises(SystemExit) as exit_:  # the file, named so: reject-loop's, which differs
        call_command("diff", f"./{a}", str(flown.path))
    assert exit_.value.code == 1
