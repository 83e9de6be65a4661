"""A manage.py command's refusal of what the person asked (a bad argument, a file that is not
there or cannot be read, a run or a user the store does not hold, an import it refuses) exits 2,
as argparse's refusals of the same commands do and as `python -m runtime` exits for bad input.
They all exited 1, Django's default, which `diff` also gives for runs that differ; what is not
the person's input (a full disk, a model server that is down) still exits 1."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from config.commandline import BAD_INPUT
from journal_store import transfer
from journal_store.models import StoredEvent
from services import local_model

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[1]


def refusal(*argv: str) -> CommandError:
    with pytest.raises(CommandError) as refused:
        call_command(*argv)
    return refused.value


@pytest.mark.parametrize(
    "argv, said",
    [
        (["import_journal", "{tmp}/missing.jsonl"], "no file at {tmp}/missing.jsonl"),
        (["import_journal", "{tmp}"], "{tmp}: Is a directory"),
        (["import_journal", "{tmp}/notjson.jsonl"], "{tmp}/notjson.jsonl: "),
        (["export_journal", "nope"], "no run 'nope' in the journal store"),
        (["export_journal", "nope", "-o", "{tmp}/no/such/out.jsonl"], "no run 'nope'"),
        (["diff", "nope1", "nope2"], "nope1: neither a journal file nor a run"),
        (["diff", "{tmp}/notjson.jsonl", "nope2"], "{tmp}/notjson.jsonl, line 1: not JSON"),
        (["start_run", "--team", "nope"], "--team: 'nope' is no team here"),
        (["start_run", "--json"], "--json says how the run ended, so it goes with --wait"),
        (["start_run", "--timeout", "5"], "--timeout is how long --wait waits, so it goes with"),
        (["start_run", "--key", " "], "--key: "),
        (["start_run", "--team", "solo", "--order", "Z-9"], "works on no orders"),
        # It started a run on a fresh order, as if no order were given.
        (["start_run", "--team", "support-desk", "--order", ""], "--order: an order id is"),
        (["interrupt_run", "nope"], "nope"),
        (["resume_run", "nope"], "nope"),
        (["resume_run", ""], "no run ''"),  # where it said "no run ", as if cut short
        (["interrupt_run", " r-1"], "no run ' r-1'"),
        (["reviewer", "nope"], "no user 'nope'"),
        (["api_token", "nope"], "no user 'nope'"),
        (["supersede_intent", "nope", "--statement", "x", "--reason", "y"], "nope"),
    ],
)
def test_a_refusal_of_what_was_asked_exits_2_with_its_sentence(tmp_path, argv, said):
    (tmp_path / "notjson.jsonl").write_text("{not json\n")
    refused = refusal(*(arg.format(tmp=tmp_path) for arg in argv))
    assert said.format(tmp=tmp_path) in str(refused)
    assert refused.returncode == BAD_INPUT


def test_a_disk_that_fails_an_export_is_no_bad_input_and_exits_1(tmp_path, monkeypatch):
    flat = tmp_path / "flat.jsonl"  # the reference runtime's flat format: one run
    flat.write_text('{"kind": "RunStarted", "agent": "coder", "task": "Fix it."}\n')
    call_command("import_journal", str(flat), stdout=io.StringIO())

    def fail(run: str, using: str = "default"):
        raise OSError(28, "No space left on device")
        yield  # a generator, as export_lines is

    monkeypatch.setattr(transfer, "export_lines", fail)
    [run_id] = StoredEvent.objects.values_list("run_id", flat=True).distinct()
    refused = refusal("export_journal", run_id, "-o", str(tmp_path / "out.jsonl"))
    assert "No space left on device" in str(refused) and refused.returncode == 1


def test_a_model_server_that_is_down_is_no_bad_input_and_exits_1(monkeypatch):
    monkeypatch.setattr(local_model, "unavailable", lambda: "the local model server is down")
    refused = refusal("start_run", "--model", "local")
    assert str(refused) == "the local model server is down" and refused.returncode == 1


@pytest.mark.slow
def test_manage_py_itself_exits_2_on_a_refusal(tmp_path):
    """What a script sees: the sentence on stderr, no traceback, status 2."""
    done = subprocess.run(
        [sys.executable, "manage.py", "import_journal", str(tmp_path / "missing.jsonl")],
        cwd=ROOT,
        env={**os.environ, "MINUTES_DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path}/db"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"CommandError: no file at {tmp_path / 'missing.jsonl'}\n"
